"""A minimal reader of the MEDDOCAN brat corpus for tests and benchmarks (no dependency on the app).

The corpus lives outside the repository, in ``../shared/datasets/meddocan`` relative to the repository
root; tests that need it skip when it is absent.
"""
from __future__ import annotations

from pathlib import Path

from corpus.types import Document, Span

REPO_ROOT = Path(__file__).resolve().parents[3]
MEDDOCAN_DIR = REPO_ROOT.parent / "shared" / "datasets" / "meddocan"


def read_split(split: str, limit: int | None = None) -> list[Document]:
    """Documents of one split ("train" or "dev"), sorted by name; ``[]`` when the corpus is absent."""
    folder = MEDDOCAN_DIR / split
    if not folder.is_dir():
        return []
    docs = []
    for txt in sorted(folder.glob("*.txt"))[:limit]:
        text = txt.read_text(encoding="utf-8")
        spans = []
        ann = txt.with_suffix(".ann")
        if ann.exists():
            for line in ann.read_text(encoding="utf-8").splitlines():
                if not line.startswith("T"):
                    continue
                _, info, _surface = line.split("\t", 2)
                label, start, end = info.split(" ")[:3]
                spans.append(Span(int(start), int(end), label))
        docs.append(Document(text=text, spans=tuple(sorted(spans)), name=txt.stem))
    return docs
