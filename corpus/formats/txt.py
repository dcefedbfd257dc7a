"""Plain UTF-8 text files: one document per file, named by the file stem, no spans."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from corpus.types import Document

from .files import WriteSummary, output_names, sources

__all__ = ["SUFFIXES", "read", "write"]

SUFFIXES = (".txt",)


def read(path: Path) -> list[Document]:
    """Documents from a ``.txt`` file or a folder of them (a leading byte-order mark is dropped)."""
    return [Document(text=src.read_text(), name=src.path.stem) for src in sources(path, SUFFIXES, what="text files")]


def write(docs: Iterable[Document], out: Path) -> WriteSummary:
    """``out/NAME.txt`` per document, the text exactly as stored (spans are not written)."""
    docs = list(docs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for doc, stem in zip(docs, output_names(docs, out)):
        target = out / f"{stem}.txt"
        target.write_bytes(doc.text.encode("utf-8"))
        written.append(target)
    return WriteSummary(tuple(written), len(docs), 0)
