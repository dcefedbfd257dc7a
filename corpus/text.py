"""Tokenization with character offsets and sentence splitting for clinical text.

Tokens keep identifiers whole when they are one identifier (a date, a time, an e-mail address, a URL, a
phone number written as one group, an ID mixing letters and digits, a decimal number), because a PHI span
almost always starts and ends on those boundaries; everything else is a run of word characters (any
script, so Spanish and Swedish letters stay inside words) or a single punctuation character.

Runs of word characters are additionally cut where two words were evidently glued together by a lost
space ("70años", "MartínezNºCol", "DRAlberto"); mixed IDs such as "12345678X" stay whole.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import overload

__all__ = ["Token", "TokenOffsets", "offsets_of", "tokenize", "tokens_of", "sentence_bounds", "fold"]


@dataclass(frozen=True, slots=True)
class Token:
    """A token: ``text`` is exactly ``source[start:end]``."""

    text: str
    start: int
    end: int


class TokenOffsets(Sequence):
    """The tokens of a text kept as their offsets: a :class:`Token` is made when one is read, so that code
    which reads a few of them (the ends of the spans it shows) does not pay for making them all."""

    __slots__ = ("text", "starts", "ends")

    def __init__(self, text: str, starts: list[int], ends: list[int]) -> None:
        if len(starts) != len(ends):
            raise ValueError(f"{len(starts)} starts but {len(ends)} ends")
        self.text, self.starts, self.ends = text, starts, ends

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> Token: ...

    @overload
    def __getitem__(self, index: slice) -> list[Token]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            text = self.text
            return [Token(text[a:b], a, b) for a, b in zip(self.starts[index], self.ends[index])]
        start, end = self.starts[index], self.ends[index]
        return Token(self.text[start:end], start, end)

    def __iter__(self):
        text = self.text
        return (Token(text[a:b], a, b) for a, b in zip(self.starts, self.ends))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  - mutable-looking, like the list it stands for

    def __repr__(self) -> str:
        return f"TokenOffsets({list(self)!r})"


def offsets_of(tokens: Sequence[Token]) -> tuple[Sequence[int], Sequence[int]]:
    """The start and the end of every token, without making a :class:`Token` of each one kept as offsets."""
    if isinstance(tokens, TokenOffsets):
        return tokens.starts, tokens.ends
    return [t.start for t in tokens], [t.end for t in tokens]


# Alternatives are tried left to right at each position, so the specific identifier shapes come before
# the generic word and punctuation patterns.  ``(?<!\w)`` / ``(?!\w)`` keep a shape from being carved out
# of a longer word or number.
_URL = r"(?:https?://|ftp://|www\.)[^\s<>\"'()\[\]{}]*[^\s<>\"'()\[\]{}.,;:!?]"
# In "E-mail.ana@x.es" the label glued to the address is not part of it.
_EMAIL = r"(?<![\w+])(?!(?i:e-?mail|mail)[.:-])\w[\w+-]*(?:\.[\w+-]+)*@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?![\w-])"
# Day-month-year or year-month-day with one consistent separator; years of 2 or 4 digits.
_DATE = (
    r"(?<![\w/.-])(?:"
    r"\d{4}(?P<s1>[/.-])\d{1,2}(?P=s1)\d{1,2}"
    r"|\d{1,2}(?P<s2>[/.-])\d{1,2}(?P=s2)(?:\d{4}|\d{2})"
    r")(?![\w/-])(?!\.\d)"
)
_TIME = r"(?<![\w:.])\d{1,2}:\d{2}(?::\d{2})?(?![\w:])"
# Phone numbers written with dashes or dots between groups (91-555-12-34, 915.551.234), optionally with
# an international prefix.  Digit groups separated by spaces are joined only by ``_PHONE_SPACED``.
_PHONE_JOINED = r"(?<![\w+.-])(?:\+\d{1,3}[-. ]?)?\d{2,4}(?:[-.]\d{2,4}){2,4}(?![\w-])(?!\.\d)"
# A Spanish-style phone written in spaced groups: 9 digits starting with 6-9 in groups of 3-3-3,
# 3-2-2-2 or 2-3-2-2 (optionally +34 first).  Other spaced digit groups (ID numbers such as "28 28 70973",
# counts "2 3") stay separate tokens.
_PHONE_SPACED = (
    r"(?<![\w+.-])(?:\+\d{2}[ ])?(?:"
    r"[6-9]\d{2}[ ]\d{3}[ ]\d{3}"
    r"|[6-9]\d{2}[ ]\d{2}[ ]\d{2}[ ]\d{2}"
    r"|[6-9]\d[ ]\d{3}[ ]\d{2}[ ]\d{2}"
    r")(?![\w-])"
)
# An ID whose parts are joined by hyphens or slashes, e.g. 1234567-B, AB-12345, 12/345-X: every part
# holds a digit or is one or two capital letters, and the whole has a letter.  "nhc-1305469" and
# "08005-Barcelona" are therefore split: a word glued to a number there is two pieces of information.
_ID_PART = r"(?:[^\W_]*\d[^\W_]*|[A-Z]{1,2})"
_MIXED_ID = (
    r"(?<![\w/-])(?=[\w/-]*[^\W\d_])(?=[\w/-]*\d)"
    rf"{_ID_PART}(?:[-/]{_ID_PART})+(?![\w/-])"
)
_DECIMAL = r"(?<![\w.,])\d+(?:[.,]\d+)+(?![\w])(?![.,]\d)"
_WORD = r"(?P<word>\w+)"
_PUNCT = r"[^\w\s]"

_TOKEN_RE = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (_URL, _EMAIL, _DATE, _TIME, _PHONE_JOINED, _PHONE_SPACED, _MIXED_ID, _DECIMAL, _WORD, _PUNCT)
    ),
    re.UNICODE,
)

_NOT_CASED_LOWER = frozenset("ºª")


def _word_cuts(word: str) -> list[int]:
    """Positions at which a run of word characters holds two words glued together.

    "70años" (a number glued to a lower-case word), "MartínezNºCol" (lower-case followed by a capital) and
    "DRAlberto" (a capitalised word after an all-caps one) are cut; IDs mixing digits and capitals
    ("12345678X", "NHC123456") and ordinary words are not.
    """
    if word.isdigit() or len(word) < 3:
        return []
    if word.isalpha():
        if word.islower() or word[1:].islower() or word.isupper():
            return []
        cuts = []
        n = len(word)
        for i in range(1, n):
            prev, cur = word[i - 1], word[i]
            if not cur.isupper():
                continue
            if prev.islower() and prev not in _NOT_CASED_LOWER:
                cuts.append(i)
            elif prev.isupper() and n - i >= 3 and word[i + 1].islower() and word[i + 1] not in _NOT_CASED_LOWER:
                cuts.append(i)
        return cuts
    if word[0].isdigit():
        i = 1
        while word[i].isdigit():
            i += 1
        rest = word[i:]
        if len(rest) >= 2 and rest.isalpha() and rest.islower():
            return [i]
    return []


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens with character offsets. No token holds a line break or a tab; only a phone
    number written in spaced groups (``612 345 678``, ``_PHONE_SPACED``) holds spaces."""
    tokens: list[Token] = []
    append = tokens.append
    for m in _TOKEN_RE.finditer(text):
        start, end = m.span()
        piece = m.group()
        if m.lastgroup == "word" and not (piece.islower() and piece.isalpha()):
            cuts = _word_cuts(piece)
            if cuts:
                prev = 0
                for cut in cuts:
                    append(Token(piece[prev:cut], start + prev, start + cut))
                    prev = cut
                append(Token(piece[prev:], start + prev, end))
                continue
        append(Token(piece, start, end))
    return tokens


@lru_cache(maxsize=8)
def tokens_of(text: str) -> tuple[Token, ...]:
    """:func:`tokenize`'s tokens of ``text``, remembered for the last few texts this process asked for, so that
    a record is tokenized once per request however many steps need its tokens (a hand-out completes the
    record's suggestions from its tokens, then sends them to the workbench)."""
    return tuple(tokenize(text))


# Abbreviations after which a full stop does not end a sentence when the next token follows on the same
# line (lower-cased, without the stop).
_ABBREVIATIONS = frozenset(
    """
    dr dra drs dras sr sra sres sras srta d dña dª ud uds prof profa lic ing
    núm num nº no n pág pag vol cap art etc aprox p ej vs fig tab dpto dept av avda c cl pl pza ctra
    km col cra crta crt carr gral edf edif esc urb hnos sta sto pso avd ada cdad nnal apto ee uu
    mr mrs ms st jr mt
    """.split()
)
_SENTENCE_END = frozenset(".!?")


def sentence_bounds(text: str, tokens: list[Token]) -> list[tuple[int, int]]:
    """Sentences as token index ranges ``[i, j)`` that cover ``tokens`` in order without gaps.

    A sentence ends at a line break, and at ``.``/``!``/``?`` followed by whitespace and a token that
    starts with a capital letter or an opening quote/parenthesis, unless the stop closes a known
    abbreviation ("Dr.", "Sra.", "C/.") or a single capital initial ("J. García").  A stop before a digit
    does not end a sentence: in addresses ("Fernández 59. 4,2") that is far more common than a sentence
    opening with a number.
    """
    n = len(tokens)
    if n == 0:
        return []
    bounds: list[tuple[int, int]] = []
    begin = 0
    for i in range(n - 1):
        tok = tokens[i]
        nxt = tokens[i + 1]
        gap = text[tok.end : nxt.start]
        split = False
        if "\n" in gap or "\r" in gap or "\u2029" in gap:
            split = True
        elif tok.text in _SENTENCE_END and gap:
            first = nxt.text[0]
            if first.isupper() or first in "¿¡\"'«(“":
                split = True
                if tok.text == "." and i > begin:
                    prev = tokens[i - 1]
                    glued = prev.end == tok.start
                    word = prev.text.lower()
                    if glued and (
                        word in _ABBREVIATIONS
                        or (len(prev.text) == 1 and prev.text.isupper())
                        or (word == "/" and i > begin + 1 and tokens[i - 2].text.lower() == "c")
                    ):
                        split = False
        if split:
            bounds.append((begin, i + 1))
            begin = i + 1
    bounds.append((begin, n))
    return bounds


def fold(word: str) -> str:
    """``word`` case-folded and without accents, so that "Tío" and "tio" compare equal."""
    decomposed = unicodedata.normalize("NFD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
