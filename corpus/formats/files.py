"""File handling shared by every reader and writer: finding the files, the size guard, strict UTF-8, and
the offset checks, so that every format reports the same problem with the same words."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from corpus.types import Document, Span

from .errors import FormatError

__all__ = [
    "MAX_FILE_BYTES",
    "Source",
    "sources",
    "decode_text",
    "offset_problem",
    "parse_offset",
    "output_file",
    "output_names",
    "check_spans_for_writing",
    "WriteSummary",
]

#: Largest single file a reader accepts; bigger uploads are almost always the wrong file (an archive, a
#: database dump) and would hold a worker's memory for nothing.
MAX_FILE_BYTES = 50 * 1024 * 1024

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class WriteSummary:
    """What a writer produced.  ``lossy_spans`` counts spans the format could not carry exactly (in CoNLL:
    spans not on token boundaries, or overlapping another span) so an export can say so."""

    files: tuple[Path, ...]
    documents: int
    spans: int
    lossy_spans: int = 0


class Source:
    """One input file with the name to show for it: relative to the parent of what the user gave, so
    ``read("…/meddocan/dev")`` reports ``dev/NAME.ann`` and ``read("…/NAME.ann")`` reports ``NAME.ann``."""

    __slots__ = ("path", "shown")

    def __init__(self, path: Path, base: Path) -> None:
        self.path = path
        try:
            self.shown = path.relative_to(base).as_posix()
        except ValueError:
            self.shown = path.name

    def error(self, line: int | None, message: str) -> FormatError:
        return FormatError(self.shown, line, message)

    def read_bytes(self, *, allow_empty: bool = False) -> bytes:
        """The file's bytes after the size guard; an empty (or whitespace-only) file is an error unless
        ``allow_empty`` (a brat ``.ann`` with no annotations is legitimately empty)."""
        limit = MAX_FILE_BYTES
        try:
            size = self.path.stat().st_size
        except OSError as exc:
            raise self.error(None, f"cannot be read ({exc.strerror or exc})") from None
        if size > limit:
            raise self.error(
                None, f"is {_megabytes(size)} MB, larger than the {_megabytes(limit)} MB limit for one file"
            )
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise self.error(None, f"cannot be read ({exc.strerror or exc})") from None
        if not allow_empty and not data.strip():
            raise self.error(None, "is empty")
        return data

    def read_text(self, *, allow_empty: bool = False, strip_bom: bool = True) -> str:
        """The file as strict UTF-8 text, line endings untouched (offsets count ``\\r`` too)."""
        text = decode_text(self.read_bytes(allow_empty=allow_empty), self)
        if strip_bom and text.startswith(_BOM):
            text = text[1:]
            if not allow_empty and not text.strip():
                raise self.error(None, "is empty")
        return text


def _megabytes(n: int) -> str:
    value = n / (1024 * 1024)
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def decode_text(data: bytes, source: Source) -> str:
    """``data`` as UTF-8, or a FormatError on the line of the first NUL byte or undecodable byte.

    NUL is valid UTF-8 but never occurs in text; it is what UTF-16 files and binaries are full of."""
    bad = data.find(b"\x00")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start if bad < 0 else min(bad, exc.start)
    if bad >= 0:
        raise source.error(data.count(b"\n", 0, bad) + 1, "is not UTF-8 text (binary file?)")
    return text


def sources(path: Path, suffixes: Iterable[str], *, what: str) -> list[Source]:
    """The files to read for ``path``: the file itself, or the folder's files with one of ``suffixes``
    (not recursive, hidden files such as macOS ``._NAME`` left out), sorted by name."""
    path = Path(path)
    base = path.parent
    suffixes = tuple(s.lower() for s in suffixes)
    if path.is_dir():
        found = sorted(
            (p for p in path.iterdir() if p.suffix.lower() in suffixes and not p.name.startswith(".")),
            key=lambda p: p.name,
        )
        for p in found:
            # An unpacked upload could carry a link to a file elsewhere on the server; never follow it.
            if p.is_symlink():
                raise FormatError(f"{path.name}/{p.name}", None, "is a symbolic link; links are not followed")
        found = [p for p in found if p.is_file()]
        if not found:
            listed = " or ".join(suffixes)
            raise FormatError(path.name, None, f"contains no {listed} files ({what} expected)")
        return [Source(p, base) for p in found]
    if not path.exists():
        raise FormatError(path.name, None, "does not exist")
    return [Source(path, base)]


_DIGITS = re.compile(r"[0-9]+")


def parse_offset(value: str) -> int | None:
    """A character offset written as plain ASCII digits, else ``None`` (``int`` would also accept
    ``" 7"``, ``"+7"``, ``"1_0"`` and non-ASCII digits, none of which a well-formed file contains)."""
    if _DIGITS.fullmatch(value) is None:
        return None
    return int(value)


def offset_problem(start: int, end: int, text_length: int) -> str | None:
    """Why ``[start, end)`` is not a usable span of a text of ``text_length`` characters, or ``None``."""
    if start < 0:
        return f"offset {start} is negative"
    if end > text_length:
        return f"offset {end} is past the end of the text ({text_length} characters)"
    if start >= end:
        return f"empty span: start {start} is not before end {end}"
    return None


# Characters that cannot appear in a file name on common systems, plus the path separators.
_UNSAFE_NAME = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')


def output_names(docs: Iterable[Document], out: Path) -> list[str]:
    """A safe, unique file stem per document: its name with unsafe characters replaced by ``_``, or
    ``doc-00001`` style names for unnamed documents.  Two documents mapping to one stem is an error rather
    than one silently overwriting the other."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for index, doc in enumerate(docs, start=1):
        stem = _UNSAFE_NAME.sub("_", doc.name).strip() if doc.name else ""
        if not stem or stem.startswith("."):
            stem = f"doc-{index:05d}" if not stem else "_" + stem[1:]
        key = stem.lower()  # case-insensitive file systems would merge these
        if key in seen:
            raise FormatError(
                out.name,
                None,
                f"documents {seen[key]} and {index} would both be written as {stem!r}; give them distinct names",
            )
        seen[key] = index
        names.append(stem)
    return names


def output_file(out: Path, suffixes: tuple[str, ...], default_name: str) -> Path:
    """``out`` itself when it names a file with one of ``suffixes``, else ``out/default_name``."""
    out = Path(out)
    if out.suffix.lower() in suffixes and not out.is_dir():
        out.parent.mkdir(parents=True, exist_ok=True)
        return out
    out.mkdir(parents=True, exist_ok=True)
    return out / default_name


def check_spans_for_writing(doc: Document, index: int, out: Path) -> list[Span]:
    """The document's spans sorted by position, or a FormatError if one cannot be written as it is."""
    n = len(doc.text)
    spans = sorted(doc.spans)
    for span in spans:
        problem = offset_problem(span.start, span.end, n)
        if problem is None and not span.label:
            problem = "label is empty"
        if problem is not None:
            name = doc.name or f"document {index}"
            raise FormatError(out.name, None, f"{name}: span {span.start}-{span.end} {span.label!r}: {problem}")
    return spans
