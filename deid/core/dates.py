"""Shifting a date written in free text by a number of days, in the date's own format (ALGORITHMS.md §4).

``shift_date_text("17 de marzo del 2009", days=400, language="es")`` returns ``"21 de abril del 2010"``:
the same words, separators, zero-padding, case and abbreviations, with the numbers and month names of
the shifted date. It returns ``None`` when the text is not a date it can read, and the caller falls
back (see :mod:`deid.core.surrogates`).

Decisions:

- **One offset, three granularities.** A date with a day moves by ``days``; a month without a day
  ("marzo de 2009", "March 2009", "diciembre-08", "junio") moves by ``months = round(days / 30.436875)``;
  a year alone ("2009") moves by ``years = round(days / 365.2425)``. Intervals between dates of the same
  granularity therefore survive exactly (days between days, months between months, years between
  years); across granularities they survive to within half a unit. Callers pick ``|days| ≥ 400`` so that
  no granularity is left unshifted (|months| ≥ 13, |years| ≥ 1).
- **Day and month order.** Numeric dates with a year are read day-first (``17/03/2009``) except in
  English, which reads month-first (``03/17/2009``); when the preferred order gives an impossible date
  and the other one does not (``17/03/2009`` in English, ``03/17/2009`` in Spanish), the other one is
  used. ISO ``2009-03-17`` is always year-month-day. A day and month without a year ("17 de marzo")
  shifts in a non-leap reference year (a leap one for 29 February); the year is not written back.
- **Two-digit years** are read as 2000-2030 or 1931-1999 (the century only matters for 29 February
  and weekdays) and written back with two digits.
- **Months in words** are recognised in Spanish, English, Swedish and Italian (full names and the
  usual abbreviations, with or without a stop, accents optional); the document's language is tried
  first. The shifted month is written in the same language, form (full or abbreviated) and case.
  A weekday is rewritten when the text holds exactly one full date, and makes the text unreadable
  otherwise. English ordinal suffixes ("17th") follow the new day.
- **Unreadable text** — a number or word that is neither part of a date nor a connecting word ("de",
  "del año", "of", "the", seasons…), an impossible date, typos such as ``24/08//1979`` — gives ``None``.
"""
from __future__ import annotations

import calendar
import datetime as dt
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["month_shift", "shift_date_text", "year_shift"]

_DAYS_PER_MONTH = 365.2425 / 12
_DAYS_PER_YEAR = 365.2425

# month tables: language -> (full names, abbreviations); index 0 is January
_MONTHS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "es": (
        ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
         "noviembre", "diciembre"),
        ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"),
    ),
    "en": (
        ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
         "November", "December"),
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
    ),
    "sv": (
        ("januari", "februari", "mars", "april", "maj", "juni", "juli", "augusti", "september", "oktober",
         "november", "december"),
        ("jan", "feb", "mar", "apr", "maj", "jun", "jul", "aug", "sep", "okt", "nov", "dec"),
    ),
    "it": (
        ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre",
         "novembre", "dicembre"),
        ("gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"),
    ),
}
# other spellings read as a month (language, month number, form the shifted month is written in)
_MONTH_VARIANTS: dict[str, tuple[str, int, str]] = {
    "setiembre": ("es", 9, "full"), "sept": ("es", 9, "abbr"), "set": ("es", 9, "abbr"),
}
_WEEKDAYS: dict[str, tuple[str, ...]] = {  # Monday first, as datetime.weekday()
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "sv": ("måndag", "tisdag", "onsdag", "torsdag", "fredag", "lördag", "söndag"),
    "it": ("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"),
}
# Words that may stand between or around the parts of a date and are kept as written.
_CONNECTORS = frozenset(
    """
    de del el la los las y e o a al en desde hasta entre ano anos mes meses dia dias principios mediados finales
    primavera verano otono invierno
    of the and or to in on from until between year month day early mid late beginning end spring summer autumn
    fall winter
    den och eller till i pa fran ar aret manad manaden dag dagen varen sommaren hosten vintern var sommar host
    vinter
    di dell il lo e anno mese giorno dal fino estate autunno inverno
    """.split()
)
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})

_NUMERIC_DATE = re.compile(
    r"(?<!\d)(?:"
    r"(?P<iy>\d{4})(?P<isep>[-/.])(?P<im>\d{1,2})(?P=isep)(?P<id>\d{1,2})"
    r"|(?P<a>\d{1,2})(?P<sep>[-/.])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2})"
    r"|(?P<ymy>\d{4})-(?P<ymm>\d{1,2})"
    r"|(?P<mym>\d{1,2})(?P<mysep>[-/.])(?P<myy>\d{4})"
    r")(?![\d/.-]\d|\d)"
)
_PIECE = re.compile(r"(?P<num>\d+)|(?P<word>[^\W\d_]+\.?)|(?P<space>\s+)|(?P<punct>.)", re.UNICODE)


def month_shift(days: int) -> int:
    """Months a month-level date moves for a shift of ``days``."""
    return round(days / _DAYS_PER_MONTH)


def year_shift(days: int) -> int:
    """Years a year-level date moves for a shift of ``days``."""
    return round(days / _DAYS_PER_YEAR)


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).rstrip(".")


def _month_lookup() -> dict[str, list[tuple[str, int, str]]]:
    table: dict[str, list[tuple[str, int, str]]] = {}
    for language, (full, abbr) in _MONTHS.items():
        for form, names in (("full", full), ("abbr", abbr)):
            for i, name in enumerate(names):
                entry = (language, i + 1, form)
                if entry not in table.setdefault(_fold(name), []):
                    table[_fold(name)].append(entry)
    for variant, entry in _MONTH_VARIANTS.items():
        table.setdefault(variant, []).append(entry)
    return table


_MONTH_LOOKUP = _month_lookup()
_WEEKDAY_LOOKUP = {
    _fold(name): (language, i) for language, names in _WEEKDAYS.items() for i, name in enumerate(names)
}
_WEEKDAY_LOOKUP.update({_fold(name[:3]): ("en", i) for i, name in enumerate(_WEEKDAYS["en"])})


def _month_of(word: str, language: str) -> tuple[str, int, str] | None:
    entries = _MONTH_LOOKUP.get(_fold(word))
    if not entries:
        return None
    for entry in entries:
        if entry[0] == language:
            return entry
    return entries[0]


def _with_case(new: str, old: str) -> str:
    """``new`` in the case of ``old``: UPPER, Capitalised or lower."""
    core = old.rstrip(".")
    if len(core) > 1 and core.isupper():
        return new.upper()
    if core[:1].isupper():
        return new[:1].upper() + new[1:]
    return new.lower()


def _year_text(year: int, original: str) -> str:
    return f"{year % 100:02d}" if len(original) == 2 else str(year).zfill(len(original))


def _part_text(value: int, original: str, fixed_width: bool) -> str:
    """A day or month written like ``original``: numeric dates keep their width, others their zero-padding."""
    width = len(original) if fixed_width or original.startswith("0") else 1
    return str(value).zfill(width)


def _full_year(text: str) -> int:
    if len(text) == 2:
        value = int(text)
        return 2000 + value if value <= 30 else 1900 + value
    return int(text)


def _ordinal(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _add_months(year: int, month: int, months: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + months
    return index // 12, index % 12 + 1


def _valid(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


@dataclass
class _Piece:
    kind: str  # num, word, punct
    text: str
    start: int
    end: int
    used: bool = False


@dataclass
class _Group:
    """One date found in the text: which parts it has and where each is written."""

    month: _Piece | None = None
    month_entry: tuple[str, int, str] | None = None
    day: _Piece | None = None
    year: _Piece | None = None
    suffix: _Piece | None = None


def shift_date_text(text: str, days: int, language: str = "es") -> str | None:
    """``text`` with every date in it moved by ``days`` (see the module notes); ``None`` if unreadable."""
    if not text.strip():
        return None
    edits: list[tuple[int, int, str]] = []
    full_dates: list[dt.date] = []
    months, years = month_shift(days), year_shift(days)
    # 1. numeric dates
    covered: list[tuple[int, int]] = []
    for m in _NUMERIC_DATE.finditer(text):
        covered.append(m.span())
        if m.group("iy"):
            year, month, day = int(m.group("iy")), int(m.group("im")), int(m.group("id"))
            if not _valid(year, month, day):
                return None
            new = dt.date(year, month, day) + dt.timedelta(days=days)
            edits += [(*m.span("iy"), _year_text(new.year, m.group("iy"))),
                      (*m.span("im"), _part_text(new.month, m.group("im"), True)),
                      (*m.span("id"), _part_text(new.day, m.group("id"), True))]
            full_dates.append(new)
        elif m.group("a"):
            year = _full_year(m.group("y"))
            orders = [("a", "b"), ("b", "a")] if language != "en" else [("b", "a"), ("a", "b")]
            for day_group, month_group in orders:
                day, month = int(m.group(day_group)), int(m.group(month_group))
                if _valid(year, month, day):
                    break
            else:
                return None
            new = dt.date(year, month, day) + dt.timedelta(days=days)
            edits += [(*m.span(day_group), _part_text(new.day, m.group(day_group), True)),
                      (*m.span(month_group), _part_text(new.month, m.group(month_group), True)),
                      (*m.span("y"), _year_text(new.year, m.group("y")))]
            full_dates.append(new)
        else:
            ytext, mtext = (m.group("ymy"), m.group("ymm")) if m.group("ymy") else (m.group("myy"), m.group("mym"))
            yspan, mspan = (m.span("ymy"), m.span("ymm")) if m.group("ymy") else (m.span("myy"), m.span("mym"))
            if not 1 <= int(mtext) <= 12:
                return None
            new_year, new_month = _add_months(int(ytext), int(mtext), months)
            edits += [(*yspan, _year_text(new_year, ytext)), (*mspan, _part_text(new_month, mtext, True))]
    # 2. the rest, piece by piece
    pieces: list[_Piece] = []
    for m in _PIECE.finditer(text):
        if m.lastgroup == "space" or any(s <= m.start() < e for s, e in covered):
            continue
        pieces.append(_Piece(m.lastgroup or "punct", m.group(), m.start(), m.end()))
    groups: list[_Group] = []
    for i, piece in enumerate(pieces):
        if piece.kind != "word" or piece.used:
            continue
        entry = _month_of(piece.text, language)
        if entry is None:
            continue
        piece.used = True
        group = _Group(month=piece, month_entry=entry)
        _find_day_before(pieces, i, group)
        j = _find_day_after(pieces, i, group, language)
        _find_year_after(pieces, j, group)
        groups.append(group)
    for piece in pieces:  # a four-digit number on its own is a year
        if piece.kind == "num" and not piece.used and len(piece.text) == 4 and 1000 <= int(piece.text) <= 2999:
            piece.used = True
            groups.append(_Group(year=piece))
    weekdays: list[_Piece] = []
    for piece in pieces:
        if piece.used or piece.kind == "punct":
            continue
        if piece.kind == "num":
            return None
        folded = _fold(piece.text)
        if folded in _WEEKDAY_LOOKUP:
            weekdays.append(piece)
        elif folded not in _CONNECTORS:
            return None
    for group in groups:
        edit = _shift_group(group, days, months, years, full_dates)
        if edit is None:
            return None
        edits += edit
    if weekdays:
        if len(full_dates) != 1:
            return None
        weekday = full_dates[0].weekday()
        for piece in weekdays:
            wlanguage, _ = _WEEKDAY_LOOKUP[_fold(piece.text)]
            name = _WEEKDAYS[wlanguage][weekday]
            core = piece.text.rstrip(".")
            if len(_fold(core)) == 3 and len(_fold(name)) > 3:
                name = name[:3]
            edits.append((piece.start, piece.start + len(core), _with_case(name, core)))
    if not edits:
        return None
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    return out


def _previous(pieces: list[_Piece], i: int) -> _Piece | None:
    return pieces[i - 1] if i > 0 else None


def _find_day_before(pieces: list[_Piece], i: int, group: _Group) -> None:
    """"17 de marzo", "17 marzo", "17-marzo-", "17th of March", "the 17th of March"."""
    j = i - 1
    if j >= 0 and (pieces[j].kind == "punct" and pieces[j].text in "-./" or _fold(pieces[j].text) in ("de", "of")):
        j -= 1
    suffix = None
    if j >= 0 and pieces[j].kind == "word" and _fold(pieces[j].text) in _ORDINAL_SUFFIXES:
        suffix = pieces[j]
        j -= 1
    if (j >= 0 and pieces[j].kind == "num" and not pieces[j].used and len(pieces[j].text) <= 2
            and 1 <= int(pieces[j].text) <= 31 and (suffix is None or suffix.start == pieces[j].end)):
        pieces[j].used = True
        group.day = pieces[j]
        if suffix is not None:
            suffix.used = True
            group.suffix = suffix


def _find_day_after(pieces: list[_Piece], i: int, group: _Group, language: str) -> int:
    """"March 17, 2009", "March 17th": a day after the month. Returns the index to look for a year from."""
    j = i + 1
    if group.day is not None or j >= len(pieces) or pieces[j].kind != "num" or len(pieces[j].text) > 2:
        return j
    number = pieces[j]
    if not 1 <= int(number.text) <= 31:
        return j
    k = j + 1
    suffix = None
    if k < len(pieces) and pieces[k].kind == "word" and _fold(pieces[k].text) in _ORDINAL_SUFFIXES \
            and pieces[k].start == number.end:
        suffix = pieces[k]
        k += 1
    then_year = k < len(pieces) and (
        pieces[k].text == "," or (pieces[k].kind == "num" and len(pieces[k].text) == 4)
    )
    if suffix is not None or then_year or language == "en":
        number.used = True
        group.day = number
        if suffix is not None:
            suffix.used = True
            group.suffix = suffix
        return k
    return j


def _find_year_after(pieces: list[_Piece], j: int, group: _Group) -> None:
    """"de 2009", "del 2009", "del año 2000", ", 2009", "-08", " '09", "of 2009"."""
    k = j
    while k < len(pieces) and (
        (pieces[k].kind == "punct" and pieces[k].text in ",-/.'’")
        or _fold(pieces[k].text) in ("de", "del", "ano", "of", "year", "ar", "anno", "di")
    ):
        k += 1
    if (k < len(pieces) and pieces[k].kind == "num" and not pieces[k].used and len(pieces[k].text) in (2, 4)
            and (len(pieces[k].text) == 2 or 1000 <= int(pieces[k].text) <= 2999)):
        pieces[k].used = True
        group.year = pieces[k]


def _month_name(entry: tuple[str, int, str], month: int, original: str) -> str:
    language, _, form = entry
    full, abbr = _MONTHS[language]
    name = (full if form == "full" else abbr)[month - 1]
    dot = "." if original.endswith(".") and form == "abbr" else ""
    return _with_case(name, original.rstrip(".")) + dot


def _shift_group(group: _Group, days: int, months: int, years: int,
                 full_dates: list[dt.date]) -> list[tuple[int, int, str]] | None:
    edits: list[tuple[int, int, str]] = []
    if group.month is None:  # a year alone
        assert group.year is not None
        return [(group.year.start, group.year.end, _year_text(int(group.year.text) + years, group.year.text))]
    assert group.month_entry is not None
    month = group.month_entry[1]
    if group.day is not None:
        day = int(group.day.text)
        year = _full_year(group.year.text) if group.year else (2000 if (month, day) == (2, 29) else 2001)
        if not _valid(year, month, day):
            return None
        new = dt.date(year, month, day) + dt.timedelta(days=days)
        new_year, new_month, new_day = new.year, new.month, new.day
        edits.append((group.day.start, group.day.end, _part_text(new_day, group.day.text, False)))
        if group.suffix is not None:
            edits.append((group.suffix.start, group.suffix.end, _with_case(_ordinal(new_day), group.suffix.text)))
        if group.year is not None:
            full_dates.append(new)
    else:
        base_year = _full_year(group.year.text) if group.year else 2001
        new_year, new_month = _add_months(base_year, month, months)
    edits.append((group.month.start, group.month.end, _month_name(group.month_entry, new_month, group.month.text)))
    if group.year is not None:
        edits.append((group.year.start, group.year.end, _year_text(new_year, group.year.text)))
    return edits
