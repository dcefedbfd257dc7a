"""Structured PHI that a pattern finds: e-mail, URL, IP, phone and fax numbers, national and social-security
numbers, record numbers, postcodes and dates — the one home of these patterns.

A tagger that misses a PHI token leaks it, and some PHI has a shape a pattern can prove: a DNI whose check
letter is right, a social-security number whose mod-97 control is right, an e-mail address, a date with a
valid day and month. Each :class:`Pattern` has a name, the kind of PHI it finds (``"phone"``, ``"date"``,
…; :data:`KIND_LABELS` says which label that kind is in each label schema), the languages it applies to and
a precision class:

- ``"sure"``: the text proves it — a checksum, an unambiguous format (an e-mail address, a full date, a
  phone number in phone grouping) or a keyword that names it ("NHC:", "NASS:", "Tel.:", "CP:");
- ``"likely"``: the shape fits but the text could be something else (nine digits in a row, five digits
  before a town's name, a month and a year in digits).

Three uses:

- :func:`find` — the matches over a whole text, widened or cut to the tokens of
  :func:`corpus.text.tokenize`, so each can become a span;
- :func:`merge` — sure matches added to a model's spans where the model has nothing (the rule is in its
  docstring);
- :func:`token_pattern_names` — per token, the patterns whose match covers it, for CRF attributes
  (``"pat:dni"``).
"""
from __future__ import annotations

import ipaddress
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Mapping, Sequence

from corpus.text import Token, tokenize
from corpus.types import Span

__all__ = [
    "SURE",
    "LIKELY",
    "KIND_LABELS",
    "Pattern",
    "Match",
    "PATTERNS",
    "BY_NAME",
    "patterns_for",
    "labels_for_kind",
    "find",
    "non_overlapping",
    "merge",
    "token_pattern_names",
    "dni_letter",
    "nuss_is_valid",
    "cif_is_valid",
]

SURE = "sure"
LIKELY = "likely"

#: Kind of PHI -> the labels it can be in each preset of ``annotator.schemas`` (repeated here because
#: learning.core may not import annotator; a unit test keeps the labels within the presets). The first
#: label is the one a pattern gives when a model has not chosen another of them.
KIND_LABELS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "MEDDOCAN": {
        "email": ("CORREO_ELECTRONICO",),
        "url": ("URL_WEB",),
        "ip": ("DIREC_PROT_INTERNET",),
        "phone": ("NUMERO_TELEFONO", "NUMERO_FAX"),
        "fax": ("NUMERO_FAX", "NUMERO_TELEFONO"),
        "national_id": ("ID_SUJETO_ASISTENCIA", "OTRO_NUMERO_IDENTIF"),
        "organisation_id": ("OTRO_NUMERO_IDENTIF",),
        "social_security": ("ID_ASEGURAMIENTO", "NUMERO_BENEF_PLAN_SALUD", "OTRO_NUMERO_IDENTIF"),
        "medical_record": ("ID_SUJETO_ASISTENCIA",),
        "encounter": ("ID_CONTACTO_ASISTENCIAL",),
        "licence": ("ID_TITULACION_PERSONAL_SANITARIO",),
        "postcode": ("TERRITORIO",),
        "date": ("FECHAS",),
    },
    "i2b2-2014": {
        "email": ("EMAIL",),
        "url": ("URL",),
        "ip": ("URL", "IDNUM"),
        "phone": ("PHONE", "FAX"),
        "fax": ("FAX", "PHONE"),
        "national_id": ("IDNUM", "SSN"),
        "organisation_id": ("IDNUM",),
        "social_security": ("SSN", "HEALTHPLAN"),
        "medical_record": ("MEDICALRECORD",),
        "encounter": ("IDNUM", "ACCOUNT"),
        "licence": ("LICENSE",),
        "postcode": ("ZIP",),
        "date": ("DATE",),
    },
    "HIPAA-18": {
        "email": ("EMAIL",),
        "url": ("URL",),
        "ip": ("IP_ADDRESS",),
        "phone": ("TELEPHONE", "FAX"),
        "fax": ("FAX", "TELEPHONE"),
        "national_id": ("OTHER_UNIQUE_IDENTIFIER", "SSN"),
        "organisation_id": ("OTHER_UNIQUE_IDENTIFIER",),
        "social_security": ("SSN", "HEALTH_PLAN_BENEFICIARY_NUMBER"),
        "medical_record": ("MEDICAL_RECORD_NUMBER",),
        "encounter": ("ACCOUNT_NUMBER", "OTHER_UNIQUE_IDENTIFIER"),
        "licence": ("CERTIFICATE_LICENSE_NUMBER",),
        "postcode": ("GEOGRAPHIC_SUBDIVISION",),
        "date": ("DATE",),
    },
    "Stockholm-EPR": {
        "phone": ("Phone_Number",),
        "fax": ("Phone_Number",),
        "postcode": ("Location",),
        "date": ("Full_Date", "Date_Part"),
    },
}


def labels_for_kind(kind: str, schema_labels: Collection[str]) -> tuple[str, ...]:
    """The labels of a project's label set that ``kind`` can be, in preference order (presets in turn).

    A custom schema that reuses preset label names is served too; a kind none of whose labels the project
    has gives ``()`` and its matches never become spans.
    """
    out: list[str] = []
    for kinds in KIND_LABELS.values():
        for label in kinds.get(kind, ()):
            if label in schema_labels and label not in out:
                out.append(label)
    return tuple(out)


# --- checks --------------------------------------------------------------------------------------------

_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni_letter(number: int) -> str:
    """The check letter of a DNI (and, with the prefix digit, of a NIE): the number modulo 23."""
    return _DNI_LETTERS[number % 23]


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _check_dni(text: str) -> bool:
    compact = re.sub(r"[\s.-]", "", text)
    return dni_letter(int(compact[:-1])) == compact[-1]


def _check_nie_nif(text: str) -> bool:
    """NIE (X/Y/Z = 0/1/2 before the digits) and the personal NIF K/L/M (the digits alone), mod 23."""
    compact = re.sub(r"[\s-]", "", text)
    prefix = "XYZ".find(compact[0])
    number = int((str(prefix) if prefix >= 0 else "") + compact[1:-1])
    return dni_letter(number) == compact[-1]


def cif_is_valid(text: str) -> bool:
    """A CIF (organisation tax code): letter, seven digits, control digit or letter.

    Control: the digits in even places plus the digit sums of twice those in odd places; its complement
    to ten is the control digit, or that digit's letter in "JABCDEFGHI". Organisations P, Q, R, S, N, W
    take the letter, A, B, E, H the digit, others either.
    """
    compact = re.sub(r"[\s-]", "", text).upper()
    if len(compact) != 9 or not compact[1:8].isdigit():
        return False
    kind, body, control = compact[0], compact[1:8], compact[8]
    total = sum(int(body[i]) for i in (1, 3, 5))
    for i in (0, 2, 4, 6):
        twice = 2 * int(body[i])
        total += twice // 10 + twice % 10
    digit = (10 - total % 10) % 10
    letter = "JABCDEFGHI"[digit]
    if kind in "PQRSNW":
        return control == letter
    if kind in "ABEH":
        return control == str(digit)
    return control in (str(digit), letter)


def nuss_is_valid(text: str) -> bool:
    """A Spanish social-security number (NUSS/NASS): 2 province digits, up to 8 digits, 2 control digits.

    The control is the number modulo 97, where the number is province·10⁷ + body when the body is below
    10⁷ and the province followed by the body's 8 digits otherwise (the Seguridad Social's rule).
    """
    digits = _digits(text)
    if len(digits) != 12:
        return False
    province, body, control = int(digits[:2]), int(digits[2:10]), int(digits[10:])
    number = province * 10_000_000 + body if body < 10_000_000 else int(digits[:10])
    return number % 97 == control


def _check_ipv4(text: str) -> bool:
    parts = text.split(".")
    return all(p == "0" or (not p.startswith("0") and int(p) <= 255) for p in parts)


def _check_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return sum(1 for g in text.split(":") if g) >= 3


def _valid_day_month(day: int, month: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31)


def _valid_year(year: str) -> bool:
    return len(year) == 2 or 1850 <= int(year) <= 2099


def _check_numeric_date(text: str) -> bool:
    parts = re.split(r"[/.-]", text)
    if len(parts[0]) == 4:
        year, month, day = parts
        return _valid_year(year) and _valid_day_month(int(day), int(month))
    a, b, year = parts
    if "." in text and len(year) == 2:
        return False  # "1.2.10" is a section number far more often than a date
    # Day first (Spanish, British) or month first (US): either reading must be a real date.
    return _valid_year(year) and (_valid_day_month(int(a), int(b)) or _valid_day_month(int(b), int(a)))


_PHONE_SHAPES_ES = frozenset({(9,), (3, 3, 3), (3, 2, 2, 2), (2, 3, 2, 2), (2, 7), (3, 6)})


def _national_groups(text: str) -> tuple[str, list[str]]:
    """(separators used, digit groups) of a number after an international prefix is dropped."""
    body = re.sub(r"^(?:\(?(?:\+ ?|00)34\)?[ .-]?)", "", text)
    separators = "".join(sorted(set(re.findall(r"[ .-]", body))))
    return separators, re.split(r"[ .-]", body)


def _check_phone_es_grouped(text: str) -> bool:
    separators, groups = _national_groups(text)
    return len(separators) == 1 and tuple(len(g) for g in groups) in _PHONE_SHAPES_ES


def _check_phone_keyed(text: str) -> bool:
    digits = _digits(text)
    # A keyword names it, so any plausible length: 6-digit local numbers to 15-digit E.164.
    return 6 <= len(digits) <= 15


def _check_phone_intl(text: str) -> bool:
    digits = _digits(text.replace("+", "", 1)) if text.startswith("+") else _digits(text)[2:]
    return 8 <= len(digits) <= 15


def _check_record(text: str) -> bool:
    return sum(c.isdigit() for c in text) >= 4


def _check_long_id(text: str) -> bool:
    return 6 <= sum(c.isdigit() for c in text) <= 14


def _check_ssn_us(text: str) -> bool:
    area, group, serial = re.split(r"[ -]", text)
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


# --- patterns ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """A pattern for one kind of PHI. ``regex`` marks the PHI with a group named ``phi`` when it also
    matches context (a keyword); ``check`` validates the PHI text (a checksum, a real date)."""

    name: str
    kind: str
    precision: str
    languages: frozenset[str] | None  # None: every language
    regex: re.Pattern
    check: Callable[[str], bool] | None = None

    def applies_to(self, language: str | None) -> bool:
        return language is None or self.languages is None or language in self.languages

    def labels(self, schema: str) -> tuple[str, ...]:
        """The labels this pattern's matches can be in the preset ``schema`` (``()``: none)."""
        return KIND_LABELS.get(schema, {}).get(self.kind, ())

    @property
    def sure(self) -> bool:
        return self.precision == SURE


@dataclass(frozen=True, slots=True, order=True)
class Match:
    """A pattern's match ``text[start:end]`` on token boundaries; ``kind`` is its PHI type (see
    :data:`KIND_LABELS`)."""

    start: int
    end: int
    pattern: str
    kind: str
    precision: str


_ES = frozenset({"es"})
_EN = frozenset({"en"})
_I = re.IGNORECASE

# Context keywords end with optional "nº"/"no."/"#" and a colon, on the same line as the value.
_SP = r"[ \t]*"
_NUMBER_SIGN = rf"(?:{_SP}(?:n[º°o]\.?|n[uú]m(?:ero|\.)?|no\.|number|#))?"
_AFTER_KEY = rf"\.?{_NUMBER_SIGN}{_SP}[:.=-]?{_SP}"
# A number in groups joined by single spaces, dots or hyphens.
_GROUPED_DIGITS = r"\d(?:[ .-]?\d)*"
# Digits not to be carved out of a longer number or word, and a number not followed by a decimal part.
_NUM_BEFORE = r"(?<![\w+.,/-])"
_NUM_AFTER = r"(?![\w/]|[.,-]\d)"
# A unit after a number makes it a measurement ("120 mg", "12 500 UI"), never a phone or an ID.
_NO_UNIT = r"(?![ \t]*(?:(?:mg|g|kg|ml|mL|l|dl|mm|cm|mmHg|UI|U|ui|mcg|mEq|mmol|cel|copias)\b|%|µ))"

_ES_MONTHS = r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre"
_ES_MONTHS_SHORT = r"ene|feb|mar|abr|may|jun|jul|ago|sept?|oct|nov|dic"
_EN_MONTHS = r"January|February|March|April|May|June|July|August|September|October|November|December"
_EN_MONTHS_SHORT = r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec"
_YEAR4 = r"(?:1[89]\d\d|20\d\d)"
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|"
    "OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY"
)
_PHONE_KEYS = r"tel[eé]fonos?|tel[eé]f|telf|tel|tfno|tlfno?|tlf|m[oó]vil|phone|cell|mobile|contacto telef[oó]nico"
_PHONE_BODY = rf"(?:\(?(?:\+ ?|00)\d{{1,3}}\)?(?:[ .-]|- )?|\(\d{{2,4}}\)[ .-]?)?{_GROUPED_DIGITS}"


# "3 de marzo de 2019", "3 marzo", "marzo del 2019", "diciembre-08", "3-mar-2019", "dic. 2018": an
# abbreviated month only with a year ("mar", "may" are words too).
_ES_DAY = r"(?:[0-2]?\d|3[01])(?:º|o)?"
_ES_YEAR_SEP = rf"(?:{_SP}(?:de(?:l)?{_SP}|[-/,]{_SP})?(?:año{_SP})?)"
_DATE_ES = (
    rf"\b(?:{_ES_DAY}{_SP}(?:de{_SP}|[-/]{_SP})?(?:{_ES_MONTHS})(?:{_ES_YEAR_SEP}{_YEAR4}|[-/]\d\d)?"
    rf"|{_ES_DAY}{_SP}[-/.]?{_SP}(?:{_ES_MONTHS_SHORT})\.?{_SP}[-/]?{_SP}(?:{_YEAR4}|\d\d)"
    rf"|(?:{_ES_MONTHS}){_ES_YEAR_SEP}{_YEAR4}"
    rf"|(?:{_ES_MONTHS}|(?:{_ES_MONTHS_SHORT})\.?)[-/]\d\d"
    rf"|(?:{_ES_MONTHS_SHORT})\.?{_SP}[-/]?{_SP}{_YEAR4})(?!\w)"
)


def _p(name, kind, precision, languages, regex, check=None, flags=0) -> Pattern:
    return Pattern(name, kind, precision, languages, re.compile(regex, flags | re.UNICODE), check)


#: Every pattern, in priority order: where sure matches overlap, the longer wins, then the earlier here.
PATTERNS: tuple[Pattern, ...] = (
    # Internet ---------------------------------------------------------------------------------------------
    _p("email", "email", SURE, None,
       r"(?<![\w.+-])(?:(?i:e-?mail|mail)[.:-])?(?P<phi>\w[\w+-]*(?:\.[\w+-]+)*@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,})"
       r"(?![\w-])"),
    # After its keyword an address is one even without a domain suffix ("Correo electrónico: ana@clinica").
    _p("email_keyed", "email", SURE, None,
       rf"\b(?:correo(?:{_SP}electr[oó]nico)?|e-?mail|correo-e){_SP}:{_SP}"
       rf"(?P<phi>\w[\w+-]*(?:\.[\w+-]+)*@[\w-]+(?:\.[\w-]+)*)(?![\w@-])", flags=_I),
    _p("url", "url", SURE, None,
       r"(?<![\w@.])(?:https?://|ftp://|www\.)[^\s<>\"'()\[\]{}]*[^\s<>\"'()\[\]{}.,;:!?]", flags=_I),
    _p("domain", "url", LIKELY, None,
       r"(?<![\w@./-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|org|net|es|eus|cat|gal|edu|gov|info)"
       r"(?:/[^\s<>\"'()\[\]{}]*[^\s<>\"'()\[\]{}.,;:!?])?(?![\w@-])"),
    _p("ipv4", "ip", SURE, None, r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)", _check_ipv4),
    _p("ipv6", "ip", SURE, None, r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:.])", _check_ipv6),
    # Identity numbers ----------------------------------------------------------------------------------------
    _p("dni", "national_id", SURE, _ES, r"(?<![\w.-])(?:\d{7,8}|\d{1,2}\.\d{3}\.\d{3})[ -]?[A-Z](?![\w-])", _check_dni),
    _p("nie_nif", "national_id", SURE, _ES, r"(?<![\w-])[XYZKLM][ -]?\d{7}[ -]?[A-Z](?![\w-])", _check_nie_nif),
    _p("cif", "organisation_id", SURE, _ES, r"(?<![\w-])[ABCDEFGHJNPQRSUVW][ -]?\d{7}[0-9A-J](?![\w-])", cif_is_valid),
    _p("nuss", "social_security", SURE, _ES,
       rf"{_NUM_BEFORE}\d{{2}}(?P<sep>[ /-]?)\d{{8}}(?P=sep)\d{{2}}{_NUM_AFTER}", nuss_is_valid),
    _p("nass_keyed", "social_security", SURE, _ES,
       rf"\b(?:NASS|NUSS|NSS|NAF|n[º°o]\.?{_SP}(?:de{_SP})?(?:afiliaci[oó]n|(?:la{_SP})?seguridad social|S\.?S\.?)"
       rf"|n[uú]mero de (?:afiliaci[oó]n|(?:la )?seguridad social))\b{_AFTER_KEY}"
       rf"(?P<phi>\d+(?:[ /-]\d+){{0,4}}){_NUM_AFTER}", _check_long_id, flags=_I),
    _p("ssn_us", "social_security", SURE, _EN, rf"{_NUM_BEFORE}\d{{3}}-\d{{2}}-\d{{4}}{_NUM_AFTER}", _check_ssn_us),
    _p("record_number", "medical_record", SURE, None,
       rf"(?:\b(?:N\.?H\.?C|H\.?C|MRN|CIPA?)\b"
       rf"|\b(?:n[º°o]\.?|n[uú]mero){_SP}(?:de{_SP})?historia(?:{_SP}cl[ií]nica)?|\bhistoria{_SP}cl[ií]nica"
       rf"|\b(?:(?:medical{_SP})?record|chart|unit){_SP}(?:n[º°o]\.?|number|#)){_AFTER_KEY}"
       rf"(?:nhc{_SP}[-:/]?{_SP})?(?P<phi>\d+(?:[ /-]\d+){{1,3}}|[A-Z]{{0,3}}-?\d[\w/-]*\d|\d){_NUM_AFTER}",
       _check_record, flags=_I),
    _p("episode", "encounter", SURE, None,
       rf"\b(?:episodio|episode|n[º°o]\.?{_SP}de{_SP}episodio|encounter){_AFTER_KEY}"
       rf"(?P<phi>\d[\w/-]*\d){_NUM_AFTER}", _check_record, flags=_I),
    _p("licence", "licence", SURE, _ES,
       rf"\b(?:N[º°o]\.?{_SP}(?:de{_SP})?Col(?:egiado)?|Col(?:egiado)?{_SP}n[º°o]|colegiad[oa]){_AFTER_KEY}"
       rf"(?P<phi>\d+(?:[ /-]{{1,2}}\d+){{0,3}}){_NUM_AFTER}", _check_record, flags=_I),
    # Phones ---------------------------------------------------------------------------------------------------
    _p("fax_keyed", "fax", SURE, None,
       rf"\b(?:fax|telefax){_AFTER_KEY}(?P<phi>{_PHONE_BODY}){_NUM_AFTER}{_NO_UNIT}", _check_phone_keyed, flags=_I),
    _p("phone_keyed", "phone", SURE, None,
       rf"\b(?:{_PHONE_KEYS})\b(?:\.?{_SP}(?:y|and|/|-){_SP}fax)?{_AFTER_KEY}(?P<phi>{_PHONE_BODY})"
       rf"{_NUM_AFTER}{_NO_UNIT}", _check_phone_keyed, flags=_I),
    _p("phone_intl", "phone", SURE, None,
       rf"(?<![\w+])(?:\+ ?|\b00)[1-9]\d{{0,2}}(?:[ .-]?\(\d{{1,4}}\))?(?:[ .-]?\d){{6,13}}{_NUM_AFTER}{_NO_UNIT}",
       _check_phone_intl),
    _p("phone_es", "phone", SURE, _ES,
       rf"{_NUM_BEFORE}(?:\(?(?:\+ ?|00)34\)?[ .-]?)?[6-9]\d(?:[ -]?\d){{7}}{_NUM_AFTER}{_NO_UNIT}(?![ -]\d)",
       _check_phone_es_grouped),
    _p("phone_es_plain", "phone", LIKELY, _ES, rf"{_NUM_BEFORE}[6-9]\d{{8}}{_NUM_AFTER}{_NO_UNIT}"),
    _p("phone_us", "phone", SURE, _EN,
       rf"(?<![\w+(.-])(?:\+?1[ .-]?)?"
       rf"(?:\([2-9]\d{{2}}\)[ ]?[2-9]\d{{2}}[.-]|[2-9]\d{{2}}(?P<s>[.-])[2-9]\d{{2}}(?P=s))\d{{4}}{_NUM_AFTER}"),
    # Places ---------------------------------------------------------------------------------------------------
    _p("postcode_es_keyed", "postcode", SURE, _ES,
       rf"(?:\bC\.?{_SP}P\b\.?|\bc[oó]d(?:igo|\.)?{_SP}postal){_SP}[:.]?{_SP}"
       rf"(?P<phi>(?:E-)?(?:0[1-9]|[1-4]\d|5[0-2])\d{{3}}){_NUM_AFTER}", flags=_I),
    _p("postcode_es_town", "postcode", LIKELY, _ES,
       r"(?<![\w.,/-])(?P<phi>(?:0[1-9]|[1-4]\d|5[0-2])\d{3})(?:[ \t]*[-,]?[ \t]*)"
       r"(?=[A-ZÁÉÍÓÚÑ][a-záéíóúñüç]|L'|A\s+Coruña)"),
    _p("zip_us_keyed", "postcode", SURE, _EN,
       rf"\bzip(?:{_SP}code)?{_SP}[:.]?{_SP}(?P<phi>\d{{5}}(?:-\d{{4}})?)(?![\w-])", flags=_I),
    _p("zip_us", "postcode", SURE, _EN, rf"\b(?:{_US_STATES})\.?,?[ \t]+(?P<phi>\d{{5}}(?:-\d{{4}})?)(?![\w-])"),
    # Dates ----------------------------------------------------------------------------------------------------
    _p("date_numeric", "date", SURE, None,
       r"(?<![\w/.,-])(?:\d{4}(?P<s1>[/.-])\d{1,2}(?P=s1)\d{1,2}|\d{1,2}(?P<s2>[/.-])\d{1,2}(?P=s2)(?:\d{4}|\d{2}))"
       r"(?![\w/-]|[.,]\d)", _check_numeric_date),
    # A keyed date keeps its typing errors ("Fecha de ingreso: 27/011/2014", "12/04 /2011").
    _p("date_keyed", "date", SURE, None,
       rf"(?:\bfecha(?:{_SP}de(?:l)?{_SP}[^\W\d_]+)?|\bDOB|\bdate{_SP}of{_SP}(?:birth|admission|discharge)"
       rf"|\b(?:admission|discharge|birth){_SP}date){_SP}:{_SP}"
       rf"(?P<phi>\d{{1,2}}[/.-]{_SP}\d{{1,3}}{_SP}[/.-]{{1,2}}{_SP}\d{{2,4}}|\d{{4,5}}/\d{{4}}){_NUM_AFTER}",
       flags=_I),
    # A year or a month after a word that dates it ("en 2012", "desde el año 2000", "en junio", "in 1998"):
    # PHI in MEDDOCAN (not a year alone in HIPAA), and the same words precede counts often enough to keep it
    # likely.
    _p("date_in_context", "date", LIKELY, None,
       rf"\b(?:en|desde|hasta|entre|mes{_SP}de|a{_SP}(?:finales|principios|mediados){_SP}de|in|since|until|year)"
       rf"(?:[ \t]+(?:el|del|los|the))?[ \t]+(?P<phi>(?:año[ \t]+)?{_YEAR4}{_NUM_AFTER}{_NO_UNIT}"
       rf"|(?:(?-i:{_EN_MONTHS})|{_ES_MONTHS})(?!{_ES_YEAR_SEP}\d|[-/]\d))(?!\w)", flags=_I),
    # Titres ("1/2048") look like a month and a year; they are powers of two beyond the years allowed.
    _p("date_month_year_numeric", "date", LIKELY, None,
       r"(?<![\w/.,-])(?:0?[1-9]|1[0-2])[/-](?:19\d\d|20[0-3]\d)(?![\w/-]|[.,]\d)"),
    _p("date_es", "date", SURE, _ES, _DATE_ES, flags=_I),
    _p("date_en", "date", SURE, _EN,
       rf"\b(?:(?:[0-2]?\d|3[01])(?:st|nd|rd|th)?{_SP}(?:of{_SP})?(?:{_EN_MONTHS}|(?:{_EN_MONTHS_SHORT})\b\.?)"
       rf"(?:,?{_SP}{_YEAR4})?"
       rf"|(?:{_EN_MONTHS}|(?:{_EN_MONTHS_SHORT})\b\.?){_SP}(?:(?:[0-2]?\d|3[01])(?:st|nd|rd|th)?\b(?:,?{_SP}{_YEAR4})?"
       rf"|,?{_SP}{_YEAR4}))(?!\w)"),
)
BY_NAME: Mapping[str, Pattern] = {p.name: p for p in PATTERNS}
_ORDER = {p.name: i for i, p in enumerate(PATTERNS)}


def _language_code(language: str | None) -> str | None:
    if not language:
        return None
    return language.split("-")[0].split("_")[0].lower()


def patterns_for(language: str | None) -> list[Pattern]:
    """The patterns that apply to ``language`` ("es", "en", "es-ES"…); ``None``: every pattern."""
    code = _language_code(language)
    return [p for p in PATTERNS if p.applies_to(code)]


# --- matching and token alignment ----------------------------------------------------------------------


def _align(start: int, end: int, text: str, starts: list[int], ends: list[int]) -> tuple[int, int] | None:
    """``[start, end)`` widened to the tokens it overlaps, less a token at either end that it covers only
    in part and only with punctuation or spaces; ``None`` when nothing is left.

    A token cut in the middle by a match is taken whole (a span cannot end inside a token); a token the
    match merely touches with a stray stop or bracket is left out. A bracket the match covers whole, as in
    "(+34) 91…", stays in.
    """
    first = bisect_right(ends, start)
    last = bisect_left(starts, end)

    def kept(i: int) -> bool:
        whole = start <= starts[i] and ends[i] <= end
        return whole or any(c.isalnum() for c in text[max(start, starts[i]) : min(end, ends[i])])

    while first < last and not kept(first):
        first += 1
    while last > first and not kept(last - 1):
        last -= 1
    if first >= last:
        return None
    return starts[first], ends[last - 1]


def _raw_matches(text: str, patterns: Iterable[Pattern]) -> Iterable[tuple[int, int, Pattern]]:
    for pattern in patterns:
        for m in pattern.regex.finditer(text):
            group = "phi" if "phi" in pattern.regex.groupindex and m.group("phi") is not None else 0
            start, end = m.span(group)
            if start == end or (pattern.check is not None and not pattern.check(text[start:end])):
                continue
            yield start, end, pattern


def find(
    text: str, language: str | None = None, *, tokens: Sequence[Token] | None = None, overlapping: bool = False
) -> list[Match]:
    """Matches of the patterns for ``language`` (``None``: every pattern) over ``text``, on token
    boundaries (``tokens`` from :func:`corpus.text.tokenize`, computed when not given), sorted by position.

    By default overlapping matches are resolved by :func:`non_overlapping`; ``overlapping=True`` keeps every
    pattern's matches (one per pattern and extent).
    """
    if tokens is None:
        tokens = tokenize(text)
    starts = [t.start for t in tokens]
    ends = [t.end for t in tokens]
    seen: set[tuple[int, int, str]] = set()
    out: list[Match] = []
    for start, end, pattern in _raw_matches(text, patterns_for(language)):
        aligned = _align(start, end, text, starts, ends)
        if aligned is None or (*aligned, pattern.name) in seen:
            continue
        seen.add((*aligned, pattern.name))
        out.append(Match(aligned[0], aligned[1], pattern.name, pattern.kind, pattern.precision))
    out.sort()
    return out if overlapping else non_overlapping(out)


def non_overlapping(matches: Iterable[Match]) -> list[Match]:
    """Matches that do not overlap, chosen greedily: sure before likely, then the longer, then the pattern
    earlier in :data:`PATTERNS`, then the earlier in the text. Sorted by position."""
    ranked = sorted(matches, key=lambda m: (m.precision != SURE, m.start - m.end, _ORDER.get(m.pattern, 0), m.start))
    chosen: list[Match] = []
    for m in ranked:
        if all(m.end <= c.start or c.end <= m.start for c in chosen):
            chosen.append(m)
    chosen.sort()
    return chosen


# --- merging into a model's spans ----------------------------------------------------------------------


def merge(
    model_spans: Iterable[Span],
    pattern_matches: Iterable[Match],
    schema_labels: Collection[str],
    *,
    precisions: Collection[str] = (SURE,),
) -> list[Span]:
    """The model's spans with the pattern matches of the given precision classes (sure ones by default)
    merged in, sorted.

    The rule, per match (overlapping matches are first resolved by :func:`non_overlapping`):

    - a match whose kind has no label in ``schema_labels`` is ignored;
    - where no model span overlaps the match, the match is added with its kind's first label in the
      project's schema (:func:`labels_for_kind`);
    - where every overlapping model span lies inside the match and none has exactly its extent (the model
      found part of a phone number, or cut a date in two), they are replaced by one span with the match's
      extent, labelled with the first of the model's labels that the match's kind can be, else the
      kind's first label;
    - otherwise (a model span reaches beyond the match, or equals it) the model's spans stand: the model
      saw context the pattern does not, and its extent and label win.
    """
    spans = sorted(set(model_spans))
    labels_of_kind: dict[str, tuple[str, ...]] = {}
    wanted = [m for m in pattern_matches if m.precision in precisions]
    for m in non_overlapping(wanted):
        if m.kind not in labels_of_kind:
            labels_of_kind[m.kind] = labels_for_kind(m.kind, schema_labels)
        candidates = labels_of_kind[m.kind]
        if not candidates:
            continue
        overlapping = [s for s in spans if s.start < m.end and m.start < s.end]
        if not overlapping:
            spans.append(Span(m.start, m.end, candidates[0]))
            continue
        inside = all(m.start <= s.start and s.end <= m.end for s in overlapping)
        exact = any(s.start == m.start and s.end == m.end for s in overlapping)
        if inside and not exact:
            label = next((s.label for s in overlapping if s.label in candidates), candidates[0])
            spans = [s for s in spans if s not in overlapping]
            spans.append(Span(m.start, m.end, label))
    spans.sort()
    return spans


# --- CRF attributes ------------------------------------------------------------------------------------


def token_pattern_names(
    text: str, tokens: Sequence[Token] | None = None, language: str | None = None
) -> list[tuple[str, ...]]:
    """Per token of ``text``, the names of the patterns (every language by default, overlaps kept) whose
    match covers it, in pattern order: ``[(), ("dni",), ("date_numeric",), …]``.

    Meant for CRF attributes (``"pat:" + name``); a pattern covering several tokens marks each of them.
    """
    if tokens is None:
        tokens = tokenize(text)
    out: list[list[str]] = [[] for _ in tokens]
    if not tokens:
        return []
    starts = [t.start for t in tokens]
    for m in find(text, language, tokens=tokens, overlapping=True):
        first = bisect_left(starts, m.start)
        last = bisect_left(starts, m.end)
        for i in range(first, last):
            if m.pattern not in out[i]:
                out[i].append(m.pattern)
    return [tuple(sorted(names, key=_ORDER.__getitem__)) for names in out]
