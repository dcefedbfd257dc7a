"""Document-level consistency: a string a model tags as PHI in one place of a record is PHI everywhere in it.

A tagger decides token by token from a window of context, so a record that names its patient in the header
("Apellidos: Ramos Ibañez") may leave the same name untagged three paragraphs later ("la Sra. Ramos"), and an
annotator shown one mention and not the next has to find the others alone. This module takes one record's
decoded spans and returns the spans to show: the model's, with every other mention of the strings it tagged
added, each with a confidence, and every mention of one string under one label.

The rules, and why:

- **Seeds.** Only spans whose confidence reaches ``min_seed_confidence`` are copied: a span the model itself
  finds less likely than not (a recall-bias guess) is shown where it is, but not multiplied across the
  record. The confidence of a span is that of its least sure token (:func:`span_confidences`), as in the
  pre-annotations.
- **Matching.** A seed is its tokens (:func:`corpus.text.tokenize`), compared case-insensitively (Unicode
  case folding, NFC) and only at token boundaries: "ANA GARCÍA" matches "Ana García", "Ana" never matches
  inside "Anabel" or "Mariana". Punctuation tokens must match too ("Schering-Plough" is three tokens).
- **Name parts.** A person's name is repeated in parts — the patient "Blanca Ramos Ibañez" becomes "la Sra.
  Ramos" — so each word of a multi-word span of a person-name label (``name_labels``) is a seed of its own,
  when it is alphabetic, at least ``min_part_chars`` long, not a function word, and written with a capital
  in the span. A word tagged alone (a surname the model found once) is a seed like any span.
- **Capitals.** A one-word alphabetic seed the model only saw capitalised matches only capitalised
  occurrences: surnames and first names are ordinary words in lower case ("Rosa"/"rosa", "León"/"león",
  "Ramos"/"ramos"). A seed the model tagged in lower case ("varón", "esposa") matches any case.
- **Too short or too common to copy.** A key with fewer than ``min_chars`` letters and digits ("M", "H" for
  sex, an initial "J.") is never copied: single characters are everywhere in a record. A key made only of
  digits (and punctuation) with fewer than ``min_digits`` digits is not copied: an age "22" or a house number
  "59" recurs as doses, sizes and counts, while identifiers, postcodes and dates are longer. A key whose
  every word is a function word (``stop_words``: articles, prepositions, pronouns, titles such as "Dr",
  "Sra") or is in ``common_words`` (a project's frequent non-PHI words, when the caller has them) is not
  copied: a tagger that swallows "de" into a span must not spread it.
- **Where a copy goes.** Only over tokens no span covers, or over spans lying wholly inside the copy (a
  longer name absorbs a shorter tagged piece of it); a copy never cuts or overlaps an existing span. Longer
  keys are placed first, so "Ramos Ibañez" is one span, not "Ramos" and "Ibañez". A copied name part and a
  span of the same label separated only by spaces are joined: "Sra. Ramos Ibañez" with both parts copied is
  one name, as the gold standard writes it.
- **One label per string.** The mentions of a key vote with their confidences; the label with the highest
  sum wins (ties: the label first in sorted order) and every mention of the key — copied or the model's own —
  is shown with it. A name part votes with the label of the name it came from.
- **Confidence shown.** A copy is as sure as the surest mention of the winning label it copies, or as the
  model's own probability of that label on its tokens when that is higher; a relabelled model span takes the
  same. Annotators thus see a copy of a sure name as sure, and a copy of a hesitant one as hesitant.

The result is a list of :class:`ShownSpan` sorted by position; ``reason`` says why each is there ("model",
"relabelled", "propagated"), so the pre-annotations can show or count copies apart.
"""
from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Collection, Sequence

import numpy as np

from corpus.bio import OUTSIDE
from corpus.text import Token
from corpus.types import Span

__all__ = [
    "PERSON_NAME_LABELS",
    "STOP_WORDS",
    "ShownSpan",
    "consistent_spans",
    "span_confidences",
]

#: Labels of people's names in the project's schemas (MEDDOCAN, i2b2 2014, HIPAA, Stockholm EPR).
PERSON_NAME_LABELS = frozenset({
    "NOMBRE_SUJETO_ASISTENCIA", "NOMBRE_PERSONAL_SANITARIO", "PATIENT", "DOCTOR", "NAME", "First_Name",
    "Last_Name",
})

#: Spanish and English function words and forms of address: never copied alone, never a name part.
STOP_WORDS = frozenset(
    """
    a al ante bajo con contra de del desde durante e el en entre hacia hasta la las le les lo los mediante
    ni o para pero por que se según sin so sobre su sus tras u un una uno unos unas y ya yo tu te mi me nos
    este esta estos estas ese esa eso aquel aquella como cuando donde más muy no sí si es son fue ha han hay
    dr dra drs dras sr sra sres sras srta don doña d dña dª
    an and as at be by for from he her his in is it its of on or she the their they to was with mr mrs ms
    miss dr prof
    """.split()
)

_REASONS = ("model", "relabelled", "propagated")


@dataclass(frozen=True, slots=True)
class ShownSpan:
    """A span to show, its confidence, and why it is shown: ``"model"`` (decoded as it is),
    ``"relabelled"`` (decoded under another label, reconciled with the string's other mentions) or
    ``"propagated"`` (not decoded here; the same string is PHI elsewhere in the record)."""

    span: Span
    confidence: float
    reason: str = "model"

    @property
    def propagated(self) -> bool:
        return self.reason == "propagated"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def _token_range(starts: np.ndarray, ends: np.ndarray, span: Span) -> tuple[int, int]:
    """Indices [i, j) of the tokens a span overlaps (empty when it covers only whitespace)."""
    first = int(np.searchsorted(ends, span.start, side="right"))
    last = int(np.searchsorted(starts, span.end, side="left"))
    return first, max(first, last)


def span_confidences(
    tokens: Sequence[Token], spans: Sequence[Span], marginals: np.ndarray, labels: Sequence[str]
) -> list[float]:
    """Each span's confidence: the lowest, over its tokens, of the probability of the tag shown there
    (``B-X`` on the first token, ``I-X`` on the others); a span is only as sure as its least sure token.
    A tag missing from ``labels`` has probability 0."""
    m = np.asarray(marginals, dtype=np.float64)
    if m.shape != (len(tokens), len(labels)):
        raise ValueError(f"marginals of shape {m.shape} for {len(tokens)} tokens and {len(labels)} labels")
    index = {label: j for j, label in enumerate(labels)}
    starts = np.array([t.start for t in tokens], dtype=np.int64)
    ends = np.array([t.end for t in tokens], dtype=np.int64)
    out = []
    for span in spans:
        i, j = _token_range(starts, ends, span)
        probabilities = [
            m[t, index[tag]] if tag in index else 0.0
            for t, tag in zip(range(i, j), [f"B-{span.label}"] + [f"I-{span.label}"] * (j - i - 1))
        ]
        out.append(float(min(probabilities)) if probabilities else 0.0)
    return out


@dataclass
class _Key:
    """What the mentions of one folded token sequence say: label votes, best confidence per label, whether
    any mention was written in lower case, whether it may be copied at all."""

    votes: dict[str, float]
    best: dict[str, float]
    lower_case_seen: bool = False
    seeded: bool = False

    def label(self) -> str:
        return min(self.votes, key=lambda label: (-self.votes[label], label))


def consistent_spans(
    tokens: Sequence[Token],
    spans: Sequence[Span],
    *,
    marginals: np.ndarray | None = None,
    labels: Sequence[str] | None = None,
    confidences: Sequence[float] | None = None,
    min_seed_confidence: float = 0.5,
    min_chars: int = 2,
    min_digits: int = 4,
    min_part_chars: int = 3,
    stop_words: Collection[str] = STOP_WORDS,
    common_words: Collection[str] = frozenset(),
    name_labels: Collection[str] = PERSON_NAME_LABELS,
    reconcile_labels: bool = True,
) -> list[ShownSpan]:
    """The spans to show in one record: ``spans`` (decoded from the model, on ``tokens``), their strings'
    other mentions added, every mention of a string under one label (see the module's docstring).

    Confidences come from ``confidences`` (one per span), else from ``marginals`` and ``labels``
    (:func:`span_confidences`), else are 1 for every span; with marginals a copy may also be as sure as the
    model's own probability of it.
    """
    if confidences is not None:
        if len(confidences) != len(spans):
            raise ValueError(f"{len(confidences)} confidences for {len(spans)} spans")
        confidence_of = [float(c) for c in confidences]
    elif marginals is not None:
        if labels is None:
            raise ValueError("marginals need their labels")
        confidence_of = span_confidences(tokens, spans, marginals, labels)
    else:
        confidence_of = [1.0] * len(spans)
    order = sorted(range(len(spans)), key=lambda k: spans[k])
    spans = [spans[k] for k in order]
    confidence_of = [confidence_of[k] for k in order]
    if not tokens:
        return [ShownSpan(s, c) for s, c in zip(spans, confidence_of)]

    folded = [_fold(t.text) for t in tokens]
    starts = np.array([t.start for t in tokens], dtype=np.int64)
    ends = np.array([t.end for t in tokens], dtype=np.int64)
    stop = frozenset(_fold(w) for w in stop_words)
    common = frozenset(_fold(w) for w in common_words)

    def copyable(key: tuple[str, ...]) -> bool:
        text = "".join(key)
        alnum = [c for c in text if c.isalnum()]
        if len(alnum) < min_chars:
            return False
        if all(c.isdigit() for c in alnum) and len(alnum) < min_digits:
            return False
        words = [w for w in key if any(c.isalnum() for c in w)]
        if all(w in stop for w in words):
            return False
        return not (len(words) == 1 and words[0] in common)

    keys: dict[tuple[str, ...], _Key] = {}
    ranges: list[tuple[int, int]] = []

    def vote(key: tuple[str, ...], label: str, confidence: float, lower_case: bool, seed: bool) -> None:
        entry = keys.setdefault(key, _Key(defaultdict(float), defaultdict(float)))
        entry.votes[label] += confidence
        entry.best[label] = max(entry.best[label], confidence)
        entry.lower_case_seen |= lower_case
        entry.seeded |= seed and copyable(key)

    for span, confidence in zip(spans, confidence_of):
        i, j = _token_range(starts, ends, span)
        ranges.append((i, j))
        if i == j:
            continue
        seed = confidence >= min_seed_confidence
        key = tuple(folded[i:j])
        vote(key, span.label, confidence, lower_case=any(tokens[t].text[:1].islower() for t in range(i, j)),
             seed=seed)
        if span.label in name_labels and j - i > 1:
            for t in range(i, j):
                word = tokens[t].text
                if (word.isalpha() and len(word) >= min_part_chars and word[0].isupper()
                        and folded[t] not in stop):
                    vote((folded[t],), span.label, confidence, lower_case=False, seed=seed)

    shown: list[ShownSpan | None] = []
    shown_range: list[tuple[int, int]] = []
    for span, confidence, (i, j) in zip(spans, confidence_of, ranges):
        label, reason = span.label, "model"
        entry = keys.get(tuple(folded[i:j])) if i < j else None
        if reconcile_labels and entry is not None and entry.label() != label:
            label, reason = entry.label(), "relabelled"
            confidence = entry.best[label]
        shown.append(ShownSpan(Span(span.start, span.end, label), confidence, reason))
        shown_range.append((i, j))

    by_first: dict[str, list[int]] = defaultdict(list)
    for t, word in enumerate(folded):
        by_first[word].append(t)

    own_probability = _own_probability(marginals, labels) if marginals is not None and labels is not None else None
    word_copies: set[int] = set()
    ordered = sorted((k for k, e in keys.items() if e.seeded), key=lambda k: (-len(k), k))
    for key in ordered:
        entry = keys[key]
        label = entry.label()
        capitals_only = len(key) == 1 and key[0].isalpha() and not entry.lower_case_seen
        for i in by_first.get(key[0], ()):
            j = i + len(key)
            if j > len(tokens) or tuple(folded[i:j]) != key:
                continue
            if capitals_only and not tokens[i].text[:1].isupper():
                continue
            touched = [k for k, (a, b) in enumerate(shown_range) if shown[k] is not None and a < j and b > i]
            if any(shown_range[k][0] < i or shown_range[k][1] > j for k in touched):
                continue  # would cut or overlap a span
            if any(shown_range[k] == (i, j) for k in touched):
                continue  # already shown here
            confidence = entry.best[label]
            if own_probability is not None:
                confidence = max(confidence, own_probability(i, j, label))
            for k in touched:
                shown[k] = None
            shown.append(ShownSpan(Span(tokens[i].start, tokens[j - 1].end, label), confidence, "propagated"))
            shown_range.append((i, j))
            if len(key) == 1:
                word_copies.add(len(shown) - 1)

    return _join_name_parts(shown, shown_range, word_copies, name_labels)


def _own_probability(marginals: np.ndarray, labels: Sequence[str]):
    m = np.asarray(marginals, dtype=np.float64)
    index = {label: j for j, label in enumerate(labels)}
    if OUTSIDE not in index:
        raise ValueError(f"the label set has no {OUTSIDE!r}: {list(labels)}")

    def probability(i: int, j: int, label: str) -> float:
        tags = [f"B-{label}"] + [f"I-{label}"] * (j - i - 1)
        return float(min(m[t, index[tag]] if tag in index else 0.0 for t, tag in zip(range(i, j), tags)))

    return probability


def _join_name_parts(
    shown: list[ShownSpan | None], shown_range: list[tuple[int, int]], copies: set[int],
    name_labels: Collection[str],
) -> list[ShownSpan]:
    """The live spans in order, a copied one-word name joined with a span of the same name label on the very
    next or previous token (only whitespace lies between tokens): "Ramos" and "Ibañez" copied side by side
    are one name."""
    live = sorted((k for k, s in enumerate(shown) if s is not None), key=lambda k: shown_range[k])
    out: list[ShownSpan] = []
    previous_end = -1
    previous_copy = False
    for k in live:
        current = shown[k]
        i, j = shown_range[k]
        is_copy = k in copies
        if (out and previous_end == i and i > 0 and (is_copy or previous_copy)
                and current.span.label == out[-1].span.label and current.span.label in name_labels):
            left = out[-1]
            out[-1] = ShownSpan(Span(left.span.start, current.span.end, current.span.label),
                                min(left.confidence, current.confidence), "propagated")
            previous_copy = True
        else:
            out.append(current)
            previous_copy = is_copy
        previous_end = j
    return out
