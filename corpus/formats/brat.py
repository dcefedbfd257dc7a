"""brat standoff: ``NAME.txt`` holds the text, ``NAME.ann`` its annotations, one per line.

Only text-bound lines matter here (``T1<TAB>LABEL START END<TAB>surface``); notes (``#``), attributes,
relations, events and normalisations are skipped.  Offsets count characters of the ``.txt`` exactly as
stored (a byte-order mark or ``\\r`` counts, as in brat itself), so the text is never altered.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from corpus.types import Document, Span

from .errors import FormatError
from .files import (
    Source,
    WriteSummary,
    check_spans_for_writing,
    offset_problem,
    output_names,
    parse_offset,
    sources,
)

__all__ = ["SUFFIXES", "read", "write"]

SUFFIXES = (".txt", ".ann")
_LINE_SHAPE = "ID<TAB>LABEL START END<TAB>TEXT"
_MISSING_SHOWN = 3  # how many texts without their .ann an error names before "and N more"


def read(path: Path, *, text_only: bool = False) -> list[Document]:
    """Documents from a brat folder, or from one ``NAME.txt`` / ``NAME.ann`` (with its partner).

    Every ``.txt`` needs its ``.ann`` (an empty one says "no PHI here"): a missing file must not turn a text
    into gold with no spans.  With ``text_only`` the folder is declared a set of texts to annotate, and a
    ``.txt`` without ``.ann`` is a document without spans.  An ``.ann`` without ``.txt`` is always an error.
    """
    path = Path(path)
    texts: dict[str, Source] = {}
    anns: dict[str, Source] = {}
    if path.is_dir():
        for src in sources(path, SUFFIXES, what="brat .txt and .ann files"):
            (texts if src.path.suffix.lower() == ".txt" else anns)[src.path.stem] = src
    else:
        (src,) = sources(path, SUFFIXES, what="brat files")
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise src.error(None, "is not a brat file (expected NAME.txt or NAME.ann)")
        txt_path, ann_path = path.with_suffix(".txt"), path.with_suffix(".ann")
        if txt_path.is_file():
            texts[path.stem] = Source(txt_path, path.parent)
        if ann_path.is_file():
            anns[path.stem] = Source(ann_path, path.parent)

    orphans = sorted(set(anns) - set(texts))
    if orphans:
        ann = anns[orphans[0]]
        raise ann.error(None, f"has no matching {ann.path.stem}.txt (the text it annotates)")
    if not texts:
        raise FormatError(path.name, None, "contains no .txt files (brat text files expected)")
    if not text_only:
        _check_every_text_has_its_ann(texts, anns)

    docs = []
    for stem in sorted(texts):
        text = texts[stem].read_text(strip_bom=False)
        spans = _read_ann(anns[stem], text) if stem in anns else ()
        docs.append(Document(text=text, spans=spans, name=stem))
    return docs


def _check_every_text_has_its_ann(texts: dict[str, Source], anns: dict[str, Source]) -> None:
    missing = [texts[stem] for stem in sorted(texts) if stem not in anns]
    if not missing:
        return
    first = missing[0]
    others = [src.path.name for src in missing[1:_MISSING_SHOWN]]
    more = len(missing) - 1 - len(others)
    which = ""
    if others:
        listed = ", ".join(others) + (f" and {more} more" if more else "")
        which = f" (nor do {listed}: {len(missing)} of {len(texts)} texts lack their .ann)"
    raise first.error(
        None,
        f"has no {first.path.stem}.ann beside it{which}; a text without its .ann would be imported as gold "
        "with no PHI. Add the .ann (an empty one if the text truly has no PHI), or import the folder as "
        "text only to annotate (import_corpus --unannotated, or \"Text only\" on the import form)",
    )


def _read_ann(src: Source, text: str) -> tuple[Span, ...]:
    content = src.read_text(allow_empty=True)
    n = len(text)
    spans: list[Span] = []
    ids: dict[str, int] = {}
    for lineno, line in enumerate(content.split("\n"), start=1):
        if not line.startswith("T"):
            continue  # blank lines, notes, attributes, relations, events, normalisations
        if line.endswith("\r"):
            line = line[:-1]
        fields = line.split("\t", 2)
        ann_id = fields[0]
        if len(fields) < 3:
            raise src.error(lineno, f"truncated annotation {ann_id}: expected {_LINE_SHAPE}")
        _, type_offsets, surface = fields
        if ann_id in ids:
            raise src.error(lineno, f"duplicate annotation id {ann_id} (also on line {ids[ann_id]})")
        ids[ann_id] = lineno
        if ";" in type_offsets:
            raise src.error(
                lineno,
                f"annotation {ann_id} is discontinuous ({type_offsets.partition(' ')[2]}); "
                "only continuous spans are supported, split it into separate annotations",
            )
        parts = type_offsets.split(" ")
        if len(parts) != 3 or not parts[0]:
            raise src.error(lineno, f"annotation {ann_id}: expected LABEL START END, found {type_offsets!r}")
        label, start_s, end_s = parts
        start, end = parse_offset(start_s), parse_offset(end_s)
        for raw, value in ((start_s, start), (end_s, end)):
            if value is None:
                raise src.error(lineno, f"annotation {ann_id}: offset {raw!r} is not a non-negative integer")
        problem = offset_problem(start, end, n)
        if problem is not None:
            raise src.error(lineno, problem)
        actual = text[start:end]
        # A line cannot hold a line break, so a surface copied from a span that crosses one is written with
        # spaces; accept that spelling and nothing looser.
        if surface != actual and surface != actual.replace("\r", " ").replace("\n", " "):
            raise src.error(
                lineno,
                f"annotation {ann_id} says {surface!r} but the text at {start}-{end} is {actual!r}",
            )
        spans.append(Span(start, end, label))
    spans.sort()
    return tuple(spans)


def write(docs: Iterable[Document], out: Path) -> WriteSummary:
    """``out/NAME.txt`` (the text byte for byte) and ``out/NAME.ann`` (T1, T2, … in span order)."""
    docs = list(docs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    n_spans = 0
    writable_labels: set[str] = set()
    for index, (doc, stem) in enumerate(zip(docs, output_names(docs, out)), start=1):
        spans = check_spans_for_writing(doc, index, out)
        text = doc.text
        lines = []
        for number, span in enumerate(spans, start=1):
            label = span.label
            if label not in writable_labels:
                if any(c.isspace() or c == ";" for c in label):
                    raise FormatError(
                        f"{stem}.ann", None, f"label {label!r} cannot be written in brat (no spaces or ';' in labels)"
                    )
                writable_labels.add(label)
            surface = text[span.start : span.end].replace("\r", " ").replace("\n", " ")
            lines.append(f"T{number}\t{label} {span.start} {span.end}\t{surface}\n")
        txt_path, ann_path = out / f"{stem}.txt", out / f"{stem}.ann"
        txt_path.write_bytes(text.encode("utf-8"))
        ann_path.write_bytes("".join(lines).encode("utf-8"))
        written += (txt_path, ann_path)
        n_spans += len(spans)
    return WriteSummary(tuple(written), len(docs), n_spans)
