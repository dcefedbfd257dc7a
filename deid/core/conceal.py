"""Concealing the PHI of one text (ALGORITHMS.md §4): keep, pseudo, class, mask or remove, per label.

``conceal(text, spans, policy, surrogates)`` returns a :class:`Concealed`: the concealed text, the spans
moved to where their replacements now stand (``concealed.text[s.start:s.end]`` is the replacement of
``s``), and a :class:`ConcealReport` of what was done. It is pure: a service reads a document and its
gold spans, builds ``Surrogates(...).for_document(key)`` and calls it; the export writes the result.

Strategies (:data:`STRATEGIES`):

==========  =======================================================================================
keep        the PHI stays as written (its span still moves with the text around it)
pseudo      a surrogate from :mod:`deid.core.surrogates` ("Eva" -> "Mary")
class       the label in brackets: ``[FECHAS]``
mask        the same length: letters -> ``X``, digits -> ``9``, spaces and separators kept
remove      every sentence holding a PHI of that label is deleted (sentences from
            ``corpus.text.sentence_bounds``); spans inside removed sentences disappear, later ones shift
==========  =======================================================================================

Decisions:

- **Eponyms first.** Spans whose text is an eponym in a medical context ("enfermedad de Parkinson",
  :mod:`deid.core.eponyms`) are dropped before anything else: left as written, not returned, counted in
  ``report.eponyms``. Pass ``eponym_guard=None`` to conceal every span as given.
- **Overlapping and nested spans: the outermost wins.** Spans that overlap (directly or through a chain)
  form one group, concealed as one range: the union of the group, so that no character of any of them
  stays visible. The group takes the label and strategy of its longest member that is not ``keep``
  (ties: the earliest, then the label's name), so a ``keep`` span never uncovers a PHI nested in it; if
  every member is ``keep`` the group is kept. If any member's strategy is ``remove``, the group's
  sentences are removed. The output has one span per group; ``report.merged_overlaps`` counts the
  members merged into another.
- **Sentences to remove** are those a ``remove`` group overlaps. A sentence owns its text and the
  whitespace after it, up to the next sentence (the last one: up to the end of the text), so removing
  it removes its line break too and never glues two sentences. Removal is closed under overlap: a group
  that crosses into a removed sentence has its other sentences removed as well, so no span is cut in
  half. Text before the first sentence (leading whitespace) is never removed.
- **Counts** (``report.counts[label][strategy]``) count input spans by the strategy that concealed
  them: a span merged into a group counts under the group's strategy, a span inside a removed sentence
  under ``remove``. Under pseudo, ``report.fallbacks`` counts surrogates that had to mask the value (a
  date that cannot be read) and ``report.kept`` values kept by design (ages under the bucket, sex words:
  the sex is kept anyway, so its word hides nothing); both are also in ``counts`` under ``pseudo``.
- **Errors a caller can cause** raise :class:`ConcealError` subclasses with a message to act on: a span
  outside the text or empty, a label the policy does not name (a policy may give a ``default``), pseudo
  without surrogates, an unknown strategy.

Default policies (:data:`DEFAULT_POLICIES`, :func:`default_policy`): one per label preset of
``annotator.schemas`` (MEDDOCAN, i2b2-2014, HIPAA-18, Stockholm-EPR), every label ``pseudo``, no default
for other labels. ``policy.with_strategy("mask")`` gives the same labels with another strategy.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from corpus.text import sentence_bounds, tokenize
from corpus.types import Span
from deid.core.eponyms import EponymGuard
from deid.core.surrogates import PRESET_LABEL_KINDS, DocumentSurrogates, kind_for_label, mask

__all__ = [
    "DEFAULT_POLICIES",
    "STRATEGIES",
    "ConcealError",
    "ConcealReport",
    "Concealed",
    "MissingSurrogatesError",
    "Policy",
    "SpanOutOfRangeError",
    "UnknownLabelError",
    "UnknownStrategyError",
    "conceal",
    "default_policy",
]

STRATEGIES = ("keep", "pseudo", "class", "mask", "remove")
_DEFAULT_GUARD = EponymGuard()
_NON_SPACE = re.compile(r"\S")


class ConcealError(ValueError):
    """A concealment request that cannot be carried out as given."""


class UnknownLabelError(ConcealError):
    pass


class UnknownStrategyError(ConcealError):
    pass


class SpanOutOfRangeError(ConcealError):
    pass


class MissingSurrogatesError(ConcealError):
    pass


@dataclass(frozen=True)
class Policy:
    """Label -> strategy; ``default`` for labels not named (``None``: such a label is an error)."""

    strategies: Mapping[str, str]
    default: str | None = None

    def __post_init__(self) -> None:
        for label, strategy in [*self.strategies.items(), *([("(default)", self.default)] if self.default else [])]:
            if strategy not in STRATEGIES:
                raise UnknownStrategyError(
                    f"unknown strategy {strategy!r} for {label}; choose one of {', '.join(STRATEGIES)}"
                )
        object.__setattr__(self, "strategies", MappingProxyType(dict(self.strategies)))

    def strategy_for(self, label: str) -> str:
        strategy = self.strategies.get(label, self.default)
        if strategy is None:
            raise UnknownLabelError(
                f"the concealment policy names no strategy for label {label!r}; add it to the policy or give "
                f"the policy a default"
            )
        return strategy

    def with_strategy(self, strategy: str) -> Policy:
        """The same labels (and default, if any), every one concealed with ``strategy``."""
        return Policy({label: strategy for label in self.strategies}, strategy if self.default else None)


#: The default policy of each label preset: every label pseudo.
DEFAULT_POLICIES: Mapping[str, Policy] = MappingProxyType({
    preset: Policy({label: "pseudo" for label in kinds}) for preset, kinds in PRESET_LABEL_KINDS.items()
})


def default_policy(preset: str) -> Policy:
    """The default policy of a label preset (name case-insensitive)."""
    for name, policy in DEFAULT_POLICIES.items():
        if name.lower() == preset.lower():
            return policy
    raise UnknownLabelError(f"no default policy for preset {preset!r}; choose one of {', '.join(DEFAULT_POLICIES)}")


def _freeze(counts: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(sorted((k, v) for k, v in counts.items() if v)))


@dataclass(frozen=True)
class ConcealReport:
    """What a concealment did; reports of several documents add up with ``+``."""

    counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # label -> strategy -> spans
    fallbacks: Mapping[str, int] = field(default_factory=dict)  # label -> pseudo values masked (unreadable)
    kept: Mapping[str, int] = field(default_factory=dict)  # label -> pseudo values kept by design
    eponyms: Mapping[str, int] = field(default_factory=dict)  # label -> spans left as eponyms
    merged_overlaps: int = 0
    removed_sentences: int = 0

    def __add__(self, other: ConcealReport) -> ConcealReport:
        counts: dict[str, dict[str, int]] = {}
        for report in (self, other):
            for label, by_strategy in report.counts.items():
                for strategy, n in by_strategy.items():
                    counts.setdefault(label, {}).setdefault(strategy, 0)
                    counts[label][strategy] += n

        def add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
            return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}

        return _report(counts, add(self.fallbacks, other.fallbacks), add(self.kept, other.kept),
                       add(self.eponyms, other.eponyms), self.merged_overlaps + other.merged_overlaps,
                       self.removed_sentences + other.removed_sentences)

    def count(self, label: str | None = None, strategy: str | None = None) -> int:
        """Spans concealed, of one label and/or strategy (all when ``None``)."""
        return sum(
            n for lab, by_strategy in self.counts.items() if label in (None, lab)
            for strat, n in by_strategy.items() if strategy in (None, strat)
        )

    def as_dict(self) -> dict:
        """Plain dicts and ints, for JSON (an export's summary, an audit event)."""
        return {
            "counts": {label: dict(by_strategy) for label, by_strategy in self.counts.items()},
            "fallbacks": dict(self.fallbacks),
            "kept": dict(self.kept),
            "eponyms": dict(self.eponyms),
            "merged_overlaps": self.merged_overlaps,
            "removed_sentences": self.removed_sentences,
        }


def _report(counts: Mapping[str, Mapping[str, int]], fallbacks: Mapping[str, int], kept: Mapping[str, int],
            eponyms: Mapping[str, int], merged: int, removed: int) -> ConcealReport:
    return ConcealReport(
        counts=MappingProxyType({label: _freeze(counts[label]) for label in sorted(counts)}),
        fallbacks=_freeze(fallbacks), kept=_freeze(kept), eponyms=_freeze(eponyms),
        merged_overlaps=merged, removed_sentences=removed,
    )


@dataclass(frozen=True)
class Concealed:
    """The concealed text, its spans at their new offsets (one per group of overlapping input spans,
    sorted), the report, and, for each output span, the input range it replaces (``origins``, with the
    same label: the span itself, or the union of a group of overlapping spans)."""

    text: str
    spans: tuple[Span, ...]
    report: ConcealReport
    origins: tuple[Span, ...] = ()


@dataclass
class _Group:
    start: int
    end: int
    members: list[tuple[Span, str]]  # (span, its own strategy)
    label: str = ""
    strategy: str = ""
    removes: bool = False


def _groups(spans: list[tuple[Span, str]]) -> list[_Group]:
    groups: list[_Group] = []
    for span, strategy in sorted(spans, key=lambda item: (item[0].start, -item[0].end, item[0].label)):
        if groups and span.start < groups[-1].end:
            group = groups[-1]
            group.end = max(group.end, span.end)
            group.members.append((span, strategy))
        else:
            groups.append(_Group(span.start, span.end, [(span, strategy)]))
    for group in groups:
        winner, strategy = max(
            group.members,
            key=lambda item: (item[1] != "keep", item[0].end - item[0].start, -item[0].start, item[0].label),
        )
        group.label, group.strategy = winner.label, strategy
        group.removes = any(s == "remove" for _, s in group.members)
    return groups


def _line_blocks(text: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The whole lines that ``ranges`` touch, merged into blocks."""
    blocks: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        if blocks and line_start <= blocks[-1][1] + 1:
            blocks[-1] = (blocks[-1][0], max(blocks[-1][1], line_end))
        else:
            blocks.append((line_start, line_end))
    return blocks


def _sentences(text: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sentences on the lines ``ranges`` touch, each with its own range: from its first character to
    the next sentence's (the last one of the text: to the end).

    A line break always ends a sentence and no token crosses one, so tokenizing only those lines gives
    the sentences that tokenizing the whole text would (and saves most of the work on long texts).
    """
    sentences: list[tuple[int, int]] = []
    for block_start, block_end in _line_blocks(text, ranges):
        chunk = text[block_start:block_end]
        tokens = tokenize(chunk)
        starts = [block_start + tokens[i].start for i, _ in sentence_bounds(chunk, tokens)]
        following = _NON_SPACE.search(text, block_end)
        after = following.start() if following else len(text)
        sentences += [(start, starts[k + 1] if k + 1 < len(starts) else after) for k, start in enumerate(starts)]
    return sentences


def _removed_ranges(text: str, groups: list[_Group]) -> tuple[list[tuple[int, int]], int]:
    """The ranges of text to delete (merged, sorted) and how many sentences they hold."""
    taking = [g for g in groups if g.removes]  # groups whose sentences go
    if not taking:
        return [], 0

    def touched(group: _Group, sentences: list[tuple[int, int]]) -> set[tuple[int, int]]:
        return {(s, e) for s, e in sentences if group.start < e and group.end > s}

    while True:  # a group crossing into a removed sentence takes its other sentences with it
        sentences = _sentences(text, [(g.start, g.end) for g in taking])
        removed = set().union(*(touched(g, sentences) for g in taking))
        joining = [g for g in groups if all(g is not t for t in taking) and touched(g, sentences) & removed]
        if not joining:
            break
        taking += joining
    ranges: list[tuple[int, int]] = []
    for start, end in sorted(removed):
        if ranges and ranges[-1][1] == start:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    # A group reaching outside every sentence (into the whitespace before the first one) that a removed
    # range holds in part, or a remove group in no sentence at all, is deleted whole.
    for group in groups:
        if (group.removes and not touched(group, sentences)) or any(group.start < e and group.end > s
                                                                    for s, e in ranges):
            ranges.append((group.start, group.end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged, len(removed)


def conceal(
    text: str,
    spans: Iterable[Span],
    policy: Policy | Mapping[str, str],
    surrogates: DocumentSurrogates | None = None,
    *,
    eponym_guard: EponymGuard | None = _DEFAULT_GUARD,
) -> Concealed:
    """Conceal the PHI ``spans`` of ``text`` per ``policy`` (see the module notes for the rules)."""
    if not isinstance(policy, Policy):
        policy = Policy(policy)
    spans = list(spans)
    for span in spans:
        if not 0 <= span.start < span.end <= len(text):
            raise SpanOutOfRangeError(
                f"span {span.label} [{span.start}, {span.end}) does not lie inside the text of {len(text)} "
                f"characters (or is empty)"
            )
    eponyms: dict[str, int] = {}
    labelled: list[tuple[Span, str]] = []
    for span in spans:
        if eponym_guard is not None and eponym_guard.is_eponym(text, span):
            eponyms[span.label] = eponyms.get(span.label, 0) + 1
            continue
        labelled.append((span, policy.strategy_for(span.label)))
    groups = _groups(labelled)
    if any(g.strategy == "pseudo" for g in groups):
        if surrogates is None:
            raise MissingSurrogatesError("the pseudo strategy needs surrogates: pass Surrogates(...).for_document(key)")
        surrogates.prepare(
            (text[span.start:span.end], kind_for_label(span.label))
            for g in groups if g.strategy == "pseudo" for span, _ in g.members
        )
    removed, removed_sentences = _removed_ranges(text, groups)

    counts: dict[str, dict[str, int]] = {}
    fallbacks: dict[str, int] = {}
    kept: dict[str, int] = {}

    def count(group: _Group, strategy: str) -> None:
        for span, _ in group.members:
            by_strategy = counts.setdefault(span.label, {})
            by_strategy[strategy] = by_strategy.get(strategy, 0) + 1

    # Ranges of the input in order: removed ranges (group None) are skipped, groups replaced; the text
    # between them is copied.
    events: list[tuple[int, int, _Group | None]] = [(s, e, None) for s, e in removed]
    for group in groups:
        if any(s <= group.start and group.end <= e for s, e in removed):
            count(group, "remove")
        else:
            events.append((group.start, group.end, group))
    events.sort(key=lambda event: (event[0], event[1]))

    out: list[str] = []
    new_spans: list[Span] = []
    origins: list[Span] = []
    position = 0  # in the input
    length = 0  # of the output so far
    for start, end, group in events:
        piece = text[position:start]
        out.append(piece)
        length += len(piece)
        position = end
        if group is None:
            continue
        value = text[start:end]
        if group.strategy == "keep":
            replacement = value
        elif group.strategy == "class":
            replacement = f"[{group.label}]"
        elif group.strategy == "mask":
            replacement = mask(value)
        else:  # pseudo
            assert surrogates is not None
            surrogate = surrogates.replace(value, label=group.label)
            replacement = surrogate.text
            if surrogate.outcome == "masked":
                fallbacks[group.label] = fallbacks.get(group.label, 0) + 1
            elif surrogate.outcome == "kept":
                kept[group.label] = kept.get(group.label, 0) + 1
        count(group, group.strategy)
        out.append(replacement)
        new_spans.append(Span(length, length + len(replacement), group.label))
        origins.append(Span(start, end, group.label))
        length += len(replacement)
    out.append(text[position:])
    merged = sum(len(g.members) - 1 for g in groups)
    report = _report(counts, fallbacks, kept, eponyms, merged, removed_sentences)
    return Concealed("".join(out), tuple(new_spans), report, tuple(origins))
