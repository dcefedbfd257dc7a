"""Corpus file formats, free of Django: read files into :class:`~corpus.types.Document` values,
check their spans, and write documents back out.

The import and export services do the database work around these functions; everything here either
returns plain values or raises :class:`FormatError` with the file and line a person needs to fix.

==========  ======================================================  =================================
format      reads                                                   writes
==========  ======================================================  =================================
txt         ``*.txt`` (text only)                                   ``NAME.txt`` per document
jsonl       ``*.jsonl`` (one document per line)                     ``corpus.jsonl`` or the named file
brat        ``NAME.txt`` + ``NAME.ann`` standoff (every ``.txt``    the same pairs
            needs its ``.ann`` unless read ``text_only``)
conll       ``*.conll`` token/BIO columns (text rebuilt)            ``corpus.conll`` or the named file
i2b2xml     ``*.xml`` with ``<TEXT>`` and ``<TAGS>``                ``NAME.xml`` per document
==========  ======================================================  =================================
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

from corpus.types import Document

from . import brat, conll, i2b2xml, jsonl, txt
from .errors import FormatError, SpanProblem
from .files import MAX_FILE_BYTES, WriteSummary
from .validate import validate_spans

__all__ = [
    "READERS",
    "WRITERS",
    "FORMATS",
    "read_corpus",
    "write_corpus",
    "validate_spans",
    "FormatError",
    "SpanProblem",
    "WriteSummary",
    "MAX_FILE_BYTES",
]

READERS: dict[str, Callable[..., list[Document]]] = {
    "txt": txt.read,
    "jsonl": jsonl.read,
    "brat": brat.read,
    "conll": conll.read,
    "i2b2xml": i2b2xml.read,
}

WRITERS: dict[str, Callable[..., WriteSummary]] = {
    "txt": txt.write,
    "jsonl": jsonl.write,
    "brat": brat.write,
    "conll": conll.write,
    "i2b2xml": i2b2xml.write,
}

FORMATS = tuple(READERS)


def read_corpus(path: Path | str, fmt: str, **options: Any) -> list[Document]:
    """All documents in ``path`` (a file or a folder) read as ``fmt``; raises FormatError on bad input.

    ``options`` go to the reader, e.g. ``text_only=True`` for a brat folder of texts without ``.ann`` files.
    """
    try:
        reader = READERS[fmt]
    except KeyError:
        raise ValueError(f"unknown corpus format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return reader(Path(path), **options)


def write_corpus(docs: Iterable[Document], out: Path | str, fmt: str, **options: Any) -> WriteSummary:
    """Write ``docs`` to ``out`` as ``fmt`` (``options`` go to the writer, e.g. ``root_tag`` for i2b2xml)."""
    try:
        writer = WRITERS[fmt]
    except KeyError:
        raise ValueError(f"unknown corpus format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return writer(docs, Path(out), **options)
