"""What a model shows an annotator: its spans with a confidence each, and the tokens it labelled non-PHI
but was unsure of ("possible missed PHI").

The labels shown are one valid BIO sequence (``learning.core.decoding.decode``), so an entity the model
hesitates over inside is shown as one suggestion, not in pieces, and what annotators see is what the
recall-bias figures score. With a recall bias (ALGORITHMS.md §3: thresholds tuned for F_β) it is decoded
with the biased thresholds, so annotators see more, less sure suggestions; each span's confidence is still
the model's own probability of the labels it shows, so the extra ones look as unsure as they are.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from corpus.bio import OUTSIDE, bio_to_spans
from corpus.span_json import write_span
from corpus.text import Token
from learning.core.decoding import decode

#: A token the model calls O is flagged when its probability of being PHI reaches this.
MISSED_PHI_THRESHOLD = 0.2


def pre_annotations(
    tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str], *,
    missed_threshold: float = MISSED_PHI_THRESHOLD, recall_bias: tuple[float, float] | None = None,
) -> dict:
    """``{"spans": [{"start", "end", "label", "confidence"}], "possible_missed": [[start, end, p_phi]]}``.

    A span's confidence is the lowest probability among its tokens of the label shown on them: a span is
    only as sure as its least sure token. ``recall_bias`` is (τ_main, τ_alt).
    """
    if len(tokens) == 0:
        return {"spans": [], "possible_missed": []}
    chosen = decode(marginals, labels, recall_bias)
    shown = marginals[np.arange(len(tokens)), chosen]
    starts = np.array([token.start for token in tokens])
    spans = []
    for span in bio_to_spans(tokens, [labels[i] for i in chosen.tolist()]):
        first = int(np.searchsorted(starts, span.start))
        last = int(np.searchsorted(starts, span.end, side="left"))
        confidence = float(shown[first:max(last, first + 1)].min())
        spans.append(write_span(span, confidence=round(confidence, 4)))
    o_index = list(labels).index(OUTSIDE)
    p_phi = 1.0 - marginals[:, o_index]
    unsure = np.flatnonzero((chosen == o_index) & (p_phi >= missed_threshold))
    missed = [[tokens[i].start, tokens[i].end, round(float(p_phi[i]), 4)] for i in unsure.tolist()]
    return {"spans": spans, "possible_missed": missed}
