"""JSON Lines: one document per line,
``{"name": str, "text": str, "spans": [{"start": int, "end": int, "label": str}], "meta": {...}}``.

``spans``, ``meta`` and ``name`` are optional; a span may also be written ``[start, end, label]``.  The
name is ``name``, else ``id``, else ``meta["id"]``, else ``FILE:LINE``.  Any other top-level field is kept
in ``meta`` (``meta``'s own keys win), so nothing a user put in the file is dropped on import.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from corpus.types import Document, Span

from .errors import FormatError
from .files import (
    Source,
    WriteSummary,
    check_spans_for_writing,
    offset_problem,
    output_file,
    sources,
)

__all__ = ["SUFFIXES", "read", "write"]

SUFFIXES = (".jsonl", ".ndjson")
_KNOWN_FIELDS = frozenset({"text", "spans", "meta", "name", "id"})


def read(path: Path) -> list[Document]:
    """Documents from a ``.jsonl`` file or a folder of them; document names must be unique."""
    docs: list[Document] = []
    first_seen: dict[str, str] = {}
    for src in sources(path, SUFFIXES, what="JSON Lines files"):
        text = src.read_text()
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            doc = _parse_line(line, src, lineno)
            where = f"{src.shown}, line {lineno}"
            if doc.name in first_seen:
                raise src.error(lineno, f"duplicate document name {doc.name!r} (first used at {first_seen[doc.name]})")
            first_seen[doc.name] = where
            docs.append(doc)
    return docs


def _parse_line(line: str, src: Source, lineno: int) -> Document:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise src.error(lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise src.error(lineno, f"expected a JSON object, found {_json_kind(obj)}")

    text = obj.get("text")
    if text is None:
        raise src.error(lineno, 'missing field "text"')
    if not isinstance(text, str):
        raise src.error(lineno, f'field "text" must be a string, found {_json_kind(text)}')
    if not text.strip():
        raise src.error(lineno, 'field "text" is empty')
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # JSON can spell a lone surrogate ("\\ud800") that no UTF-8 file or database column can hold.
        raise src.error(lineno, f'field "text" contains an unpaired surrogate at character {exc.start}') from None

    meta = obj.get("meta", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise src.error(lineno, f'field "meta" must be an object, found {_json_kind(meta)}')
    extra = {k: v for k, v in obj.items() if k not in _KNOWN_FIELDS}
    if extra:
        meta = {**extra, **meta}

    name = _name(obj, meta, src, lineno)
    spans = _parse_spans(obj.get("spans"), len(text), src, lineno)
    return Document(text=text, spans=spans, name=name, meta=meta)


def _name(obj: dict[str, Any], meta: dict[str, Any], src: Source, lineno: int) -> str:
    for field, value in (("name", obj.get("name")), ("id", obj.get("id")), ("meta.id", meta.get("id"))):
        if value is None or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise src.error(lineno, f'field "{field}" must be a string or an integer, found {_json_kind(value)}')
        return str(value)
    return f"{src.path.name}:{lineno}"


def _parse_spans(raw: Any, text_length: int, src: Source, lineno: int) -> tuple[Span, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise src.error(lineno, f'field "spans" must be a list, found {_json_kind(raw)}')
    spans = []
    for number, item in enumerate(raw, start=1):
        if isinstance(item, dict):
            missing = [k for k in ("start", "end", "label") if k not in item]
            if missing:
                raise src.error(lineno, f'span {number}: missing field "{missing[0]}"')
            start, end, label = item["start"], item["end"], item["label"]
        elif isinstance(item, list) and len(item) == 3:
            start, end, label = item
        else:
            shape = '{"start", "end", "label"} or [start, end, label]'
            raise src.error(lineno, f"span {number}: expected {shape}, found {_json_kind(item)}")
        for field, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise src.error(lineno, f'span {number}: "{field}" must be an integer, found {json.dumps(value)}')
        if not isinstance(label, str) or not label:
            raise src.error(lineno, f'span {number}: "label" must be a non-empty string, found {json.dumps(label)}')
        problem = offset_problem(start, end, text_length)
        if problem is not None:
            raise src.error(lineno, f"span {number}: {problem}")
        spans.append(Span(start, end, label))
    spans.sort()
    return tuple(spans)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def write(docs: Iterable[Document], out: Path) -> WriteSummary:
    """One ``corpus.jsonl`` in folder ``out``, or the file ``out`` itself when it ends in ``.jsonl``."""
    target = output_file(out, SUFFIXES, "corpus.jsonl")
    lines = []
    n_docs = n_spans = 0
    for index, doc in enumerate(docs, start=1):
        spans = check_spans_for_writing(doc, index, target)
        record = {
            "name": doc.name,
            "text": doc.text,
            "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in spans],
            "meta": dict(doc.meta),
        }
        try:
            lines.append(json.dumps(record, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            name = doc.name or f"document {index}"
            raise FormatError(target.name, None, f"{name}: meta cannot be written as JSON ({exc})") from None
        n_docs += 1
        n_spans += len(spans)
    # json.dumps escapes "\n" inside strings, so each record is exactly one line; U+2028 stays raw, which is
    # why the reader splits on "\n" only.
    target.write_bytes(("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
    return WriteSummary((target,), n_docs, n_spans)
