"""The eponym guard: a surname that names a disease, sign or device ("enfermedad de Parkinson") is not PHI.

Taggers trained on names mistake eponyms for surnames (ALGORITHMS.md §4). :func:`is_eponym` says whether
a span is an eponym in a medical context, so that such model spans are dropped from suggestions
(:func:`split_eponyms`) and left untouched by concealment (and counted in its report).

Decisions:

- A span is an eponym when its text — possessive ("'s", Swedish genitive "s") and a leading "von"/"van"
  aside — is a known eponym, or every hyphenated part of it is ("Guillain-Barré", "Creutzfeldt-Jakob"), and
  one of these holds:

  1. the span carries its own context: it is a whole medical phrase such as "síndrome de Down",
     "Parkinson's disease", "morbo di Crohn", "Parkinsons sjukdom";
  2. a medical trigger precedes it, possibly with up to two words between the trigger and "de"/"di"/"of"
     ("enfermedad de", "enfermedad inflamatoria intestinal de", "síndrome de", "signo de", "escala de",
     "disease of", "morbus", "malattia di"…);
  3. a medical word follows it ("disease", "syndrome", "'s disease", "sign", "lymphoma", "sjukdom"…);
  4. it is a *standalone* eponym — one that names a disease or device by itself ("Parkinson",
     "Alzheimer", "Crohn", "Holter", "Doppler") — and is not part of a longer name: no title ("Sr.",
     "Dr.", "Mrs.") right before it, and no capitalised word right before it unless that word only opens
     the sentence ("Tiene Parkinson") and is not a first name of the four locales ("Juan Parkinson").

  Common surnames that are also eponyms (Wilson, Down, Turner, Bell, Smith…) need 1-3: alone they are
  treated as names.
- Matching ignores case and accents ("Sjogren" = "Sjögren", "Meniere" = "Ménière").
- The built-in list is shared by all languages (eponyms are international); the triggers are Spanish,
  English, Swedish and Italian. A project adds its own eponyms with ``extra`` (each then standalone only
  if it is also passed in ``extra_standalone``).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from corpus.types import Span
from deid.core._compat.faker_data import name_lists

__all__ = ["EPONYMS", "STANDALONE_EPONYMS", "EponymGuard", "is_eponym", "split_eponyms"]

#: Eponyms that name a disease, sign, scale, test, operation or device only with a medical word around them.
EPONYMS = frozenset(
    """
    Addison Alport Apgar Arnold Asperger Babinski Barlow Barré Barrett Basedow Becker Behçet Bell Billroth
    Blumberg Bourneville Breslow Brown-Séquard Brudzinski Budd Burkitt Charcot Chagas Chiari Child Chvostek
    Clark Colles Conn Creutzfeldt Crohn Cushing Dandy DeBakey Doppler Down Dubin Duchenne Dukes Dupuytren
    Ehlers Ellison Erb Ewing Fabry Fallot Fanconi Foley Forestier Friedreich Galeazzi Gaucher Gilbert Glasgow
    Gleason Goodpasture Graves Guillain Hartmann Hashimoto Hodgkin Holter Homans Horner Horton Huntington
    Hurler Jakob Kahler Kaposi Karnofsky Kawasaki Kernig Klinefelter Kocher Korotkoff Krukenberg Lasègue
    Legg Lichtenstein Lyme Mallory Marfan Marie McBurney Meckel Menière Monteggia Murphy Niemann Nissen Osgood
    Osler Paget Parkinson Perthes Peyronie Pfannenstiel Phalen Pick Pott Pompe Raynaud Reiter Rendu Romberg
    Sachs Schlatter Scheuermann Schönlein Sjögren Smith Still Sudeck Swan Ganz Takayasu Tay Tietze Tinel Tooth
    Tourette Trousseau Turner Valsalva Waldenström Walker Wegener Weiss Wernicke Korsakoff Whipple
    Willebrand Wilms Wilson Wolff Zollinger
    """.split()
)
#: Eponyms that name a disease or a device on their own ("tiene Parkinson", "Holter de 24 horas").
STANDALONE_EPONYMS = frozenset(
    """
    Alzheimer Parkinson Crohn Hodgkin Sjögren Cushing Addison Raynaud Huntington Hashimoto Kaposi Asperger
    Tourette Kawasaki Behçet Dupuytren Menière Waldenström Gaucher Fabry Duchenne Creutzfeldt-Jakob
    Guillain-Barré Holter Doppler Valsalva Babinski Romberg Gleason Apgar Karnofsky Pfannenstiel Wernicke
    """.split()
)
_ALL = EPONYMS | STANDALONE_EPONYMS

_TRIGGER_WORDS = (
    # Spanish
    "enfermedad", "enf", "sindrome", "sd", "sdme", "signo", "signos", "test", "prueba", "maniobra", "reflejo",
    "escala", "indice", "clasificacion", "criterios", "score", "puntuacion", "estadio", "fenomeno", "tumor",
    "sarcoma", "linfoma", "quiste", "hernia", "fractura", "ulcera", "esofago", "diverticulo", "tiroiditis",
    "arteritis", "granulomatosis", "paralisis", "corea", "demencia", "anomalia", "malformacion", "tetralogia",
    "intervencion", "operacion", "tecnica", "procedimiento", "incision", "sonda", "cateter", "punto", "mal",
    "triada", "ley", "formula", "contractura", "bolsa", "celulas", "nodulo", "nodulos", "cuerpos", "angina",
    "neuralgia", "encefalopatia", "tipo",
    # English
    "disease", "syndrome", "sign", "maneuver", "manoeuvre", "reflex", "scale", "score", "classification",
    "criteria", "stage", "phenomenon", "lymphoma", "cyst", "fracture", "ulcer", "esophagus", "oesophagus",
    "diverticulum", "thyroiditis", "arteritis", "palsy", "chorea", "dementia", "anomaly", "malformation",
    "tetralogy", "operation", "procedure", "technique", "incision", "catheter", "point", "triad", "law",
    "contracture", "cells", "nodes", "bodies", "morbus",
    # Swedish
    "sjukdom", "sjukdomen", "syndrom", "syndromet", "tecken", "test", "skala", "klassifikation", "fraktur",
    "tumor", "pares", "kateter",
    # Italian
    "malattia", "morbo", "sindrome", "segno", "manovra", "riflesso", "scala", "classificazione", "criteri",
    "linfoma", "frattura", "ulcera", "esofago", "tiroidite", "paralisi", "demenza", "anomalia", "intervento",
    "tecnica", "catetere", "punto", "contrattura",
)
_TRIGGERS = "|".join(sorted(set(_TRIGGER_WORDS), key=len, reverse=True))
# "enfermedad de", "enfermedad inflamatoria intestinal de", "sd. de", "morbus", "disease of", "malattia di",
# then optionally "la", "von"... right before the span.
_BEFORE = re.compile(
    rf"\b(?:(?:{_TRIGGERS})\.?(?:\s+[^\W\d_]+){{0,2}}?\s+(?:de|del|di|of|av|tipo|type)|morbus)"
    r"(?:\s+(?:la|el|von|van|der|the))?\s*$"
)
_AFTER = re.compile(
    rf"^(?:['’]s)?[\s-]+(?:{_TRIGGERS})\b"
)
# Inside the span: "síndrome de Down", "Parkinson's disease", "Parkinsons sjukdom".
_WHOLE_BEFORE = re.compile(
    rf"^(?:{_TRIGGERS})\.?(?:\s+[^\W\d_]+){{0,2}}?\s+(?:de|del|di|of|av)\s+(?:(?:la|von|van)\s+)?"
)
_WHOLE_AFTER = re.compile(rf"(?:['’]s)?[\s-]+(?:{_TRIGGERS})$")
_TITLE_BEFORE = re.compile(
    r"\b(?:sr|sra|srta|dr|dra|don|doña|dña|d|prof|mr|mrs|ms|miss|herr|fru|sig|dott)\.?\s*$", re.IGNORECASE
)
_WORD_BEFORE = re.compile(r"([^\W\d_]+)[ \t]+$")


@lru_cache(maxsize=1)
def _first_names() -> frozenset[str]:
    names: set[str] = set()
    for locale in ("es_ES", "en_US", "sv_SE", "it_IT"):
        lists = name_lists(locale)
        names |= {_fold(n) for n in lists.female_words | lists.male_words}
    return frozenset(names)


def _name_right_before(text: str, start: int) -> bool:
    """A capitalised word right before ``start`` that is a first name or does not open a sentence
    ("Juan Parkinson", "visto por Ramos Parkinson", not "Tiene Parkinson")."""
    m = _WORD_BEFORE.search(text, max(0, start - 60), start)
    if m is None or not m.group(1)[0].isupper():
        return False
    if _fold(m.group(1)) in _first_names():
        return True
    head = text[:m.start()].rstrip(" \t")
    return bool(head) and head[-1] not in ".!?:;\n\r\u2029"


@lru_cache(maxsize=1 << 16)
def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def _fold_context(text: str) -> str:
    """Like :func:`_fold`, but with the whitespace as it is (the context's edges matter)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _core(text: str) -> str:
    """The name in the span: possessive and a leading particle removed, folded."""
    folded = _fold(text).strip(" .,;:")
    folded = re.sub(r"['’]s$", "", folded)
    folded = re.sub(r"^(?:von|van|de|di)\s+", "", folded)
    return folded


class EponymGuard:
    """The built-in eponyms plus a project's ``extra`` ones (``extra_standalone``: those that stand alone)."""

    def __init__(self, extra: Iterable[str] = (), extra_standalone: Iterable[str] = ()):
        extra_standalone = list(extra_standalone)
        self._names = frozenset(_fold(name) for name in (*_ALL, *extra, *extra_standalone))
        self._standalone = frozenset(_fold(name) for name in (*STANDALONE_EPONYMS, *extra_standalone))

    def _known(self, core: str, names: frozenset[str]) -> bool:
        if core in names:
            return True
        if core.endswith("s") and core[:-1] in names:  # Swedish genitive "Parkinsons"
            return True
        parts = [p for p in re.split(r"[-\s]+", core) if p]
        return len(parts) > 1 and all(p in names for p in parts)

    def is_eponym(self, text: str, span: Span) -> bool:
        """True when ``text[span.start:span.end]`` is an eponym in a medical context (see the module notes)."""
        value = text[span.start:span.end]
        folded = _fold(value)
        # 1. a whole medical phrase
        inner = _WHOLE_BEFORE.sub("", folded, count=1)
        inner = _WHOLE_AFTER.sub("", inner, count=1)
        if inner != folded:
            return self._known(_core(inner), self._names)
        core = _core(value)
        if not self._known(core, self._names):
            return False
        before = _fold_context(text[max(0, span.start - 80):span.start])
        after = _fold_context(text[span.end:span.end + 40])
        if _BEFORE.search(before) or _AFTER.search(after):  # 2. and 3.
            return True
        if _fold(value).endswith(("'s", "’s")) and re.match(r"^\s+(?:[^\W\d_]+\s+)?(?:" + _TRIGGERS + r")\b", after):
            return True
        if not self._known(core, self._standalone):  # 4.
            return False
        raw_before = text[max(0, span.start - 40):span.start]
        return not (_TITLE_BEFORE.search(raw_before) or _name_right_before(text, span.start))


_DEFAULT = EponymGuard()


def is_eponym(text: str, span: Span, extra: Iterable[str] = ()) -> bool:
    """True when the span's text is an eponym in a medical context; ``extra``: a project's own eponyms."""
    extra = tuple(extra)
    guard = _DEFAULT if not extra else EponymGuard(extra)
    return guard.is_eponym(text, span)


def split_eponyms(text: str, spans: Iterable[Span], guard: EponymGuard | None = None) -> tuple[list[Span], list[Span]]:
    """``spans`` parted into (not eponyms, eponyms), in their order: model suggestions keep the first."""
    guard = guard or _DEFAULT
    kept: list[Span] = []
    eponyms: list[Span] = []
    for span in spans:
        (eponyms if guard.is_eponym(text, span) else kept).append(span)
    return kept, eponyms
