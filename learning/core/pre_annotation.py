"""What a model shows an annotator: its spans with a confidence each, and the tokens it labelled non-PHI
but was unsure of ("possible missed PHI")."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from learning.core.bio import OUTSIDE
from learning.core.taggers.base import marginals_to_spans
from learning.core.text import Token

#: A token the model calls O is flagged when its probability of being PHI reaches this.
MISSED_PHI_THRESHOLD = 0.2


def pre_annotations(
    tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str], *,
    missed_threshold: float = MISSED_PHI_THRESHOLD,
) -> dict:
    """``{"spans": [{"start", "end", "label", "confidence"}], "possible_missed": [[start, end, p_phi]]}``.

    A span's confidence is the lowest marginal of its tokens' predicted labels: a span is only as sure as
    its least sure token.
    """
    if len(tokens) == 0:
        return {"spans": [], "possible_missed": []}
    best = marginals.max(axis=1)
    starts = np.array([token.start for token in tokens])
    spans = []
    for span in marginals_to_spans(tokens, marginals, labels):
        first = int(np.searchsorted(starts, span.start))
        last = int(np.searchsorted(starts, span.end, side="left"))
        confidence = float(best[first:max(last, first + 1)].min())
        spans.append({"start": span.start, "end": span.end, "label": span.label,
                      "confidence": round(confidence, 4)})
    o_index = list(labels).index(OUTSIDE)
    p_phi = 1.0 - marginals[:, o_index]
    unsure = np.flatnonzero((marginals.argmax(axis=1) == o_index) & (p_phi >= missed_threshold))
    missed = [[tokens[i].start, tokens[i].end, round(float(p_phi[i]), 4)] for i in unsure.tolist()]
    return {"spans": spans, "possible_missed": missed}
