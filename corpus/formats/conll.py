"""CoNLL BIO columns: one ``TOKEN<TAB>TAG`` line per token, a blank line after each sentence, and
``-DOCSTART-`` lines between documents.

Reading rebuilds a text from the tokens (single spaces between tokens, ``\\n`` between sentences) and puts
the spans at offsets into that text; the original spacing is not in the file, so it cannot come back.
Files with more than two columns are read by their first (token) and last (tag) column.  Tags are BIO;
``I-X`` without a preceding ``X`` opens a span (IOB1).  A span never crosses a sentence boundary.

Writing tokenizes with :func:`corpus.text.tokenize`, splits sentences with
:func:`corpus.text.sentence_bounds` and tags with :func:`corpus.bio.spans_to_bio`, so the
tokens are the ones the taggers see.  Columns are separated by a tab because a token may contain a space
(a phone number written in groups).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from corpus.bio import OUTSIDE, bio_to_spans, spans_to_bio
from corpus.text import Token, sentence_bounds, tokenize
from corpus.types import Document, Span

from .errors import FormatError
from .files import Source, WriteSummary, check_spans_for_writing, output_file, sources

__all__ = ["SUFFIXES", "DOCSTART", "read", "write"]

SUFFIXES = (".conll", ".bio", ".iob", ".iob2")
DOCSTART = "-DOCSTART-"


def read(path: Path) -> list[Document]:
    """Documents from a CoNLL file or a folder of them.

    A file without ``-DOCSTART-`` lines is one document named by its stem; with them, its documents are
    named ``STEM:1``, ``STEM:2``, … in order.
    """
    docs: list[Document] = []
    for src in sources(path, SUFFIXES, what="CoNLL files"):
        docs.extend(_read_file(src))
    return docs


class _DocumentBuilder:
    """Accumulates one document: its sentences as rebuilt text and the spans found in them."""

    __slots__ = ("sentences", "length", "spans")

    def __init__(self) -> None:
        self.sentences: list[str] = []
        self.length = 0  # characters of the text so far, separators included
        self.spans: list[Span] = []

    def add_sentence(self, tokens: list[str], tags: list[str], has_entity: bool) -> None:
        start = self.length + 1 if self.sentences else 0
        sentence = " ".join(tokens)
        if has_entity:
            # Offsets are needed only where there is something to place; most sentences have no entity.
            placed = []
            pos = start
            for token in tokens:
                end = pos + len(token)
                placed.append(Token(token, pos, end))
                pos = end + 1
            self.spans.extend(bio_to_spans(placed, tags))
        self.sentences.append(sentence)
        self.length = start + len(sentence)

    def build(self, name: str) -> Document:
        return Document(text="\n".join(self.sentences), spans=tuple(self.spans), name=name)


def _read_file(src: Source) -> list[Document]:
    content = src.read_text()
    finished: list[_DocumentBuilder] = []
    current = _DocumentBuilder()
    tokens: list[str] = []
    tags: list[str] = []
    has_entity = False
    seen_docstart = False
    # A sentinel blank line closes the last sentence.
    for lineno, line in enumerate(content.split("\n") + [""], start=1):
        if "\t" in line:
            fields = line.rstrip("\t \r").split("\t")
        else:
            # Split on ASCII spaces only: str.split() would also cut tokens at no-break spaces.
            fields = [f for f in line.rstrip("\r").split(" ") if f]
        token = fields[0] if fields else ""
        if not token.strip() and (len(fields) < 2 or not fields[-1].strip()):
            if tokens:
                current.add_sentence(tokens, tags, has_entity)
                tokens, tags, has_entity = [], [], False
            continue
        if token == DOCSTART:
            if tokens:
                current.add_sentence(tokens, tags, has_entity)
                tokens, tags, has_entity = [], [], False
            if current.sentences:
                finished.append(current)
            current = _DocumentBuilder()
            seen_docstart = True
            continue
        if len(fields) < 2:
            raise src.error(lineno, f"expected a token and a tag separated by a tab, found {line.rstrip(chr(13))!r}")
        tag = fields[-1].strip()
        if tag != OUTSIDE:
            if tag[:2] not in ("B-", "I-") or len(tag) < 3:
                raise src.error(lineno, f"tag {tag!r} is not a BIO tag (O, B-TYPE or I-TYPE)")
            has_entity = True
        if not token.strip():
            raise src.error(lineno, "the token is empty")
        tokens.append(token)
        tags.append(tag)
    if current.sentences:
        finished.append(current)
    if not finished:
        raise src.error(None, "contains no tokens")
    stem = src.path.stem
    if not seen_docstart:
        return [finished[0].build(stem)]
    return [b.build(f"{stem}:{k}") for k, b in enumerate(finished, start=1)]


def write(docs: Iterable[Document], out: Path) -> WriteSummary:
    """One ``corpus.conll`` in folder ``out``, or the file ``out`` itself when it ends in ``.conll``.

    With more than one document, each starts with a ``-DOCSTART-`` line.  ``lossy_spans`` in the result
    counts spans that do not come back unchanged: not on token boundaries, overlapping another span, or
    crossing a sentence boundary.
    """
    docs = list(docs)
    target = output_file(out, SUFFIXES, "corpus.conll")
    blocks: list[str] = []
    n_spans = lossy = 0
    for index, doc in enumerate(docs, start=1):
        spans = check_spans_for_writing(doc, index, target)
        tokens = tokenize(doc.text)
        tags, _ = spans_to_bio(tokens, spans)
        lines = [f"{DOCSTART}\t{OUTSIDE}", ""] if len(docs) > 1 else []
        kept: list[Span] = []
        for i, j in sentence_bounds(doc.text, tokens):
            lines.extend(f"{tokens[t].text}\t{tags[t]}" for t in range(i, j))
            lines.append("")
            kept.extend(bio_to_spans(tokens[i:j], tags[i:j]))
        block = "\n".join(lines)
        # Each line must stay one token and one tag; a tab or line break in a label, or one a tokenizer change
        # let into a token, would otherwise corrupt the file without a sound.
        if block.count("\t") != len(tokens) + (len(docs) > 1) or block.count("\n") != len(lines) - 1 or "\r" in block:
            name = doc.name or f"document {index}"
            raise FormatError(target.name, None, f"{name}: a token or label contains a tab or line break")
        blocks.append(block)
        n_spans += len(spans)
        lossy += sum((Counter(spans) - Counter(kept)).values())
    target.write_bytes(("\n".join(blocks) + "\n" if blocks else "").encode("utf-8"))
    return WriteSummary((target,), len(docs), n_spans, lossy)
