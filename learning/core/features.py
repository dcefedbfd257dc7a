"""Token features for the CRF (ALGORITHMS.md §6), extracted once per document and kept.

Every feature is a binary *attribute*: a string such as ``"w:nombre"`` (the token), ``"-1:ss:Xx"`` (the
short shape of the previous token) or ``"k:fecha de ingreso"`` (the key of the ``Key: value`` line the
token sits in).  Attribute strings are interned in a :class:`FeatureVocabulary` and a document is kept as
a :class:`DocumentFeatures`: its tokens, its sentences and, per token, the ids of its attributes (a CSR
layout).  From that one representation come

* the attribute-string lists that crfsuite trains and tags on (:meth:`DocumentFeatures.items`), and
* the sparse token x attribute matrix that the fast marginals multiply by a trained model's
  attribute x label weights (:meth:`DocumentFeatures.matrix`).

Extraction depends only on the text and the extractor's configuration, so a :class:`FeatureCache` keyed by
both lets every retrain and every pool scoring after the first reuse the work.

Features per token (neighbours are taken inside the sentence, ``<s>``/``</s>`` beyond its ends):

* lexical, for the token itself: lower-cased form, prefixes and suffixes of 1-4 characters, word shape
  (``Xxxx``, ``dd/dd/dddd``) and short shape (``Xx``, ``d/d/d``), length bucket, orthographic flags
  (capitalised, all caps, lower case, digits, letters and digits mixed, punctuation, has a hyphen/dot),
  regular expressions (date, time, year, phone, e-mail, URL, ID-like, postal code), gazetteer membership;
* the same lexical information, reduced, for neighbours at -2..+2 (form, short shape, flags, suffix and
  gazetteers at -1/+1; form and short shape at -2/+2) and the bigrams of forms around the token;
* context: sentence begin/end, position in the line, and the key of a ``Key: value`` line
  (``Nombre:``, ``NHC:``, ``Fecha de ingreso:``) with the token's distance from the colon.
"""
from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections import OrderedDict
from itertools import chain
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from corpus.text import Token, sentence_bounds, tokenize

__all__ = [
    "FeatureVocabulary",
    "DocumentFeatures",
    "FeatureExtractor",
    "FeatureCache",
    "get_extractor",
    "word_shape",
    "short_shape",
]

# Bump when the features change, so cached extractions and stored models are not mixed up.
FEATURES_VERSION = "crf-features-3"


class FeatureVocabulary:
    """A growing bijection between attribute strings and integer ids."""

    __slots__ = ("index", "strings")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.strings: list[str] = []

    def __len__(self) -> int:
        return len(self.strings)

    def intern(self, attribute: str) -> int:
        i = self.index.get(attribute)
        if i is None:
            i = len(self.strings)
            self.index[attribute] = i
            self.strings.append(attribute)
        return i

    def ids(self, attributes: Sequence[str]) -> tuple[int, ...]:
        return tuple(self.intern(a) for a in attributes)


@dataclass(frozen=True, eq=False)
class DocumentFeatures:
    """One document's tokens, sentences and attribute ids (CSR: token t owns ``indices[indptr[t]:indptr[t+1]]``)."""

    tokens: list[Token]
    sentences: list[tuple[int, int]]
    indptr: np.ndarray  # (n_tokens + 1,) int64
    indices: np.ndarray  # (n_attributes_total,) int32, ids in ``vocabulary``
    vocabulary: FeatureVocabulary

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def matrix(self, n_columns: int | None = None) -> sp.csr_matrix:
        """The binary token x attribute-id matrix."""
        n_columns = len(self.vocabulary) if n_columns is None else n_columns
        data = np.ones(self.indices.shape[0], dtype=np.float64)
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_tokens, n_columns))

    def token_attributes(self, t: int) -> list[str]:
        strings = self.vocabulary.strings
        return [strings[i] for i in self.indices[self.indptr[t] : self.indptr[t + 1]].tolist()]

    def items(self, begin: int, end: int) -> list[list[str]]:
        """crfsuite items (one list of attribute strings per token) for tokens ``[begin, end)``."""
        strings = self.vocabulary.strings
        ptr = self.indptr
        flat = self.indices[ptr[begin] : ptr[end]].tolist()
        base = int(ptr[begin])
        return [[strings[i] for i in flat[ptr[t] - base : ptr[t + 1] - base]] for t in range(begin, end)]

    def sentence_items(self) -> list[list[list[str]]]:
        return [self.items(a, b) for a, b in self.sentences]


# --- lexical helpers -----------------------------------------------------------------------------------

_SHAPE_TABLE: dict[str, str] = {}


def word_shape(text: str, max_run: int = 4) -> str:
    """Letters to X/x, digits to d, other characters kept; runs longer than ``max_run`` are cut."""
    out = []
    last = ""
    run = 0
    for ch in text:
        if ch.isdigit():
            c = "d"
        elif ch.isalpha():
            c = "X" if ch.isupper() else "x"
        else:
            c = ch
        if c == last:
            run += 1
            if run > max_run:
                continue
        else:
            last, run = c, 1
        out.append(c)
    return "".join(out)


def short_shape(text: str) -> str:
    """The word shape with every run collapsed to one character (``Xx``, ``d/d/d``)."""
    out = []
    last = ""
    for ch in text:
        if ch.isdigit():
            c = "d"
        elif ch.isalpha():
            c = "X" if ch.isupper() else "x"
        else:
            c = ch
        if c != last:
            out.append(c)
            last = c
    return "".join(out)


_DATE_RE = re.compile(r"^(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{2}|\d{4})|\d{4}[/.-]\d{1,2}[/.-]\d{1,2})$")
_TIME_RE = re.compile(r"^\d{1,2}:\d{2}(?::\d{2})?$")
_YEAR_RE = re.compile(r"^(?:19|20)\d{2}$")
_PHONE_RE = re.compile(r"^(?:\+\d{1,3}[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){2,4}$|^[6-9]\d{8}$")
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_URL_RE = re.compile(r"^(?:https?://|ftp://|www\.)", re.IGNORECASE)
_POSTAL_RE = re.compile(r"^(?:E-)?(?:0[1-9]|[1-4]\d|5[0-2])\d{3}$")
_ROMAN_RE = re.compile(r"^[IVXLC]+$")


def _length_bucket(n: int) -> str:
    if n <= 4:
        return str(n)
    if n <= 6:
        return "5-6"
    if n <= 9:
        return "7-9"
    return "10+"


def _flags(text: str) -> list[str]:
    flags = []
    has_digit = any(c.isdigit() for c in text)
    has_alpha = any(c.isalpha() for c in text)
    if text.isdigit():
        flags.append("digit")
    elif has_digit and has_alpha:
        flags.append("alnum")
    elif has_digit:
        flags.append("numeric")
    if has_alpha:
        if text.isupper():
            flags.append("upper")
        elif text[0].isupper():
            flags.append("title")
        elif text.islower():
            flags.append("lower")
        else:
            flags.append("mixedcase")
    if not has_alpha and not has_digit:
        flags.append("punct")
    return flags


def _patterns(text: str) -> list[str]:
    out = []
    if not any(c.isdigit() for c in text):
        if "@" in text and _EMAIL_RE.match(text):
            out.append("email")
        if _URL_RE.match(text):
            out.append("url")
        if len(text) > 1 and _ROMAN_RE.match(text):
            out.append("roman")
        return out
    if _DATE_RE.match(text):
        out.append("date")
    if _TIME_RE.match(text):
        out.append("time")
    if _YEAR_RE.match(text):
        out.append("year")
    if _PHONE_RE.match(text):
        out.append("phone")
    if "@" in text and _EMAIL_RE.match(text):
        out.append("email")
    if _URL_RE.match(text):
        out.append("url")
    if _POSTAL_RE.match(text):
        out.append("postal")
    digits = sum(c.isdigit() for c in text)
    if digits >= 5 or (digits >= 2 and any(c.isalpha() for c in text)):
        out.append("idlike")
    out.append(f"nd{min(digits, 12)}")
    return out


def _normalise_gazetteers(gazetteers: Mapping[str, Collection[str]] | None) -> dict[str, tuple[frozenset, frozenset]]:
    """Per gazetteer: (lower-cased one-token entries, lower-cased words of multi-token entries)."""
    out: dict[str, tuple[frozenset, frozenset]] = {}
    for name, entries in (gazetteers or {}).items():
        whole: set[str] = set()
        parts: set[str] = set()
        for entry in entries:
            words = [t.text.lower() for t in tokenize(entry)]
            if len(words) == 1:
                whole.add(words[0])
            else:
                parts.update(w for w in words if any(c.isalnum() for c in w))
        out[str(name)] = (frozenset(whole), frozenset(parts))
    return out


def _gazetteer_key(gaz: dict[str, tuple[frozenset, frozenset]]) -> str:
    h = hashlib.sha1()
    for name in sorted(gaz):
        whole, parts = gaz[name]
        h.update(name.encode())
        h.update(b"\0")
        h.update("\n".join(sorted(whole)).encode())
        h.update(b"\1")
        h.update("\n".join(sorted(parts)).encode())
        h.update(b"\2")
    return h.hexdigest()


# --- the extractor -------------------------------------------------------------------------------------

_BOUNDARY = ("<s>", "</s>")


class FeatureExtractor:
    """Turns texts into :class:`DocumentFeatures`; one instance per configuration.

    ``gazetteers`` maps a list name (``"first_names"``, ``"hospitals"``) to its entries; a token is a
    member when its lower-cased form is an entry (``g:NAME``) or a word of a multi-word entry
    (``gw:NAME``).  Lexical features are computed once per distinct token form and remembered.
    """

    def __init__(self, gazetteers: Mapping[str, Collection[str]] | None = None) -> None:
        self.gazetteers = _normalise_gazetteers(gazetteers)
        self.key = f"{FEATURES_VERSION}:{_gazetteer_key(self.gazetteers)}"
        self.vocabulary = FeatureVocabulary()
        # form -> (own ids, as -1 neighbour, as +1 neighbour, as -2 neighbour, as +2 neighbour, lower form)
        self._lexical: dict[str, tuple] = {}
        self._bigrams: dict[tuple[str, str], tuple[int, int]] = {}
        intern = self.vocabulary.intern
        self._bos = (intern("bos"),)
        self._eos = (intern("eos"),)
        self._line_pos = tuple((intern(f"lp:{p}"),) for p in ("0", "1", "2", "3", "4+"))
        self._line_end = (intern("line_end"),)
        self._key_distance = (-1,) + tuple(intern(f"kd:{d}") for d in ("1", "2", "3", "4+"))
        self._pad = {
            (off, side): (intern(f"{off:+d}:w:{side}"),)
            for off in (-2, -1, 1, 2)
            for side in _BOUNDARY
        }

    # Lexical features ---------------------------------------------------------------------------------
    def lexical_attributes(self, text: str) -> tuple[list[str], list[str], list[str]]:
        """(own attributes, attributes seen from a neighbour at distance 1, at distance 2)."""
        low = text.lower()
        shape = word_shape(text)
        sshape = short_shape(text)
        flags = _flags(text)
        patterns = _patterns(text)
        gaz = []
        for name, (whole, parts) in self.gazetteers.items():
            if low in whole:
                gaz.append(f"g:{name}")
            if low in parts:
                gaz.append(f"gw:{name}")
        own = [f"w:{low}", f"sh:{shape}", f"ss:{sshape}", f"len:{_length_bucket(len(text))}"]
        n = len(low)
        for k in range(1, 5):
            if n >= k:
                own.append(f"p{k}:{low[:k]}")
                own.append(f"s{k}:{low[-k:]}")
        if text[0].isupper() and n > 1 and text[1:].islower():
            own.append(f"wc:{text}")
        own.extend(f"f:{f}" for f in flags)
        own.extend(f"rx:{p}" for p in patterns)
        if "-" in text and n > 1:
            own.append("f:hyphen")
        if "." in text and n > 1:
            own.append("f:dot")
        own.extend(gaz)
        near = [f"w:{low}", f"ss:{sshape}", f"s3:{low[-3:]}"]
        near.extend(f"f:{f}" for f in flags)
        near.extend(f"rx:{p}" for p in patterns if not p.startswith("nd"))
        near.extend(gaz)
        far = [f"w:{low}", f"ss:{sshape}"]
        return own, near, far

    def _lexical_ids(self, text: str) -> tuple:
        entry = self._lexical.get(text)
        if entry is None:
            own, near, far = self.lexical_attributes(text)
            ids = self.vocabulary.ids
            entry = (
                ids(own),
                ids([f"-1:{a}" for a in near]),
                ids([f"+1:{a}" for a in near]),
                ids([f"-2:{a}" for a in far]),
                ids([f"+2:{a}" for a in far]),
                text.lower(),
            )
            self._lexical[text] = entry
        return entry

    def _bigram_ids(self, pair: tuple[str, str]) -> tuple[int, int]:
        """Ids of the bigram of two adjacent forms as seen from the right ("b-") and the left ("b+")."""
        text = f"{pair[0]}|{pair[1]}"
        ids = (self.vocabulary.intern("b-:" + text), self.vocabulary.intern("b+:" + text))
        self._bigrams[pair] = ids
        return ids

    # Documents -----------------------------------------------------------------------------------------
    def extract(self, text: str) -> DocumentFeatures:
        tokens = tokenize(text)
        sentences = sentence_bounds(text, tokens)
        n = len(tokens)
        bigrams = self._bigrams
        lex = [self._lexical_ids(t.text) for t in tokens]
        context = self._line_context(text, tokens)
        pad = self._pad
        start_1 = pad[(-1, "<s>")] + self._bos
        start_2 = pad[(-2, "<s>")]
        end_1 = pad[(1, "</s>")] + self._eos
        end_2 = pad[(2, "</s>")]

        rows: list[tuple[int, ...]] = []
        append = rows.append
        for a, b in sentences:
            # Bigram attribute ids around every boundary of the sentence: "b-" seen from the right-hand
            # token, "b+" from the left-hand one.
            forms = ["<s>"] + [lex[i][5] for i in range(a, b)] + ["</s>"]
            pairs = [bigrams.get(p) or self._bigram_ids(p) for p in zip(forms, forms[1:])]
            left = [p[0] for p in pairs]
            right = [p[1] for p in pairs]
            for i in range(a, b):
                own = lex[i]
                row = own[0]
                row += lex[i - 1][1] if i > a else start_1
                row += lex[i - 2][3] if i - 1 > a else start_2
                row += lex[i + 1][2] if i + 1 < b else end_1
                row += lex[i + 2][4] if i + 2 < b else end_2
                k = i - a
                append(row + (left[k], right[k + 1]) + context[i])
        counts = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.fromiter(chain.from_iterable(rows), dtype=np.int32, count=int(indptr[-1]))
        return DocumentFeatures(tokens, sentences, indptr, indices, self.vocabulary)

    def _line_context(self, text: str, tokens: list[Token]) -> list[tuple[int, ...]]:
        """Per token: position in its line and the key of a ``Key: value`` line."""
        intern = self.vocabulary.intern
        line_pos = self._line_pos
        line_end = self._line_end
        out: list[tuple[int, ...]] = []
        newlines = [m.start() for m in re.finditer("\n", text)]
        line_of = [bisect_right(newlines, t.start) for t in tokens]
        n = len(tokens)
        i = 0
        while i < n:
            j = i
            while j < n and line_of[j] == line_of[i]:
                j += 1
            # tokens[i:j] form one line
            key: str | None = None
            key_ids: tuple[int, ...] = ()
            since_colon = 0
            key_start = i
            for q in range(i, j):
                pos = q - i
                feats = line_pos[pos if pos < 4 else 4]
                if q == j - 1:
                    feats += line_end
                if key is not None:
                    since_colon += 1
                    feats += key_ids[since_colon if since_colon < 4 else 4]
                out.append(feats)
                if tokens[q].text == ":":
                    words = [t.text.lower() for t in tokens[key_start:q] if t.text[0].isalnum()]
                    # After an earlier key on the line, the words before this colon end with the
                    # previous value ("Médico: Ana Gil NºCol:"), so only the last word is the key.
                    width = 3 if key is None else 1
                    key = " ".join(words[-width:]) if words else None
                    if key is not None:
                        common = (intern(f"k:{key}"), intern(f"k1:{words[-1]}"))
                        key_ids = (
                            (),
                            common + (self._key_distance[1], intern(f"kdk:1:{key}")),
                            common + (self._key_distance[2], intern(f"kdk:2:{key}")),
                            common + (self._key_distance[3], intern(f"kdk:3:{key}")),
                            common + (self._key_distance[4],),
                        )
                    since_colon = 0
                    key_start = q + 1
                elif tokens[q].text in ".;" and key is not None and since_colon > 0:
                    # A stop ends the value; a later colon on the line starts a new key.
                    key_start = q + 1
            i = j
        return out


_EXTRACTORS: dict[str, FeatureExtractor] = {}


def get_extractor(gazetteers: Mapping[str, Collection[str]] | None = None) -> FeatureExtractor:
    """The shared extractor for a configuration, so taggers with equal settings share a vocabulary."""
    probe = _gazetteer_key(_normalise_gazetteers(gazetteers))
    key = f"{FEATURES_VERSION}:{probe}"
    extractor = _EXTRACTORS.get(key)
    if extractor is None:
        extractor = FeatureExtractor(gazetteers)
        _EXTRACTORS[key] = extractor
    return extractor


class FeatureCache:
    """Cache of extracted documents, bounded by their total number of tokens, in two segments.

    Documents a tagger is fitted on (``keep=True``: the gold, featurized again at every retrain) live in a
    segment of their own (``max_kept_tokens``) that scoring never evicts: scoring a pool larger than the
    cache cycles through the other segment (``max_tokens``), least recently used first.  A document pushed
    out of the kept segment joins the other one.  Keys are the extractor's configuration key and a hash of the
    text, so an identical text (a document scored again after a retrain, a re-imported duplicate) is
    featurized once.
    """

    def __init__(self, max_tokens: int = 2_000_000, max_kept_tokens: int = 2_000_000) -> None:
        self.max_tokens = max_tokens
        self.max_kept_tokens = max_kept_tokens
        self._items: OrderedDict[tuple[str, str], DocumentFeatures] = OrderedDict()
        self._kept: OrderedDict[tuple[str, str], DocumentFeatures] = OrderedDict()
        self._tokens = 0
        self._kept_tokens = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items) + len(self._kept)

    @staticmethod
    def text_key(text: str) -> str:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()

    def get(self, extractor: FeatureExtractor, text: str, *, keep: bool = False) -> DocumentFeatures:
        key = (extractor.key, self.text_key(text))
        kept = self._kept.get(key)
        if kept is not None and kept.vocabulary is extractor.vocabulary:
            self._kept.move_to_end(key)
            self.hits += 1
            return kept
        found = self._items.get(key)
        if found is not None and found.vocabulary is extractor.vocabulary:
            self.hits += 1
            feats = found
        else:
            self.misses += 1
            feats = extractor.extract(text)
        self._drop(key)
        if keep:
            self._kept[key] = feats
            self._kept_tokens += feats.n_tokens
        else:
            self._items[key] = feats
            self._tokens += feats.n_tokens
        while self._kept_tokens > self.max_kept_tokens and len(self._kept) > 1:
            old_key, old = self._kept.popitem(last=False)
            self._kept_tokens -= old.n_tokens
            self._items[old_key] = old
            self._tokens += old.n_tokens
        while self._tokens > self.max_tokens and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self._tokens -= old.n_tokens
        return feats

    def _drop(self, key: tuple[str, str]) -> None:
        for items, count in ((self._items, "_tokens"), (self._kept, "_kept_tokens")):
            old = items.pop(key, None)
            if old is not None:
                setattr(self, count, getattr(self, count) - old.n_tokens)

    def clear(self) -> None:
        self._items.clear()
        self._kept.clear()
        self._tokens = self._kept_tokens = 0


DEFAULT_CACHE = FeatureCache()
