"""Conversion between character spans and BIO tags over tokens.

Tags are ``"O"``, ``"B-TYPE"`` and ``"I-TYPE"``.  A span is *aligned* when its start is some token's start
and its end is some token's end; only aligned spans survive a round trip through tags unchanged.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Iterable, Sequence

from corpus.text import Token, offsets_of
from corpus.types import Span

__all__ = ["OUTSIDE", "spans_to_bio", "token_runs", "bio_to_spans", "label_of", "bio_labels"]

OUTSIDE = "O"


def label_of(tag: str) -> str | None:
    """The entity type of a BIO tag (``"B-NAME"`` -> ``"NAME"``), ``None`` for ``"O"``."""
    if tag == OUTSIDE:
        return None
    return tag[2:]


def bio_labels(types: Iterable[str]) -> list[str]:
    """The full BIO label list for entity ``types``: ``"O"`` first, then ``B-``/``I-`` per type, sorted."""
    out = [OUTSIDE]
    for t in sorted(set(types)):
        out.extend((f"B-{t}", f"I-{t}"))
    return out


def token_runs(tokens: Sequence[Token], spans: Iterable[Span]) -> tuple[list[tuple[int, int, str]], int]:
    """The tokens each span tags, as ``(first, end, label)`` runs (``end`` exclusive) in position order, and the
    number of spans not aligned to token boundaries.

    A misaligned span still tags every token it overlaps, so a span that cuts a token in the middle claims the
    whole token; a span that overlaps no token (only whitespace) tags nothing. Where spans overlap, they are
    taken in position order and a span whose first token an earlier one tags is dropped. Runs therefore never
    overlap: first tokens only grow in position order, so a span whose first token is free finds all its
    tokens free."""
    starts, ends = offsets_of(tokens)
    runs: list[tuple[int, int, str]] = []
    misaligned = 0
    covered = 0  # the token after the last one tagged so far
    for span in sorted(spans):
        # Tokens overlapping [span.start, span.end): token.end > span.start and token.start < span.end.
        first = bisect_right(ends, span.start)
        last = bisect_left(starts, span.end)  # exclusive
        if first >= last:
            misaligned += 1
            continue
        if starts[first] != span.start or ends[last - 1] != span.end:
            misaligned += 1
        if first < covered:
            continue  # overlapping gold spans: the earlier span keeps its tokens
        runs.append((first, last, span.label))
        covered = last
    return runs, misaligned


def spans_to_bio(tokens: Sequence[Token], spans: Iterable[Span]) -> tuple[list[str], int]:
    """BIO tags for ``tokens`` and the number of spans not aligned to token boundaries (:func:`token_runs`:
    the first token of a span gets ``B-``, the others ``I-``), so callers can report how much the tokenization
    distorts the gold standard."""
    runs, misaligned = token_runs(tokens, spans)
    tags = [OUTSIDE] * len(tokens)
    for first, last, label in runs:
        tags[first] = f"B-{label}"
        tags[first + 1:last] = [f"I-{label}"] * (last - first - 1)
    return tags, misaligned


def bio_to_spans(tokens: Sequence[Token], tags: Sequence[str]) -> list[Span]:
    """Character spans from BIO ``tags`` over ``tokens``.

    ``B-X`` starts a span; ``I-X`` continues a span of type X and starts a new one after ``O`` or after a
    span of another type (the lenient IOB reading that taggers' output needs).
    """
    if len(tokens) != len(tags):
        raise ValueError(f"{len(tokens)} tokens but {len(tags)} tags")
    spans: list[Span] = []
    cur_label: str | None = None
    cur_start = cur_end = 0
    for tok, tag in zip(tokens, tags):
        if tag == OUTSIDE:
            if cur_label is not None:
                spans.append(Span(cur_start, cur_end, cur_label))
                cur_label = None
            continue
        prefix, label = tag[:2], tag[2:]
        if prefix not in ("B-", "I-") or not label:
            raise ValueError(f"not a BIO tag: {tag!r}")
        if prefix == "I-" and cur_label == label:
            cur_end = tok.end
            continue
        if cur_label is not None:
            spans.append(Span(cur_start, cur_end, cur_label))
        cur_label, cur_start, cur_end = label, tok.start, tok.end
    if cur_label is not None:
        spans.append(Span(cur_start, cur_end, cur_label))
    return spans
