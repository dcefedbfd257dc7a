"""What the de-identification page shows: the original and the de-identified text cut into plain and
concealed pieces, side by side."""
from __future__ import annotations

from deid.services.deidentify import Deidentified, FoundSpan


def _segments(text: str, ranges: list[tuple[int, int, FoundSpan]], review_below: float) -> list[dict]:
    segments, position = [], 0
    for start, end, span in sorted(ranges, key=lambda item: (item[0], -item[1])):
        if start < position:
            continue
        if start > position:
            segments.append({"text": text[position:start], "label": None})
        segments.append({
            "text": text[start:end], "label": span.label, "strategy": span.strategy, "confidence": span.confidence,
            "review": span.confidence is not None and span.confidence < review_below,
        })
        position = end
    if position < len(text):
        segments.append({"text": text[position:], "label": None})
    return segments


def side_by_side(*, original: str, result: Deidentified, review_below: float) -> dict:
    """``{"original": segments, "deidentified": segments}``; a segment is ``{"text", "label"}`` plus, for a
    concealed span, its ``strategy``, ``confidence`` and whether it is ``review`` (below the threshold)."""
    return {
        "original": _segments(original, [(s.source_start, s.source_end, s) for s in result.spans], review_below),
        "deidentified": _segments(result.text, [(s.start, s.end, s) for s in result.spans], review_below),
    }
