"""What an annotator changed relative to the model's suggestions: the measured costs of the ROI strategy.

Pure functions on span dictionaries ``{"start", "end", "label"}``. Every final span is paired with at most
one suggestion and the other way round, in text order:
- the same offsets and label: accepted, no correction;
- the same offsets, another label: a relabel;
- overlapping with other offsets: a boundary change (and a relabel too when the label differs);
- a final span that overlaps no suggestion: PHI the model missed, added (a false negative fixed);
- a suggestion no final span overlaps: a model span removed (a false positive fixed).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Mapping

from corpus.span_json import read_span


@dataclass(frozen=True)
class Corrections:
    fn_fixes: int = 0
    fp_fixes: int = 0
    relabels: int = 0
    boundary_changes: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _key(span: Mapping) -> tuple[int, int, str]:
    offsets = read_span(span)
    return offsets.start, offsets.end, offsets.label


def count_corrections(suggested: Iterable[Mapping], final: Iterable[Mapping]) -> Corrections:
    suggestions = sorted({_key(span) for span in suggested})
    finals = sorted({_key(span) for span in final})
    exact = set(suggestions) & set(finals)
    open_suggestions = [span for span in suggestions if span not in exact]
    fn_fixes = relabels = boundary_changes = 0
    for start, end, label in (span for span in finals if span not in exact):
        partner = next((s for s in open_suggestions if s[0] < end and start < s[1]), None)
        if partner is None:
            fn_fixes += 1
            continue
        open_suggestions.remove(partner)
        if (partner[0], partner[1]) == (start, end):
            relabels += 1
        else:
            boundary_changes += 1
            relabels += partner[2] != label
    return Corrections(
        fn_fixes=fn_fixes, fp_fixes=len(open_suggestions), relabels=relabels, boundary_changes=boundary_changes,
    )
