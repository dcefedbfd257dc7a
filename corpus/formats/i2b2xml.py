"""i2b2-style XML, one document per file, as used by the i2b2/UTHealth and MEDDOCAN releases::

    <ROOT>
      <TEXT><![CDATA[the text]]></TEXT>
      <TAGS>
        <NAME id="T1" start="10" end="15" text="Pedro" TYPE="NOMBRE_SUJETO_ASISTENCIA" comment=""/>
      </TAGS>
    </ROOT>

Every child of ``TAGS`` with ``start`` and ``end`` is a span; its label is the ``TYPE`` attribute, or the
element name when there is none.  The root element may have any name.  Documents with a DTD are refused:
nothing in this format needs one, and refusing it rules out entity-expansion and external-entity tricks.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable
from xml.parsers import expat

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

__all__ = ["SUFFIXES", "DEFAULT_ROOT", "read", "write"]

SUFFIXES = (".xml",)
DEFAULT_ROOT = "DEIDLOOP"


def read(path: Path) -> list[Document]:
    """Documents from an ``.xml`` file or a folder of them, each named by its file stem."""
    return [_read_file(src) for src in sources(path, SUFFIXES, what="i2b2 XML files")]


class _Handler:
    """Collects the text and the tag elements of one document while expat parses it."""

    def __init__(self, src: Source, parser: expat.XMLParserType) -> None:
        self.src = src
        self.parser = parser
        self.depth = 0
        self.in_text = False
        self.in_tags = False
        self.text_parts: list[str] = []
        self.text_line: int | None = None
        self.tags: list[tuple[int, str, dict[str, str]]] = []  # (line, element name, attributes)

    def start(self, name: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth == 2:
            if name == "TEXT":
                if self.text_line is not None:
                    raise self.src.error(
                        self.parser.CurrentLineNumber, f"second <TEXT> element (first on line {self.text_line})"
                    )
                self.in_text = True
                self.text_line = self.parser.CurrentLineNumber
            elif name == "TAGS":
                self.in_tags = True
        elif self.depth == 3 and self.in_tags:
            self.tags.append((self.parser.CurrentLineNumber, name, attrs))
        elif self.in_text:
            raise self.src.error(self.parser.CurrentLineNumber, f"unexpected <{name}> element inside <TEXT>")

    def end(self, name: str) -> None:
        if self.depth == 2:
            self.in_text = self.in_tags = False
        self.depth -= 1

    def characters(self, data: str) -> None:
        if self.in_text:
            self.text_parts.append(data)

    def doctype(self, *args: object) -> None:
        raise self.src.error(self.parser.CurrentLineNumber, "contains a DTD (<!DOCTYPE …>), which is not accepted")


def _read_file(src: Source) -> Document:
    data = src.read_bytes()
    nul = data.find(b"\x00")
    if nul >= 0:
        raise src.error(data.count(b"\n", 0, nul) + 1, "is not UTF-8 text (binary file?)")
    parser = expat.ParserCreate()
    parser.buffer_text = True
    handler = _Handler(src, parser)
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.characters
    parser.StartDoctypeDeclHandler = handler.doctype
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise src.error(exc.lineno, f"invalid XML: {expat.ErrorString(exc.code)} (column {exc.offset + 1})") from None
    if handler.text_line is None:
        raise src.error(None, "has no <TEXT> element")
    text = "".join(handler.text_parts)
    if not text.strip():
        raise src.error(handler.text_line, "the <TEXT> element is empty")
    return Document(text=text, spans=_spans(handler.tags, text, src), name=src.path.stem)


def _spans(tags: list[tuple[int, str, dict[str, str]]], text: str, src: Source) -> tuple[Span, ...]:
    n = len(text)
    spans = []
    for line, element, attrs in tags:
        raw_start, raw_end = attrs.get("start"), attrs.get("end")
        if raw_start is None and raw_end is None:
            continue  # a tag without a position (a document-level tag) is not a span
        what = f"<{element}> {attrs['id']}" if attrs.get("id") else f"<{element}>"
        if raw_start is None or raw_end is None:
            raise src.error(line, f'{what} has no "{"start" if raw_start is None else "end"}" attribute')
        start, end = parse_offset(raw_start), parse_offset(raw_end)
        for raw, value in ((raw_start, start), (raw_end, end)):
            if value is None:
                raise src.error(line, f"{what}: offset {raw!r} is not a non-negative integer")
        problem = offset_problem(start, end, n)
        if problem is not None:
            raise src.error(line, f"{what}: {problem}")
        surface = attrs.get("text")
        if surface is not None:
            actual = text[start:end]
            # An XML parser turns a literal tab or line break in an attribute into a space; a file that did
            # not escape them still means the same span.
            if surface != actual and surface != _ATTRIBUTE_WHITESPACE.sub(" ", actual):
                raise src.error(line, f"{what} says {surface!r} but the text at {start}-{end} is {actual!r}")
        label = attrs.get("TYPE") or element
        spans.append(Span(start, end, label))
    spans.sort()
    return tuple(spans)


_ATTRIBUTE_WHITESPACE = re.compile(r"\r\n|[\t\n\r]")
# Characters XML 1.0 cannot carry at all, not even as a character reference.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# Tab and line breaks as references too: a parser would turn them into spaces inside an attribute.
_ATTR_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}
)


def _cdata(text: str) -> str:
    """``text`` as CDATA that parses back to exactly ``text``: a ``]]>`` inside is split over two
    sections, and ``\\r`` goes out as a character reference because XML parsers normalise line ends."""
    body = text.replace("]]>", "]]]]><![CDATA[>").replace("\r", "]]>&#13;<![CDATA[")
    return f"<![CDATA[{body}]]>"


def write(docs: Iterable[Document], out: Path, *, root_tag: str = DEFAULT_ROOT) -> WriteSummary:
    """``out/NAME.xml`` per document in the shape of the MEDDOCAN / i2b2 files, under ``<root_tag>``.

    Each span is an element named after its label (``TAG`` when the label is not an XML name) with ``id``,
    ``start``, ``end``, ``text``, ``TYPE`` and an empty ``comment``, ids ``T1``, ``T2``, … in span order.
    """
    if _NAME.fullmatch(root_tag) is None:
        raise ValueError(f"root tag {root_tag!r} is not an XML element name")
    docs = list(docs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    n_spans = 0
    for index, (doc, stem) in enumerate(zip(docs, output_names(docs, out)), start=1):
        spans = check_spans_for_writing(doc, index, out)
        text = doc.text
        bad = _NOT_XML.search(text)
        if bad is not None:
            raise FormatError(
                f"{stem}.xml",
                None,
                f"the text has character U+{ord(bad.group()):04X} at offset {bad.start()}, which XML cannot hold",
            )
        lines = [
            "<?xml version='1.0' encoding='UTF-8'?>",
            f"<{root_tag}>",
            f"  <TEXT>{_cdata(text)}</TEXT>",
            "  <TAGS>",
        ]
        for number, span in enumerate(spans, start=1):
            label = span.label
            if _NOT_XML.search(label) is not None:
                raise FormatError(f"{stem}.xml", None, f"label {label!r} has a character XML cannot hold")
            element = label if _NAME.fullmatch(label) and not label.lower().startswith("xml") else "TAG"
            surface = text[span.start : span.end].translate(_ATTR_ESCAPES)
            lines.append(
                f'    <{element} id="T{number}" start="{span.start}" end="{span.end}" '
                f'text="{surface}" TYPE="{label.translate(_ATTR_ESCAPES)}" comment=""/>'
            )
        lines += ["  </TAGS>", f"</{root_tag}>", ""]
        target = out / f"{stem}.xml"
        target.write_bytes("\n".join(lines).encode("utf-8"))
        written.append(target)
        n_spans += len(spans)
    return WriteSummary(tuple(written), len(docs), n_spans)
