"""What a model shows an annotator: its spans with a confidence each, and the tokens it labelled non-PHI
but was unsure of ("possible missed PHI").

The labels shown are one valid BIO sequence (``learning.core.decoding.decode``), so an entity the model
hesitates over inside is shown as one suggestion, not in pieces, and what annotators see is what the
recall-bias figures score. With a recall bias (ALGORITHMS.md §3: thresholds tuned for F_β) it is decoded
with the biased thresholds, so annotators see more, less sure suggestions; each span's confidence is still
the model's own probability of the labels it shows, so the extra ones look as unsure as they are.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Collection, Sequence

import numpy as np

from corpus.bio import OUTSIDE
from corpus.span_json import write_span
from corpus.text import Token, offsets_of
from corpus.types import Span
from learning.core.consistency import consistent_spans
from learning.core.decoding import decode_many
from learning.core.patterns import find, merge

#: A token the model calls O is flagged when its probability of being PHI reaches this.
MISSED_PHI_THRESHOLD = 0.2
#: Changes when what :func:`complete_suggestions` adds changes, so that suggestions completed and stored before
#: (``learning.services.completion``) are completed again.
COMPLETION_VERSION = 1


def pre_annotations(
    tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str], *,
    missed_threshold: float = MISSED_PHI_THRESHOLD, recall_bias: tuple[float, float] | None = None,
) -> dict:
    """``{"spans": [{"start", "end", "label", "confidence"}], "possible_missed": [[start, end, p_phi]]}``.

    A span's confidence is the lowest probability among its tokens of the label shown on them: a span is
    only as sure as its least sure token. ``recall_bias`` is (τ_main, τ_alt).
    """
    return pre_annotations_many([tokens], [marginals], labels, missed_threshold=missed_threshold,
                                recall_bias=recall_bias)[0]


def pre_annotations_many(
    tokens: Sequence[Sequence[Token]], marginals: Sequence[np.ndarray], labels: Sequence[str], *,
    missed_threshold: float = MISSED_PHI_THRESHOLD, recall_bias: tuple[float, float] | None = None,
) -> list[dict]:
    """:func:`pre_annotations` of each document (its tokens and marginals), decoded together
    (``learning.core.decoding.decode_many``)."""
    out = [{"spans": [], "possible_missed": []} for _ in tokens]
    shown = [i for i, document_tokens in enumerate(tokens) if len(document_tokens)]
    chosen = decode_many([marginals[i] for i in shown], labels, recall_bias)
    o_index = list(labels).index(OUTSIDE) if shown else -1
    for i, labelled in zip(shown, chosen):
        out[i] = _suggestions(tokens[i], np.asarray(marginals[i]), labels, labelled, o_index, missed_threshold)
    return out


def _suggestions(
    tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str], chosen: np.ndarray, o_index: int,
    missed_threshold: float,
) -> dict:
    shown = marginals[np.arange(len(tokens)), chosen]
    first, last, kinds = label_runs(chosen, labels)
    # The lowest of ``shown`` over each run of tokens first..last: minima over the segments that start at
    # first, last + 1, first', last' + 1, ..., of which every other one is a run.
    bounds = np.empty(2 * first.shape[0], dtype=np.intp)
    bounds[0::2], bounds[1::2] = first, last + 1
    confidences = np.minimum.reduceat(np.append(shown, 0.0), bounds)[0::2] if bounds.shape[0] else shown[:0]
    starts, ends = offsets_of(tokens)
    spans = [
        write_span(Span(starts[a], ends[b], kind), confidence=round(confidence, 4))
        for a, b, kind, confidence in zip(first.tolist(), last.tolist(), kinds, confidences.tolist())
    ]
    p_phi = 1.0 - marginals[:, o_index]
    unsure = np.flatnonzero((chosen == o_index) & (p_phi >= missed_threshold))
    missed = [[starts[i], ends[i], round(p, 4)] for i, p in zip(unsure.tolist(), p_phi[unsure].tolist())]
    return {"spans": spans, "possible_missed": missed}


def complete_suggestions(
    text: str, tokens: Sequence[Token], suggestions: dict, *, schema_labels: Collection[str],
    language: str | None = None,
) -> dict:
    """A record's pre-annotations (as :func:`pre_annotations` gives them) completed with what the record itself
    says: every mention of a string the model tagged is shown (``learning.core.consistency``), and structured
    PHI that a sure pattern finds is added where the model has nothing (``learning.core.patterns.merge``),
    with confidence 1. A "possible missed" token that a span now covers is no longer flagged.

    Applied where a record is shown or concealed (the hand-out, de-identification), not to every pool record
    at every retrain: it depends on the text only, and costs a few milliseconds a record.
    """
    spans = [Span(item["start"], item["end"], item["label"]) for item in suggestions.get("spans", [])]
    confidences = [float(item.get("confidence") or 0.0) for item in suggestions.get("spans", [])]
    shown = consistent_spans(tokens, spans, confidences=confidences)
    confidence_of = {item.span: item.confidence for item in shown}
    merged = merge([item.span for item in shown], find(text, language, tokens=tokens), schema_labels)
    out: list[dict[str, Any]] = [
        write_span(span, confidence=round(confidence_of.get(span, 1.0), 4)) for span in merged
    ]
    starts = np.array([span.start for span in merged], dtype=np.int64)
    ends = np.array([span.end for span in merged], dtype=np.int64)

    def covered(start: int) -> bool:
        i = int(np.searchsorted(starts, start, side="right")) - 1
        return i >= 0 and start < ends[i]

    missed = [item for item in suggestions.get("possible_missed", []) if not covered(int(item[0]))]
    return {"spans": out, "possible_missed": missed}


def label_runs(indices: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The spans that ``corpus.bio.bio_to_spans`` reads from the tags ``labels[i] for i in indices``, as token
    positions: ``(first token, last token, type)`` of each, in order (without a loop over the tokens)."""
    indices = np.asarray(indices, dtype=np.intp)
    kind_of, inside_of, types = _label_kinds(tuple(labels))
    kind = kind_of[indices]
    if kind.shape[0] and kind.min() < -1:
        raise ValueError(f"not a BIO tag: {labels[int(indices[np.argmax(kind < -1)])]!r}")
    tagged = kind >= 0
    # A tag opens a span unless it is an I-X right after a token of the same type (bio_to_spans's lenient
    # reading); a span ends where the next token neither is tagged nor continues it.
    continues = np.zeros(kind.shape[0], dtype=bool)
    continues[1:] = inside_of[indices[1:]] & (kind[1:] == kind[:-1])
    opens = tagged & ~continues
    closes = tagged.copy()
    closes[:-1] &= ~continues[1:]
    first, last = np.flatnonzero(opens), np.flatnonzero(closes)
    return first, last, [types[k] for k in kind[first].tolist()]


@lru_cache(maxsize=64)
def _label_kinds(labels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per label: the index of its type in the returned list of types (-1 for O, -2 for a tag that is not
    BIO), and whether it is an I- tag."""
    types = sorted({label[2:] for label in labels if label[:2] in ("B-", "I-") and label[2:]})
    index = {name: i for i, name in enumerate(types)}
    kind = np.array([-1 if label == OUTSIDE else index[label[2:]] if label[:2] in ("B-", "I-") and label[2:] else -2
                     for label in labels], dtype=np.intp)
    inside = np.array([label.startswith("I-") for label in labels], dtype=bool)
    kind.flags.writeable = inside.flags.writeable = False
    return kind, inside, types
