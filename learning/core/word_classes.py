"""Closed classes of words that a tagger should generalise over, whatever a project's gold happens to hold.

A CRF learns a weight per word form: a form its gold never holds gets none, however close it is to forms that
do. Kinship terms are a closed class that de-identification schemas mark as PHI (MEDDOCAN's
FAMILIARES_SUJETO_ASISTENCIA, i2b2's relatives): a gold with "madre", "padre" and "hermano" says nothing
about "esposa" or "sobrinos" as words, but with a class attribute shared by all of them
(``learning.core.features``: ``cls:kin`` for the token and its neighbours) the evidence of the ones seen
carries to the others. On MEDDOCAN dev (``bench/leakage.py``, thresholds for F4 tuned on a part of train) what
the CRF with the gold lexicon shows leaks 72 PHI tokens at token precision 0.921 instead of 79 at 0.919, and
relatives 5.5 % of theirs instead of 8.6 %.

Decisions:

- Nouns only, singular and plural, in Spanish and English (the project's languages; the two lists do not
  clash). Adjectives that mostly qualify something else are left out ("familiar" and "familiares" in
  "antecedentes familiares", "materno", "paterno"), as are words that mostly mean something else in notes
  ("mujer" is a woman far more often than a wife; "pareja" a couple; "child" the patient).
- Matching ignores case and accents ("tio" = "tío").
- A list of occupations (about 150 words, both languages) was measured the same way and lowered no leak at
  equal precision (PROFESION is open-ended and rare: four mentions in MEDDOCAN dev), so there is none.
"""
from __future__ import annotations

from corpus.text import fold

__all__ = ["KINSHIP", "word_class"]

KINSHIP = frozenset("""
madre padre padres mamá papá progenitor progenitora progenitores hijo hija hijos hijas hijastro hijastra
hermano hermana hermanos hermanas hermanastro hermanastra gemelo gemela gemelos gemelas mellizo melliza mellizos
esposo esposa esposos marido cónyuge viudo viuda abuelo abuela abuelos bisabuelo bisabuela nieto nieta nietos nietas
tío tía tíos tías primo prima primos primas sobrino sobrina sobrinos sobrinas suegro suegra suegros cuñado cuñada
cuñados cuñadas yerno nuera padrastro madrastra familia
mother father parent parents mom mum dad son daughter sons daughters stepson stepdaughter brother sister brothers
sisters sibling siblings twin twins husband wife spouse widow widower grandmother grandfather grandparents grandson
granddaughter grandchildren uncle aunt cousin cousins nephew niece nephews nieces stepmother stepfather family
relative relatives
""".split())


_CLASSES = {fold(word): "kin" for word in KINSHIP}


def word_class(word: str) -> str | None:
    """The class of ``word`` (``"kin"``), or None."""
    return _CLASSES.get(fold(word))
