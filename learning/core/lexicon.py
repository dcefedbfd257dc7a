"""The gold lexicon: the strings a project's annotators have marked as PHI, fed back to the CRF as features.

A surname, a street, a hospital or a manufacturer annotated in one record is likely PHI where it comes back
in another. :class:`GoldLexicon` keeps every gold span's lower-cased token sequence (up to ``max_tokens``
tokens) with, per label, how many times it was annotated so, and how many times the same token sequence
occurs in the gold texts at all: the share that was annotated says how ambiguous the string is ("madre"
is a relative in some notes and not in others; "Boston Scientific" always an institution).

:meth:`GoldLexicon.attributes` marks the tokens of a text covered by an entry (longest entry first, left
to right) with CRF attributes: the entry's label (its most annotated one), the token's place in it (B or
I) and how often the string was PHI where it occurred (``sure`` ≥ 0.9, ``often`` ≥ 0.5, else ``rare``).

A model fitted on documents whose own spans made the lexicon would learn that the attribute is always
right. So each training document is matched *leaving itself out* (``exclude``): it sees the lexicon of
the other documents, as a new record sees the lexicon of all the gold. The lexicon is made from the gold
at every fit, so it grows with the annotations (:meth:`GoldLexicon.extended` makes it from the last one and
the new documents, walking only those and the documents they change); it is kept on the model and holds PHI
strings, as the model's word attributes already do.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from corpus.bio import token_runs
from corpus.text import Token
from corpus.types import Span

__all__ = ["GoldLexicon", "token_spans"]

#: A letter or a digit (what ``str.isalnum`` accepts): an entry needs one.
_ALNUM = re.compile(r"[^\W_]")
#: Shares of the occurrences that were annotated, from the highest bucket down.
RELIABILITY = ((0.9, "sure"), (0.5, "often"), (0.0, "rare"))


def token_spans(tokens: Sequence[Token], spans: Iterable[Span]) -> list[tuple[int, int, str]]:
    """Gold spans as token positions (first token, token after the last, label), as
    :func:`corpus.bio.spans_to_bio` aligns them: its runs (:func:`corpus.bio.token_runs`), without the tags."""
    return token_runs(tokens, spans)[0]


class GoldLexicon:
    """Gold spans' token sequences, their labels and how often they are PHI where they occur."""

    def __init__(self, max_tokens: int = 6) -> None:
        self.max_tokens = max_tokens
        self.labels: dict[tuple[str, ...], Counter] = {}  # entry -> label -> annotated occurrences
        self.seen: Counter = Counter()  # entry -> occurrences in the gold texts, annotated or not
        # The entries as a tree of words: a node maps a word to the next node; an entry ends at a node that
        # holds it under the key None.
        self._tree: dict = {}
        self._own: list[tuple[dict[tuple[str, ...], Counter], Counter]] = []  # per gold document
        # Per gold document, every entry found in it as (first token, token after the last, entry), by first
        # token and shorter first: matching a gold document leaving itself out reads them instead of the tree.
        self._found: list[list[tuple[int, int, tuple[str, ...]]]] = []
        self._forms: list[Sequence[str]] = []  # per gold document, its forms (for extended)
        # For forms given as ids (features.LowerForms): per id of their list of names, whether an entry starts
        # with that name; made for the list it was last asked with, and extended as the list grows.
        self._first_words: tuple[object, np.ndarray] | None = None
        # (label, reliability) of each entry over all the gold, as matching a new record asks for them: the
        # counts no longer change once the lexicon is made.
        self._judged: dict[tuple[str, ...], tuple[str, str]] = {}

    def __len__(self) -> int:
        return len(self.labels)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_first_words"] = None  # refers to an extractor's list of forms, which stays in its process
        state["_judged"] = {}
        state["_forms"] = []  # like _first_words; and only extending a lexicon reads them
        return state

    def _read(self, forms: Sequence[str]) -> tuple[list[int], Sequence[str]]:
        """The positions in ``forms`` where an entry may start (its first word is there), and the forms as
        strings. Forms given as ids into a list of names (``forms.ids``, ``forms.names``) are looked up all at
        once, each name of the list checked against the entries once."""
        ids = getattr(forms, "ids", None)
        if ids is None:
            tree = self._tree
            return [i for i, form in enumerate(forms) if form in tree], forms
        names = forms.names
        cached = getattr(self, "_first_words", None)  # a lexicon saved before it kept them has none
        starts = cached[1] if cached is not None and cached[0] is names else np.zeros(0, dtype=bool)
        if starts.shape[0] < len(names):
            tree = self._tree
            more = np.fromiter((name in tree for name in names[starts.shape[0]:]), dtype=bool,
                               count=len(names) - starts.shape[0])
            starts = np.concatenate([starts, more])
            self._first_words = (names, starts)
        return np.flatnonzero(starts[ids]).tolist(), [names[i] for i in ids.tolist()]

    @classmethod
    def from_gold(cls, documents: Iterable[tuple[Sequence[str], Iterable[tuple[int, int, str]]]],
                  max_tokens: int = 6) -> "GoldLexicon":
        """A lexicon from gold documents, each given as its lower-cased token forms and its spans as
        (first token, token after the last, label)."""
        lexicon = cls(max_tokens)
        for forms, spans in documents:
            own = lexicon._own_entries(forms, spans)
            lexicon._add(own)
            lexicon._own.append((own, Counter()))
            lexicon._forms.append(forms)
        for (_, seen), forms in zip(lexicon._own, lexicon._forms):
            found = lexicon._walk(forms, seen)
            lexicon.seen.update(seen)
            lexicon._found.append(found)
        return lexicon

    def _own_entries(self, forms: Sequence[str],
                     spans: Iterable[tuple[int, int, str]]) -> dict[tuple[str, ...], Counter]:
        """A gold document's entries: the token sequence of each of its spans, with how often it has each label."""
        own: dict[tuple[str, ...], Counter] = {}
        for first, end, label in spans:
            if 0 < end - first <= self.max_tokens:
                entry = tuple(forms[first:end])
                if _ALNUM.search(" ".join(entry)):
                    counts = own.get(entry)
                    if counts is None:
                        counts = own[entry] = Counter()
                    counts[label] += 1
        return own

    def _add(self, own: dict[tuple[str, ...], Counter], copied: set | None = None,
             copied_nodes: set | None = None) -> None:
        """Add a document's entries to the counts and the tree, in place; or, with ``copied`` (entries) and
        ``copied_nodes`` (nodes of the tree, by ``id``), copying each entry's counts and each node not among
        them before it changes (and adding it there), so that the lexicon they are shared with stays as it was
        (:meth:`extended`)."""
        labels = self.labels
        for entry, counts in own.items():
            total = labels.get(entry)
            if total is None:
                labels[entry] = counts.copy()
                if copied is not None:
                    copied.add(entry)
            else:
                if copied is not None and entry not in copied:
                    total = labels[entry] = total.copy()
                    copied.add(entry)
                for label, n in counts.items():
                    total[label] += n
            node = self._tree
            for word in entry:
                child = node.get(word)
                if child is None:
                    child = node[word] = {}
                    if copied_nodes is not None:
                        copied_nodes.add(id(child))
                elif copied_nodes is not None and id(child) not in copied_nodes:
                    child = node[word] = dict(child)
                    copied_nodes.add(id(child))
                node = child
            node[None] = entry

    def _walk(self, forms: Sequence[str], seen: Counter) -> list[tuple[int, int, tuple[str, ...]]]:
        """Every entry found in ``forms`` as (first token, token after the last, entry), by first token and
        shorter first, each counted in ``seen``."""
        tree = self._tree
        starts, forms = self._read(forms)
        n_forms = len(forms)
        found = []
        for first in starts:
            node, end = tree[forms[first]], first + 1
            while node is not None:  # every entry that starts here, down the tree
                entry = node.get(None)
                if entry is not None:
                    seen[entry] += 1
                    found.append((first, end, entry))
                node = node.get(forms[end]) if end < n_forms else None
                end += 1
        return found

    def extended(self, order: Sequence[int | None],
                 added: Sequence[tuple[Sequence[str], Iterable[tuple[int, int, str]]] | None],
                 ) -> tuple["GoldLexicon", set[int]]:
        """The lexicon :meth:`from_gold` makes from this one's gold documents, each where ``order`` puts it
        (``order[i]``: the index among this one's documents of the new lexicon's document ``i``), with the
        documents of ``added`` where ``order`` says None (``added[i]``: forms and spans, as ``from_gold`` takes
        them), and which of its documents may match otherwise than before (:meth:`attributes` with ``exclude``):
        the added ones, and the earlier ones where an added entry is found or that hold an entry whose counts
        changed. Every earlier document must be in ``order`` once (one gone or changed: make the lexicon anew).

        Only the added documents, and the earlier ones that hold the first word of an entry new to the
        lexicon, are walked; this lexicon is left as it was (what changes is copied), and needs its documents
        (not :meth:`forget_documents`)."""
        if len(getattr(self, "_forms", ())) != len(self._own) or sorted(i for i in order if i is not None) != list(
                range(len(self._own))):
            raise ValueError("every earlier document, once each, and the lexicon's documents not forgotten")
        new = type(self)(self.max_tokens)
        new.labels = dict(self.labels)
        new._tree = dict(self._tree)
        copied: set = set()
        copied_nodes = {id(new._tree)}
        owns = {}
        for i, item in enumerate(added):
            if order[i] is None:
                owns[i] = new._own_entries(*item)
                new._add(owns[i], copied, copied_nodes)
        fresh = type(self)(self.max_tokens)  # the entries new to the lexicon, as a tree of their own
        fresh._add({entry: Counter() for entry in new.labels if entry not in self.labels})
        seen = Counter(self.seen)
        touched = set(copied)  # the entries whose labels changed
        own, found, forms_of, affected = [], [], [], set()
        for i, earlier in enumerate(order):
            if earlier is None:
                forms = added[i][0]
                own_seen = Counter()
                here = new._walk(forms, own_seen)
                seen.update(own_seen)
                touched.update(own_seen)
                own.append((owns[i], own_seen))
                affected.add(i)
            else:
                forms = self._forms[earlier]
                own_i, own_seen = self._own[earlier]
                here = self._found[earlier]
                if fresh.labels and fresh._walk(forms, Counter()):
                    again = Counter()
                    walked = new._walk(forms, again)
                    if walked != here:
                        seen.update(again)
                        seen.subtract(own_seen)
                        touched.update(entry for entry in again if again[entry] != own_seen[entry])
                        here, own_seen = walked, again
                        affected.add(i)
                own.append((own_i, own_seen))
            found.append(here)
            forms_of.append(forms)
        new.seen = +seen  # no entry left at zero
        new._own, new._found, new._forms = own, found, forms_of
        # An earlier document matches otherwise where an entry it holds is judged otherwise from its place:
        # without its own counts, which are the same before and after (it was not walked again).
        differs: dict[tuple, bool] = {}
        for i, here in enumerate(found):
            if i in affected:
                continue
            own_i, own_seen = own[i]
            for _, _, entry in here:
                if entry not in touched:
                    continue
                mine = own_i.get(entry)
                key = (entry, tuple(sorted(mine.items())) if mine else None, own_seen[entry])
                other = differs.get(key)
                if other is None:
                    other = differs[key] = entry not in self.labels or (
                        self._view(entry, mine, own_seen[entry]) != new._view(entry, mine, own_seen[entry]))
                if other:
                    affected.add(i)
                    break
        return new, affected

    def forget_documents(self) -> None:
        """Drop what each gold document added (only matching a training document needs it), so that a model
        keeps the entries and their counts alone."""
        self._own = []
        self._found = []
        self._forms = []

    def without_documents(self) -> "GoldLexicon":
        """This lexicon without its documents (:meth:`forget_documents`), sharing its entries and counts, which
        :meth:`extended` never changes; this one keeps its documents."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.forget_documents()
        return copy

    def _entry(self, entry: tuple[str, ...], exclude: int | None) -> tuple[str, str] | None:
        """(label, reliability) of an entry, without the counts of gold document ``exclude``."""
        if exclude is None:
            judged = self.__dict__.setdefault("_judged", {})  # a lexicon saved before it kept them has none
            hit = judged.get(entry)
            if hit is None:
                hit = judged[entry] = self._judge(self.labels[entry], self.seen[entry])
            return hit
        own, own_seen = self._own[exclude]
        return self._view(entry, own.get(entry), own_seen[entry])

    def _view(self, entry: tuple[str, ...], mine: Counter | None, mine_seen: int) -> tuple[str, str] | None:
        """(label, reliability) of an entry without the counts of one gold document: ``mine`` by label (None
        when it did not annotate it) and ``mine_seen``, the times it holds it; None when only it annotated it."""
        counts = self.labels[entry]
        if mine:
            counts = {label: n - mine[label] for label, n in counts.items() if n > mine[label]}
            if not counts:
                return None
        return self._judge(counts, self.seen[entry] - mine_seen)

    @staticmethod
    def _judge(counts: dict[str, int], seen: int) -> tuple[str, str]:
        """The most annotated label (the first by name of a tie) and how often the string was PHI where seen."""
        label, _ = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        share = sum(counts.values()) / max(seen, 1)
        reliability = next(name for floor, name in RELIABILITY if share >= floor)
        return label, reliability

    def matches(self, forms: Sequence[str], exclude: int | None = None) -> list[tuple[int, int, str, str]]:
        """(first token, token after the last, label, reliability) of the entries found in ``forms``, the
        longest at each place, left to right, not overlapping; ``exclude`` leaves a gold document's own
        counts out (its index in the documents the lexicon was made from: its entries found when the lexicon was
        made are read, and ``forms`` is not walked again)."""
        if exclude is not None and exclude < len(getattr(self, "_found", ())):
            return self._longest(self._found[exclude], exclude)
        found = []
        free = 0  # the first token no match covers yet
        tree = self._tree
        starts, forms = self._read(forms)
        n_forms = len(forms)
        for first in starts:
            if first < free:
                continue
            best = None
            node, end = tree[forms[first]], first + 1
            while True:  # down the tree as far as the words go (without a generator per token)
                entry = node.get(None)
                if entry is not None:
                    hit = self._entry(entry, exclude)
                    if hit is not None:
                        best = (first, end, *hit)
                if end == n_forms:
                    break
                node = node.get(forms[end])
                if node is None:
                    break
                end += 1
            if best is not None:
                found.append(best)
                free = best[1]
        return found

    def _longest(self, found: list[tuple[int, int, tuple[str, ...]]], exclude: int) -> list[tuple[int, int, str, str]]:
        """:meth:`matches` of gold document ``exclude`` from every entry found in it (by first token, shorter
        first): at each place the longest entry left with counts once its own are out, left to right, not
        overlapping."""
        out = []
        free = 0
        i, n = 0, len(found)
        while i < n:
            first = found[i][0]
            best = None
            while i < n and found[i][0] == first:
                if first >= free:
                    hit = self._entry(found[i][2], exclude)
                    if hit is not None:
                        best = (first, found[i][1], *hit)
                i += 1
            if best is not None:
                out.append(best)
                free = best[1]
        return out

    def attributes(self, forms: Sequence[str], exclude: int | None = None) -> dict[int, tuple[str, ...]]:
        """CRF attributes of the tokens an entry covers, by token index."""
        out: dict[int, tuple[str, ...]] = {}
        for first, end, label, reliability in self.matches(forms, exclude):
            out[first] = _attributes(label, "B", reliability)
            for t in range(first + 1, end):
                out[t] = _attributes(label, "I", reliability)
        return out


@lru_cache(maxsize=None)
def _attributes(label: str, place: str, reliability: str) -> tuple[str, ...]:
    """The attribute strings of a token an entry covers, made once each."""
    return f"lx:{label}", f"lx:{label}:{place}", f"lx:{label}:{reliability}"
