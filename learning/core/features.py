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
  regular expressions (date, time, year, phone, e-mail, URL, ID-like, postal code), gazetteer membership,
  word class (``learning.core.word_classes``: kinship terms);
* the same lexical information, reduced, for neighbours at -2..+2 (form, short shape, flags, suffix,
  gazetteers and word class at -1/+1; form and short shape at -2/+2) and the bigrams of forms around the token;
* context: sentence begin/end, position in the line, the key of a ``Key: value`` line
  (``Nombre:``, ``NHC:``, ``Fecha de ingreso:``) with the token's distance from the colon, and whether the
  token is inside parentheses on its line, with its comma-separated slot there: a drug's or device's maker is
  named in them ("(Gevramycin 40 mg inyectable, Schering-Plough, Madrid)", slot 1) further from the opening
  parenthesis than the -2..+2 window sees. On MEDDOCAN dev it leaves 6.2 % of the institutions' tokens
  unshown instead of 8.6 % (``bench/leakage.py``).
"""
from __future__ import annotations

import hashlib
import re
import struct
import zlib
from bisect import bisect_right
from collections import OrderedDict
from itertools import chain
from dataclasses import dataclass
from typing import Collection, Iterable, Mapping, Protocol, Sequence

import numpy as np
import scipy.sparse as sp

from corpus.text import Token, TokenOffsets, sentence_bounds, tokenize
from learning.core.word_classes import word_class

__all__ = [
    "FeatureVocabulary",
    "DocumentFeatures",
    "FeatureExtractor",
    "FeatureCache",
    "CompactFeatures",
    "LowerForms",
    "SharedFeatures",
    "get_extractor",
    "word_shape",
    "short_shape",
]

# Bump when the features change, so cached extractions and stored models are not mixed up.
FEATURES_VERSION = "crf-features-5"


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
        # :meth:`intern` written out: a process that reads stored features interns every attribute of each new
        # token form here, half a million calls for 250 records.
        index, strings = self.index, self.strings
        out = []
        for attribute in attributes:
            i = index.get(attribute)
            if i is None:
                i = index[attribute] = len(strings)
                strings.append(attribute)
            out.append(i)
        return tuple(out)

    def ids_of_each(self, attribute_lists: Iterable[Sequence[str]]) -> list[tuple[int, ...]]:
        """:meth:`ids` of each list, interning a list that comes back (tokens share a few) only once."""
        known: dict[tuple[str, ...], tuple[int, ...]] = {}
        out = []
        for attributes in attribute_lists:
            attributes = tuple(attributes)
            row = known.get(attributes)
            if row is None:
                row = known[attributes] = self.ids(attributes)
            out.append(row)
        return out


class LowerForms(Sequence[str]):
    """The lower-cased text of each token of a document: per token the id of its lower-cased form among the
    extractor's (``names``, which only grows). Reads as a sequence of strings; ``ids`` lets a caller look up a
    whole document with array operations (``learning.core.lexicon``)."""

    __slots__ = ("ids", "names")

    def __init__(self, ids: np.ndarray, names: Sequence[str]) -> None:
        self.ids = ids
        self.names = names

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            names = self.names
            return [names[i] for i in self.ids[index].tolist()]
        return self.names[self.ids[index]]


@dataclass(frozen=True, eq=False)
class DocumentFeatures:
    """One document's tokens, sentences and attribute ids (CSR: token t owns ``indices[indptr[t]:indptr[t+1]]``),
    and the lower-cased form of each token."""

    tokens: Sequence[Token]  # a list, or TokenOffsets when assembled from a compact form
    sentences: list[tuple[int, int]]
    indptr: np.ndarray  # (n_tokens + 1,) int64
    indices: np.ndarray  # (n_attributes_total,) int32, ids in ``vocabulary``
    vocabulary: FeatureVocabulary
    lower: LowerForms

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

    def with_attributes(self, extra: Mapping[int, Sequence[str]]) -> "DocumentFeatures":
        """These features with ``extra`` attributes added to some tokens (token index -> attribute strings),
        interned in the same vocabulary; ``self`` when there are none."""
        if not extra:
            return self
        n = self.n_tokens
        at = sorted(extra)
        rows = self.vocabulary.ids_of_each(map(extra.__getitem__, at))
        added = np.zeros(n, dtype=np.int64)
        added[at] = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        new_ids = np.fromiter(chain.from_iterable(rows), dtype=self.indices.dtype, count=int(added.sum()))
        own = np.diff(self.indptr)
        indptr, indices = _interleave([(own, self.indices), (added, new_ids)], n)
        return DocumentFeatures(self.tokens, self.sentences, indptr, indices, self.vocabulary, self.lower)


@dataclass(frozen=True, eq=False)
class CompactFeatures:
    """A document's features as the extractor that made it builds them (:meth:`FeatureExtractor.assemble`):
    per token its offsets, its form (the extractor's id of its text, whose attributes it keeps once per
    form), the ids of the bigrams ending and starting at it and of its line context, plus the sentences —
    about 30 bytes a token, against about 300 for the :class:`DocumentFeatures` (its ``Token`` objects and
    every attribute id of every token)."""

    offsets: np.ndarray  # (n_tokens, 2) int32: start and end of each token
    sentences: np.ndarray  # (n_sentences, 2) int32: [begin, end) token ranges
    forms: np.ndarray  # (n_tokens,) int32
    left: np.ndarray  # (n_tokens,) int32: the "b-" bigram attribute id
    right: np.ndarray  # (n_tokens,) int32: the "b+" bigram attribute id
    context_lengths: np.ndarray  # (n_tokens,) uint8
    context: np.ndarray  # int32: the context attribute ids, back to back

    @property
    def n_tokens(self) -> int:
        return int(self.forms.shape[0])


@dataclass(frozen=True, eq=False)
class _Portable:
    """A document's stored features as read from :meth:`FeatureExtractor.portable`'s bytes, before they are
    put in an extractor's ids: its forms and line-context attributes as strings, numbered within it."""

    offsets: np.ndarray
    sentences: np.ndarray
    local_forms: np.ndarray  # per token, its form's index in ``forms``
    context_lengths: np.ndarray
    local_context: np.ndarray  # the context attributes, back to back, as indices in ``context``
    forms: list[str]
    context: list[str]


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


# --- ragged tables -------------------------------------------------------------------------------------

class _Growing:
    """A one-dimensional array that grows by appending, with its filled part as a view."""

    __slots__ = ("data", "size")

    def __init__(self, dtype: type, capacity: int = 1024) -> None:
        self.data = np.empty(capacity, dtype=dtype)
        self.size = 0

    def extend(self, values: Sequence[int]) -> None:
        end = self.size + len(values)
        if end > self.data.shape[0]:
            self._grow(end)
        self.data[self.size : end] = values
        self.size = end

    def append(self, value: int) -> None:
        if self.size == self.data.shape[0]:
            self._grow(self.size + 1)
        self.data[self.size] = value
        self.size += 1

    def _grow(self, needed: int) -> None:
        grown = np.empty(max(needed, 2 * self.data.shape[0]), dtype=self.data.dtype)
        grown[: self.size] = self.data[: self.size]
        self.data = grown

    def view(self) -> np.ndarray:
        return self.data[: self.size]

    @classmethod
    def of(cls, values: np.ndarray) -> "_Growing":
        """A growing array holding a copy of ``values``."""
        grown = cls(values.dtype.type, max(1024, 2 * values.shape[0]))
        grown.extend(values)
        return grown


class _Ragged:
    """Rows of integers of varying length, appended one at a time and read many at once."""

    __slots__ = ("starts", "lengths", "values")

    def __init__(self) -> None:
        self.starts = _Growing(np.int64)
        self.lengths = _Growing(np.int64)
        self.values = _Growing(np.int32, 16384)

    def append(self, row: Sequence[int]) -> None:
        self.starts.append(self.values.size)
        self.lengths.append(len(row))
        self.values.extend(row)

    @classmethod
    def of(cls, lengths: np.ndarray, values: np.ndarray) -> "_Ragged":
        """Rows of the given lengths, their values back to back."""
        ragged = cls()
        ragged.lengths = _Growing.of(lengths.astype(np.int64))
        ragged.starts = _Growing.of(np.cumsum(ragged.lengths.view()) - ragged.lengths.view())
        ragged.values = _Growing.of(values.astype(np.int32))
        return ragged

    def rows(self, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the length of each row in ``which``, their values back to back)."""
        lengths = self.lengths.view()[which]
        return lengths, self.values.view()[_positions(self.starts.view()[which], lengths)]


def _positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``starts[k], starts[k] + 1, ..., starts[k] + lengths[k] - 1`` for every k, back to back."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total)


def _interleave(parts: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR rows made of several parts: row t is part 0's values for t, then part 1's, and so on; each part is
    (its length per row, its values back to back)."""
    row_lengths = np.zeros(n, dtype=np.int64)
    for lengths, _ in parts:
        row_lengths += lengths
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(row_lengths, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    offset = indptr[:-1].copy()
    for lengths, values in parts:
        indices[_positions(offset, lengths)] = values
        offset += lengths
    return indptr, indices


class _PairIndex:
    """The "b-" and "b+" attribute ids of bigrams of lower-cased forms, looked up a document at a time: a
    bigram's key is ``first << 32 | second`` (the forms' ids), found among sorted keys with one
    :func:`numpy.searchsorted`; keys added since the last merge wait in a dict."""

    __slots__ = ("keys", "ids", "pending")

    def __init__(self, keys: np.ndarray | None = None, ids: np.ndarray | None = None) -> None:
        self.keys = np.empty(0, dtype=np.int64) if keys is None else keys
        self.ids = np.empty((0, 2), dtype=np.int32) if ids is None else ids
        self.pending: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return self.keys.shape[0] + len(self.pending)

    def lookup(self, keys: np.ndarray, make) -> np.ndarray:
        """The (b-, b+) ids of each key, ``make(key)`` interning those of a key never seen."""
        out = np.empty((keys.shape[0], 2), dtype=np.int32)
        if self.keys.shape[0]:
            order = np.argsort(keys)
            at = np.empty(keys.shape[0], dtype=np.int64)
            at[order] = np.searchsorted(self.keys, keys[order])
            np.minimum(at, self.keys.shape[0] - 1, out=at)
            known = self.keys[at] == keys
            out[known] = self.ids[at[known]]
        else:
            known = np.zeros(keys.shape[0], dtype=bool)
        if not known.all():
            distinct, inverse = np.unique(keys[~known], return_inverse=True)
            pending = self.pending
            found = [pending.get(key) or pending.setdefault(key, make(key)) for key in distinct.tolist()]
            out[~known] = np.array(found, dtype=np.int32).reshape(-1, 2)[inverse.reshape(-1)]
            if len(pending) > max(4096, self.keys.shape[0] // 8):
                self.keys, self.ids = self.merged()
                pending.clear()
        return out

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """Every key, sorted, with its ids."""
        if not self.pending:
            return self.keys, self.ids
        keys = np.concatenate([self.keys, np.fromiter(self.pending, dtype=np.int64, count=len(self.pending))])
        ids = np.concatenate([self.ids, np.array(list(self.pending.values()), dtype=np.int32).reshape(-1, 2)])
        order = np.argsort(keys, kind="stable")
        return keys[order], ids[order]


# --- the extractor -------------------------------------------------------------------------------------

_BOUNDARY = ("<s>", "</s>")
# The roles of a form in a token's row, in the row's order: the token itself, the neighbours at -1 and -2,
# then at +1 and +2; and the pseudo-forms standing for the sentence's begin and end.
_ROLES = ("own", "-1", "-2", "+1", "+2")
_BEGIN, _END = 0, 1
#: Tokens assembled together at most (:meth:`FeatureExtractor.assemble_many`): a shard of the pool is one batch,
#: and the batch's temporary arrays stay at a few hundred megabytes whatever the number of documents asked for.
ASSEMBLY_TOKENS = 300_000
# The shared form's header (FeatureExtractor.portable): a mark of the features' version and layout, then the
# counts of tokens, sentences, distinct forms, context attribute ids, distinct context attributes and the bytes
# of the forms' and attributes' text.
_PORTABLE_HEADER = struct.Struct("<I6I")
_PORTABLE_MAGIC = zlib.crc32(f"{FEATURES_VERSION}:portable-2".encode())
# Forms and attribute strings are stored one per line: no token holds a line break (corpus.text.tokenize), and
# neither does an attribute made of tokens.
_SEPARATOR = "\n"
# The shared vocabulary's header (FeatureExtractor.vocabulary_snapshot): the same mark, then the counts of
# attribute strings, token forms, lower-cased forms, bigrams and role-table values.
_SNAPSHOT_HEADER = struct.Struct("<I5I")


class FeatureExtractor:
    """Turns texts into :class:`DocumentFeatures`; one instance per configuration.

    ``gazetteers`` maps a list name (``"first_names"``, ``"hospitals"``) to its entries; a token is a
    member when its lower-cased form is an entry (``g:NAME``) or a word of a multi-word entry
    (``gw:NAME``).  Lexical features are computed once per distinct token form and remembered.

    ``scope`` names whose documents this extractor reads (the live loop: its project's id), so that its
    vocabulary holds the words of those documents only and can be shared with other processes as it is
    (:meth:`vocabulary_snapshot`); None for an extractor of any documents.
    """

    def __init__(self, gazetteers: Mapping[str, Collection[str]] | None = None, scope: str | None = None) -> None:
        self.gazetteers = _normalise_gazetteers(gazetteers)
        self.scope = scope
        self.key = _extractor_key(_gazetteer_key(self.gazetteers), scope)
        self.vocabulary = FeatureVocabulary()
        intern = self.vocabulary.intern
        self._bos = (intern("bos"),)
        self._eos = (intern("eos"),)
        self._line_pos = tuple((intern(f"lp:{p}"),) for p in ("0", "1", "2", "3", "4+"))
        self._line_end = (intern("line_end"),)
        self._in_parentheses = tuple((intern("par:in"), intern(f"par:{k}")) for k in ("0", "1", "2", "3+"))
        self._key_distance = (-1,) + tuple(intern(f"kd:{d}") for d in ("1", "2", "3", "4+"))
        self._pad = {
            (off, side): (intern(f"{off:+d}:w:{side}"),)
            for off in (-2, -1, 1, 2)
            for side in _BOUNDARY
        }
        # Per distinct token form, its attribute ids in five roles (itself, and seen from a neighbour at -1,
        # +1, -2, +2), kept as ragged tables so that a document's rows are assembled by array indexing.
        # Forms 0 and 1 stand for the sentence's begin and end beyond its tokens: seen from a neighbour they
        # give the padding attributes.
        self._forms: dict[str, int] = {}
        self._form_names: list[str] = ["<s>", "</s>"]  # by form id
        self._roles = tuple(_Ragged() for _ in _ROLES)
        self._lower_ids: dict[str, int] = {"<s>": 0, "</s>": 1}
        self._lower_names: list[str] = ["<s>", "</s>"]
        self._form_lower = _Growing(np.int32)
        self._bigrams = _PairIndex()
        pad = self._pad
        for side, role_ids in (("<s>", {"-1": pad[(-1, "<s>")] + self._bos, "-2": pad[(-2, "<s>")]}),
                               ("</s>", {"+1": pad[(1, "</s>")] + self._eos, "+2": pad[(2, "</s>")]})):
            for role, table in zip(_ROLES, self._roles):
                table.append(role_ids.get(role, ()))
            self._form_lower.append(self._lower_ids[side])
        self._initial_attributes = len(self.vocabulary)

    @property
    def n_forms(self) -> int:
        """How many distinct token forms this extractor knows."""
        return len(self._forms)

    @property
    def fresh(self) -> bool:
        """Whether nothing has been interned since the extractor was made (it may adopt a snapshot)."""
        return not self._forms and len(self.vocabulary) == self._initial_attributes

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
        kind = word_class(low)
        if kind is not None:
            gaz.append(f"cls:{kind}")
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

    def _form_id(self, text: str) -> int:
        """The id of a token form, its attributes interned in every role the first time it is seen."""
        form = self._forms.get(text)
        if form is None:
            own, near, far = self.lexical_attributes(text)
            ids = self.vocabulary.ids
            by_role = {"own": ids(own), "-1": ids([f"-1:{a}" for a in near]), "+1": ids([f"+1:{a}" for a in near]),
                       "-2": ids([f"-2:{a}" for a in far]), "+2": ids([f"+2:{a}" for a in far])}
            for role, table in zip(_ROLES, self._roles):
                table.append(by_role[role])
            low = text.lower()
            lower = self._lower_ids.get(low)
            if lower is None:
                lower = self._lower_ids[low] = len(self._lower_names)
                self._lower_names.append(low)
            self._form_lower.append(lower)
            form = self._forms[text] = len(self._form_names)
            self._form_names.append(text)
        return form

    def _bigram_ids(self, key: int) -> tuple[int, int]:
        """Ids of the bigram of two adjacent lower-cased forms (``first << 32 | second``) as seen from the right
        ("b-") and the left ("b+")."""
        names = self._lower_names
        text = f"{names[key >> 32]}|{names[key & 0xFFFFFFFF]}"
        return self.vocabulary.intern("b-:" + text), self.vocabulary.intern("b+:" + text)

    # Documents -----------------------------------------------------------------------------------------
    def extract(self, text: str) -> DocumentFeatures:
        tokens = tokenize(text)
        return self.assemble(text, self.compact(text, tokens), tokens)

    def compact(self, text: str, tokens: list[Token] | None = None) -> "CompactFeatures":
        """What a document's features are made of, in a few bytes per token (:class:`CompactFeatures`)."""
        tokens = tokenize(text) if tokens is None else tokens
        sentences = sentence_bounds(text, tokens)
        n = len(tokens)
        form_id = self._form_id
        forms = np.fromiter((form_id(t.text) for t in tokens), dtype=np.int32, count=n)
        context = self._line_context(text, tokens)
        bounds = np.array(sentences, dtype=np.int32).reshape(-1, 2)
        left, right = self._bigram_columns(forms, bounds)
        offsets = np.fromiter(chain.from_iterable((t.start, t.end) for t in tokens), dtype=np.int32, count=2 * n)
        return CompactFeatures(
            offsets=offsets.reshape(n, 2), sentences=bounds, forms=forms, left=left, right=right,
            context_lengths=np.fromiter(map(len, context), dtype=np.uint8, count=n),
            context=np.fromiter(chain.from_iterable(context), dtype=np.int32),
        )

    def _bigram_columns(self, forms: np.ndarray, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the "b-" and "b+" bigram attributes of each token: token t of a sentence sees the bigram
        ending at it ("b-", "<s>" before the first token) and the one starting at it ("b+", "</s>" after
        the last)."""
        lower = self._form_lower.view()[forms].astype(np.int64)
        n = lower.shape[0]
        bounds = sentences[sentences[:, 1] > sentences[:, 0]]
        previous = np.empty(n, dtype=np.int64)
        previous[1:] = lower[:-1]
        previous[bounds[:, 0]] = _BEGIN  # the pseudo-forms' lower-cased ids are their form ids
        ends = bounds[:, 1] - 1
        # The bigram starting at a token is the one ending at the next, but at a sentence's end ("</s>"): each
        # bigram is looked up once, those ending at a token first, then the sentences' last ones.
        ids = self._bigrams.lookup(np.concatenate([previous << 32 | lower, lower[ends] << 32 | _END]),
                                   self._bigram_ids)
        right = np.empty(n, dtype=np.int32)
        right[:-1] = ids[1:n, 1]
        right[ends] = ids[n:, 1]
        return ids[:n, 0], right

    # The shared form ------------------------------------------------------------------------------------
    def portable(self, compact: "CompactFeatures") -> bytes:
        """``compact`` as bytes that any extractor, in any process, reads back (:meth:`from_portable`): its
        forms and line-context attributes numbered within the document rather than by this extractor, each
        written out once as text, and the bigrams left out (they follow from the forms). Raises ValueError
        for a form or attribute with a line break (which no tokenizer's token has)."""
        distinct_forms, local_forms = np.unique(compact.forms, return_inverse=True)
        distinct_context, local_context = np.unique(compact.context, return_inverse=True)
        names = self._form_names
        forms = [names[i] for i in distinct_forms.tolist()]
        strings = [self.vocabulary.strings[i] for i in distinct_context.tolist()]
        chars = _joined(forms + strings, _SEPARATOR)
        if chars is None:
            raise ValueError("a form or attribute with a line break cannot be stored")
        arrays = (
            compact.offsets.astype(np.int32), compact.sentences.astype(np.int32), local_forms.astype(np.int32),
            compact.context_lengths.astype(np.uint8), local_context.astype(np.int32),
        )
        header = _PORTABLE_HEADER.pack(
            _PORTABLE_MAGIC, compact.n_tokens, compact.sentences.shape[0], len(forms), compact.context.shape[0],
            len(strings), len(chars),
        )
        return zlib.compress(header + b"".join(a.tobytes() for a in arrays) + chars, 1)

    def from_portable(self, text: str, blob: bytes) -> "CompactFeatures":
        """The :class:`CompactFeatures` of ``text`` from :meth:`portable`'s bytes, in this extractor's ids.
        Raises ValueError for bytes of another layout (older features) or of another text."""
        return self._in_own_ids([self._read_portable(text, blob)])[0]

    def from_portable_many(self, items: Sequence[tuple[str, bytes]]) -> list["CompactFeatures | None"]:
        """:meth:`from_portable` of each (text, bytes) pair, None for bytes it refuses; the documents' forms,
        bigrams and line-context attributes looked up together (a shard of the pool at a time)."""
        read: list[_Portable | None] = []
        for text, blob in items:
            try:
                read.append(self._read_portable(text, blob))
            except ValueError:
                read.append(None)
        converted = iter(self._in_own_ids([r for r in read if r is not None]))
        return [None if r is None else next(converted) for r in read]

    def _read_portable(self, text: str, blob: bytes) -> "_Portable":
        try:
            data = zlib.decompress(blob)
            magic, n, n_sentences, n_forms, n_context, n_strings, n_chars = _PORTABLE_HEADER.unpack_from(data)
        except (zlib.error, struct.error) as error:
            raise ValueError(f"not stored features: {error}") from None
        if magic != _PORTABLE_MAGIC:
            raise ValueError("stored features of another layout")
        shapes = ((np.int32, 2 * n), (np.int32, 2 * n_sentences), (np.int32, n), (np.uint8, n), (np.int32, n_context))
        if len(data) != _PORTABLE_HEADER.size + sum(np.dtype(t).itemsize * k for t, k in shapes) + n_chars:
            raise ValueError("stored features of the wrong size")
        arrays, at = [], _PORTABLE_HEADER.size
        for dtype, count in shapes:
            arrays.append(np.frombuffer(data, dtype=dtype, count=count, offset=at))
            at += np.dtype(dtype).itemsize * count
        offsets, sentences, local_forms, context_lengths, local_context = arrays
        offsets, sentences = offsets.reshape(n, 2), sentences.reshape(n_sentences, 2)
        if n and int(offsets[-1, 1]) > len(text):
            raise ValueError("stored features of another text")
        words = _split(data[at:], n_forms + n_strings, _SEPARATOR, "stored features with another number of forms")
        return _Portable(offsets=offsets, sentences=sentences, local_forms=local_forms, context_lengths=context_lengths,
                         local_context=local_context, forms=words[:n_forms], context=words[n_forms:])

    def _in_own_ids(self, read: Sequence["_Portable"]) -> list["CompactFeatures"]:
        """Read documents in this extractor's ids: every form, context attribute and bigram of them looked up
        at once, the forms and attributes never seen interned."""
        if not read:
            return []
        texts = [form for r in read for form in r.forms]
        found = list(map(self._forms.get, texts))
        if None in found:
            found = [self._form_id(form) if i is None else i for form, i in zip(texts, found)]
        form_ids = np.array(found, dtype=np.int32)
        context_ids = np.array(self.vocabulary.ids([attribute for r in read for attribute in r.context]),
                               dtype=np.int32)
        # Each document's forms from its local numbering; then the bigrams of all of them, whose sentences
        # partition their tokens laid back to back.
        forms, sentences, form_at, context_at, token_at = [], [], 0, [0], 0
        for r in read:
            forms.append(form_ids[form_at:form_at + len(r.forms)][r.local_forms])
            sentences.append(r.sentences + token_at)
            form_at += len(r.forms)
            context_at.append(context_at[-1] + len(r.context))
            token_at += r.offsets.shape[0]
        all_forms = np.concatenate(forms)
        left, right = self._bigram_columns(all_forms, np.concatenate(sentences).reshape(-1, 2))
        out, token_at = [], 0
        for k, r in enumerate(read):
            n = r.offsets.shape[0]
            out.append(CompactFeatures(
                offsets=r.offsets, sentences=r.sentences, forms=forms[k], left=left[token_at:token_at + n],
                right=right[token_at:token_at + n], context_lengths=r.context_lengths,
                context=context_ids[context_at[k]:context_at[k + 1]][r.local_context]))
            token_at += n
        return out

    # The shared vocabulary -------------------------------------------------------------------------------
    def vocabulary_snapshot(self) -> bytes | None:
        """Everything this extractor has learnt of the documents it read, as bytes another process's fresh
        extractor adopts (:meth:`adopt_vocabulary`) instead of working it out again form by form: the
        attribute strings in id order, the token forms with their attribute ids in every role, the lower-cased
        forms and the bigrams. None when a string holds a NUL character (the separator of the strings)."""
        strings, forms, lower = self.vocabulary.strings, self._form_names[2:], self._lower_names
        text = _joined(list(chain(strings, forms, lower)), "\0")
        if text is None:
            return None
        keys, ids = self._bigrams.merged()
        lengths = [table.lengths.view().astype(np.int32) for table in self._roles]
        values = [table.values.view() for table in self._roles]
        header = _SNAPSHOT_HEADER.pack(_PORTABLE_MAGIC, len(strings), len(forms), len(lower), keys.shape[0],
                                       sum(v.shape[0] for v in values))
        arrays = (*lengths, *values, self._form_lower.view(), keys, ids)
        return zlib.compress(header + b"".join(a.tobytes() for a in arrays) + text, 1)

    def adopt_vocabulary(self, blob: bytes) -> bool:
        """Take over another extractor's :meth:`vocabulary_snapshot`, its ids included: only a :attr:`fresh`
        extractor does (its own few attributes are the snapshot's first ones); False when this one is not
        fresh. Raises ValueError for bytes of another layout or that do not hold together."""
        if not self.fresh:
            return False
        try:
            data = zlib.decompress(blob)
            magic, n_strings, n_forms, n_lower, n_bigrams, n_values = _SNAPSHOT_HEADER.unpack_from(data)
        except (zlib.error, struct.error) as error:
            raise ValueError(f"not a vocabulary: {error}") from None
        if magic != _PORTABLE_MAGIC:
            raise ValueError("a vocabulary of another layout")
        n_rows = n_forms + 2  # and the sentence's begin and end
        at = _SNAPSHOT_HEADER.size
        if len(data) < at + 4 * (5 * n_rows + n_values + n_rows + 4 * n_bigrams):  # a key is 8 bytes, its ids 8
            raise ValueError("a vocabulary of the wrong size")
        lengths = np.frombuffer(data, dtype=np.int32, count=5 * n_rows, offset=at).reshape(5, n_rows)
        at += lengths.nbytes
        totals = lengths.sum(axis=1, dtype=np.int64)
        if totals.sum() != n_values or (lengths < 0).any():
            raise ValueError("a vocabulary whose role tables do not add up")
        values = np.frombuffer(data, dtype=np.int32, count=n_values, offset=at)
        at += values.nbytes
        form_lower = np.frombuffer(data, dtype=np.int32, count=n_rows, offset=at)
        at += form_lower.nbytes
        keys = np.frombuffer(data, dtype=np.int64, count=n_bigrams, offset=at)
        at += keys.nbytes
        ids = np.frombuffer(data, dtype=np.int32, count=2 * n_bigrams, offset=at).reshape(n_bigrams, 2)
        at += ids.nbytes
        words = _split(data[at:], n_strings + n_forms + n_lower, "\0", "a vocabulary with another number of strings")
        strings, forms, lower = words[:n_strings], words[n_strings:n_strings + n_forms], words[n_strings + n_forms:]
        if (strings[: self._initial_attributes] != self.vocabulary.strings or lower[:2] != self._lower_names
                or _outside(values, n_strings) or _outside(ids, n_strings) or _outside(form_lower, n_lower)
                or _outside(keys >> 32, n_lower) or _outside(keys & 0xFFFFFFFF, n_lower)
                or (n_bigrams and not (np.diff(keys) > 0).all())):
            raise ValueError("a vocabulary of other attributes, or with ids out of range")
        vocabulary = self.vocabulary
        vocabulary.strings = strings
        vocabulary.index = dict(zip(strings, range(n_strings)))
        self._forms = dict(zip(forms, range(2, n_rows)))
        self._form_names = ["<s>", "</s>", *forms]
        ends = np.cumsum(totals)
        self._roles = tuple(_Ragged.of(lengths[k], values[ends[k] - totals[k]:ends[k]]) for k in range(5))
        self._lower_names = lower
        self._lower_ids = dict(zip(lower, range(n_lower)))
        self._form_lower = _Growing.of(form_lower)
        self._bigrams = _PairIndex(keys.copy(), ids.copy())
        return True

    def assemble(self, text: str, compact: "CompactFeatures", tokens: list[Token] | None = None) -> DocumentFeatures:
        """The :class:`DocumentFeatures` of ``text`` from its compact form, made by this extractor; its tokens
        are ``tokens`` or, when None, :class:`corpus.text.TokenOffsets` over the compact form's offsets."""
        return self.assemble_many([text], [compact], [tokens])[0]

    def assemble_many(
        self, texts: Sequence[str], compacts: Sequence["CompactFeatures"],
        tokens: Sequence[list[Token] | None] | None = None,
    ) -> list[DocumentFeatures]:
        """:meth:`assemble` of each text, the documents laid back to back and assembled together, at most
        :data:`ASSEMBLY_TOKENS` tokens at a time: the array operations run once per batch instead of once per
        document, which is most of their cost on documents of a few hundred tokens. Each document's attribute
        ids are a slice of its batch's."""
        tokens = [None] * len(texts) if tokens is None else tokens
        out: list[DocumentFeatures] = []
        begin, total = 0, 0
        for k, compact in enumerate(compacts):
            total += compact.n_tokens
            if total >= ASSEMBLY_TOKENS or k == len(compacts) - 1:
                out += self._assemble_batch(texts[begin:k + 1], compacts[begin:k + 1], tokens[begin:k + 1])
                begin, total = k + 1, 0
        return out

    def _assemble_batch(
        self, texts: Sequence[str], compacts: Sequence["CompactFeatures"], tokens: Sequence[list[Token] | None],
    ) -> list[DocumentFeatures]:
        firsts = np.zeros(len(compacts) + 1, dtype=np.int64)
        np.cumsum([compact.n_tokens for compact in compacts], out=firsts[1:])
        forms = np.concatenate([compact.forms for compact in compacts])
        # Sentences in the batch's token positions: a token's neighbours never cross a sentence, so neither
        # do they cross a document.
        bounds = np.concatenate([compact.sentences.astype(np.int64).reshape(-1, 2) + first
                                 for compact, first in zip(compacts, firsts[:-1].tolist())])
        n = forms.shape[0]
        lengths = bounds[:, 1] - bounds[:, 0]
        begin = np.repeat(bounds[:, 0], lengths)
        end = np.repeat(bounds[:, 1], lengths)
        at = np.arange(n)
        neighbours = [forms]
        for step, pad in ((-1, _BEGIN), (-2, _BEGIN), (1, _END), (2, _END)):
            other = at + step
            inside = (other >= begin) & (other < end)
            neighbours.append(np.where(inside, forms[np.clip(other, 0, max(n - 1, 0))], pad))
        parts = [table.rows(which) for table, which in zip(self._roles, neighbours)]
        ones = np.ones(n, dtype=np.int64)
        context_lengths = np.concatenate([compact.context_lengths for compact in compacts]).astype(np.int64)
        parts += [(ones, np.concatenate([compact.left for compact in compacts])),
                  (ones, np.concatenate([compact.right for compact in compacts])),
                  (context_lengths, np.concatenate([compact.context for compact in compacts]))]
        indptr, indices = _interleave(parts, n)
        lower = self._form_lower.view()[forms]
        out = []
        for k, (text, compact, own_tokens) in enumerate(zip(texts, compacts, tokens)):
            a, b = int(firsts[k]), int(firsts[k + 1])
            if own_tokens is None:
                own_tokens = TokenOffsets(text, compact.offsets[:, 0].tolist(), compact.offsets[:, 1].tolist())
            entry = indptr[a]
            out.append(DocumentFeatures(own_tokens, [(x, y) for x, y in compact.sentences.tolist()],
                                        indptr[a:b + 1] - entry, indices[entry:indptr[b]], self.vocabulary,
                                        LowerForms(lower[a:b], self._lower_names)))
        return out

    def _line_context(self, text: str, tokens: list[Token]) -> list[tuple[int, ...]]:
        """Per token: position in its line, the key of a ``Key: value`` line, and its slot inside parentheses."""
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
            depth = 0
            slot = 0
            for q in range(i, j):
                pos = q - i
                feats = line_pos[pos if pos < 4 else 4]
                if q == j - 1:
                    feats += line_end
                if key is not None:
                    since_colon += 1
                    feats += key_ids[since_colon if since_colon < 4 else 4]
                word = tokens[q].text
                if word == "(":
                    depth += 1
                    slot = 0
                elif word == ")":
                    depth = max(depth - 1, 0)
                elif depth:
                    if word in ",;":
                        slot += 1
                    else:
                        feats += self._in_parentheses[slot if slot < 3 else 3]
                out.append(feats)
                if word == ":":
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
                elif word in ".;" and key is not None and since_colon > 0:
                    # A stop ends the value; a later colon on the line starts a new key.
                    key_start = q + 1
            i = j
        return out


def _joined(strings: list[str], separator: str) -> bytes | None:
    """``strings`` as UTF-8 text, ``separator`` between them; None when one of them holds the separator."""
    text = separator.join(strings)
    return text.encode("utf-8") if text.count(separator) == max(len(strings) - 1, 0) else None


def _split(data: bytes, count: int, separator: str, refusal: str) -> list[str]:
    """The ``count`` strings :func:`_joined` wrote; ValueError(``refusal``) when there are not as many."""
    words = data.decode("utf-8").split(separator) if count else []
    if len(words) != count:
        raise ValueError(refusal)
    return words


def _outside(ids: np.ndarray, size: int) -> bool:
    return bool(ids.size) and (int(ids.min()) < 0 or int(ids.max()) >= size)


def _extractor_key(gazetteers_key: str, scope: str | None) -> str:
    return f"{FEATURES_VERSION}:{gazetteers_key}" + (f":{scope}" if scope is not None else "")


_EXTRACTORS: dict[str, FeatureExtractor] = {}


def get_extractor(
    gazetteers: Mapping[str, Collection[str]] | None = None, scope: str | None = None,
) -> FeatureExtractor:
    """The shared extractor for a configuration and scope, so taggers with equal settings share a vocabulary."""
    key = _extractor_key(_gazetteer_key(_normalise_gazetteers(gazetteers)), scope)
    extractor = _EXTRACTORS.get(key)
    if extractor is None:
        extractor = FeatureExtractor(gazetteers, scope)
        _EXTRACTORS[key] = extractor
    return extractor


class SharedFeatures(Protocol):
    """Where every process reads and writes documents' features in :meth:`FeatureExtractor.portable` form, so
    that a document is tokenized and featurized once, whichever worker process or host needs it first."""

    def get_many(self, texts: Sequence[str]) -> list[bytes | None]:
        """The stored bytes of each text, None where there are none."""

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Store (text, bytes) pairs; one already stored is replaced."""

    def get_vocabulary(self, key: str, scope: str) -> bytes | None:
        """The :meth:`FeatureExtractor.vocabulary_snapshot` shared for extractors of this key and scope, None
        when there is none."""

    def put_vocabulary(self, key: str, scope: str, n_forms: int, snapshot: bytes) -> None:
        """Share a snapshot of an extractor that knows ``n_forms`` token forms, unless the one shared already
        knows as many."""


class FeatureCache:
    """Cache of extracted documents, bounded by their total number of tokens, in two segments.

    Documents a tagger is fitted on (``keep=True``: the gold, featurized again at every retrain) live in a
    segment of their own (``max_kept_tokens``), whole, that scoring never evicts. Scoring a pool cycles through
    the other segment (``max_tokens``), least recently used first, which keeps each document compact
    (:class:`CompactFeatures`, about a tenth of the memory) and assembles it again when it is asked for:
    far cheaper than extracting it, so that a pool of several thousand records stays in every worker process
    at once, whichever of them each shard of a retrain reaches. A document pushed out of the kept segment
    joins the other one. The documents assembled last (``max_recent_tokens``: a shard of the pool) are also kept
    whole, as the steps of one scoring (marginals, then tokens for the suggestions) ask for them again. Keys
    are the extractor's configuration key and a hash of the text, so an identical text (a document scored
    again after a retrain, a re-imported duplicate) is featurized once.

    With a ``shared`` store, what this process does not hold is read from the store, and what is in neither
    is extracted here and written to it: a process that has featurized nothing yet (a new worker, another
    host) reads a document's tokens, sentences, forms and line context instead of computing them again.
    An extractor with a scope (the live loop's, one per project) also shares its vocabulary through the
    store: a fresh one adopts the snapshot shared last before it reads anything, so that the forms, bigrams
    and attributes of every document some process has read are not worked out again form by form, and
    one whose forms have grown by a quarter (and by :data:`SHARE_MIN_FORMS`) since the snapshot it adopted or
    shared offers its own.
    """

    #: A scoped extractor's vocabulary is shared again once it knows a quarter more forms, and this many more.
    SHARE_GROWTH = 1.25
    SHARE_MIN_FORMS = 1000

    def __init__(
        self, max_tokens: int = 6_000_000, max_kept_tokens: int = 2_000_000, max_recent_tokens: int = 300_000,
        shared: SharedFeatures | None = None,
    ) -> None:
        self.max_tokens = max_tokens
        self.max_kept_tokens = max_kept_tokens
        self.max_recent_tokens = max_recent_tokens
        self.shared = shared
        self._recent: OrderedDict[tuple[str, str], DocumentFeatures] = OrderedDict()
        self._recent_tokens = 0
        self._items: OrderedDict[tuple[str, str], tuple[FeatureVocabulary, CompactFeatures]] = OrderedDict()
        self._kept: OrderedDict[tuple[str, str], tuple[DocumentFeatures, CompactFeatures]] = OrderedDict()
        self._tokens = 0
        self._kept_tokens = 0
        self.hits = 0
        self.misses = 0
        self.shared_hits = 0
        # Per scoped extractor (by key): the forms of the snapshot it adopted or shared last.
        self._shared_forms: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._items) + len(self._kept)

    @staticmethod
    def text_key(text: str) -> str:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()

    def get(self, extractor: FeatureExtractor, text: str, *, keep: bool = False) -> DocumentFeatures:
        return self.get_many(extractor, [text], keep=keep)[0]

    def get_many(
        self, extractor: FeatureExtractor, texts: Sequence[str], *, keep: bool = False,
    ) -> list[DocumentFeatures]:
        """The features of each text (see :meth:`get`): what this process lacks asked of the shared store at once,
        and what it holds compact assembled together (:meth:`FeatureExtractor.assemble_many`)."""
        keys = [(extractor.key, self.text_key(text)) for text in texts]
        found = self._from_shared(extractor, texts, keys) if self.shared is not None else {}
        out: list[DocumentFeatures | None] = [None] * len(texts)
        stored: list[tuple[int, CompactFeatures]] = []  # what this call (re)stores, by position in ``texts``
        pending: list[tuple[int, CompactFeatures, list[Token] | None]] = []  # ... of which to assemble
        first_of: dict[tuple[str, str], int] = {}  # a text asked for twice is looked up once
        for i, (text, key) in enumerate(zip(texts, keys)):
            if key in first_of:
                continue
            first_of[key] = i
            kept = self._kept.get(key)
            if kept is not None and kept[0].vocabulary is extractor.vocabulary:
                self._kept.move_to_end(key)
                self.hits += 1
                out[i] = kept[0]
                continue
            held = self._items.get(key)
            if held is not None and held[0] is extractor.vocabulary:
                self.hits += 1
                recent = self._recent.get(key)
                if recent is not None and recent.vocabulary is extractor.vocabulary:
                    out[i] = recent
                else:
                    pending.append((i, held[1], None))
                stored.append((i, held[1]))
                continue
            self.misses += 1
            compact, tokens = found.get(key), None  # from the shared store, or extracted for it
            if compact is None:
                tokens = tokenize(text)
                compact = extractor.compact(text, tokens)
            pending.append((i, compact, tokens))
            stored.append((i, compact))
        assembled = extractor.assemble_many([texts[i] for i, _, _ in pending], [c for _, c, _ in pending],
                                            [t for _, _, t in pending])
        for (i, _, _), feats in zip(pending, assembled):
            out[i] = feats
        for i, compact in stored:
            self._store(keys[i], out[i], compact, keep)
        return [out[first_of[key]] for key in keys]

    def _holds(self, extractor: FeatureExtractor, key: tuple[str, str]) -> bool:
        kept, item = self._kept.get(key), self._items.get(key)
        return ((kept is not None and kept[0].vocabulary is extractor.vocabulary)
                or (item is not None and item[0] is extractor.vocabulary))

    def _from_shared(
        self, extractor: FeatureExtractor, texts: Sequence[str], keys: Sequence[tuple[str, str]],
    ) -> dict[tuple[str, str], CompactFeatures]:
        """The compact features of the texts this process does not hold: read from the shared store, or
        extracted here (those it lacks, or holds in another layout) and written to it."""
        wanted = {key: text for text, key in zip(texts, keys) if not self._holds(extractor, key)}
        if not wanted:
            return {}
        scoped = extractor.scope is not None
        if scoped and extractor.key not in self._shared_forms:
            self._shared_forms[extractor.key] = self._adopt_vocabulary(extractor)
        stored = [(key, text, blob) for (key, text), blob in zip(wanted.items(),
                                                                 self.shared.get_many(list(wanted.values())))
                  if blob is not None]
        read = extractor.from_portable_many([(text, blob) for _, text, blob in stored])
        found = {key: compact for (key, _, _), compact in zip(stored, read) if compact is not None}
        self.shared_hits += len(found)
        extracted: list[tuple[str, bytes]] = []
        for key, text in wanted.items():
            if key not in found:  # not stored, or written by older features: extracted (again) and stored
                found[key] = extractor.compact(text)
                try:
                    extracted.append((text, extractor.portable(found[key])))
                except ValueError:
                    pass  # a token with a line break, which no tokenizer makes: featurized here each time
        if extracted:
            self.shared.put_many(extracted)
        if scoped:
            self._offer_vocabulary(extractor)
        return found

    def _adopt_vocabulary(self, extractor: FeatureExtractor) -> int:
        """The forms of the shared snapshot a fresh ``extractor`` took over, 0 when it took none."""
        if not extractor.fresh:
            return 0
        snapshot = self.shared.get_vocabulary(extractor.key, extractor.scope)
        try:
            return extractor.n_forms if snapshot is not None and extractor.adopt_vocabulary(snapshot) else 0
        except ValueError:
            return 0  # damaged: a larger one shared later replaces it

    def _offer_vocabulary(self, extractor: FeatureExtractor) -> None:
        shared = self._shared_forms.get(extractor.key, 0)
        if extractor.n_forms < max(shared * self.SHARE_GROWTH, shared + self.SHARE_MIN_FORMS):
            return
        snapshot = extractor.vocabulary_snapshot()
        if snapshot is not None:
            self.shared.put_vocabulary(extractor.key, extractor.scope, extractor.n_forms, snapshot)
        self._shared_forms[extractor.key] = extractor.n_forms

    def _store(self, key: tuple[str, str], feats: DocumentFeatures, compact: CompactFeatures, keep: bool) -> None:
        """Hold a document just asked for (as the most recently used), evicting the least recently used."""
        self._drop(key)
        if keep:
            self._kept[key] = (feats, compact)
            self._kept_tokens += feats.n_tokens
        else:
            self._items[key] = (feats.vocabulary, compact)
            self._tokens += feats.n_tokens
            self._recent[key] = feats
            self._recent_tokens += feats.n_tokens
            while self._recent_tokens > self.max_recent_tokens and len(self._recent) > 1:
                _, old_recent = self._recent.popitem(last=False)
                self._recent_tokens -= old_recent.n_tokens
        while self._kept_tokens > self.max_kept_tokens and len(self._kept) > 1:
            old_key, (old, old_compact) = self._kept.popitem(last=False)
            self._kept_tokens -= old.n_tokens
            self._items[old_key] = (old.vocabulary, old_compact)
            self._tokens += old.n_tokens
        while self._tokens > self.max_tokens and len(self._items) > 1:
            old_key, (_, old_compact) = self._items.popitem(last=False)
            self._tokens -= old_compact.n_tokens
            old_recent = self._recent.pop(old_key, None)
            if old_recent is not None:
                self._recent_tokens -= old_recent.n_tokens

    def _drop(self, key: tuple[str, str]) -> None:
        recent = self._recent.pop(key, None)
        if recent is not None:
            self._recent_tokens -= recent.n_tokens
        old = self._items.pop(key, None)
        if old is not None:
            self._tokens -= old[1].n_tokens
        old_kept = self._kept.pop(key, None)
        if old_kept is not None:
            self._kept_tokens -= old_kept[0].n_tokens

    def clear(self) -> None:
        self._items.clear()
        self._kept.clear()
        self._recent.clear()
        self._tokens = self._kept_tokens = self._recent_tokens = 0


DEFAULT_CACHE = FeatureCache()
