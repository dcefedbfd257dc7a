"""textstat internals that :mod:`learning.core.stylometry` relies on (textstat==0.7.13, the lock's pin).

Pinned by ``tests/unit/compat/test_textstat.py``. textstat's public functions read its global language
(``textstat.set_lang``) and count text their own way; the stylometry module wants only the
language-dependent data, which lives in the undocumented ``textstat.backend.utils``:

- ``get_pyphen(locale)``: the ``pyphen.Pyphen`` hyphenator textstat counts syllables with (every language
  but English);
- ``get_lang_cfg(locale, key)``: a per-language constant, falling back to English's for a key the language
  lacks (``fre_base``, ``fre_sentence_length``, ``fre_syll_per_word``: the Flesch reading ease;
  ``syllable_threshold``: the syllables from which a word is complex for Gunning FOG);
- ``get_lang_easy_words(locale)``: the set of easy words Gunning FOG does not count as complex.

None of them touches textstat's global language.
"""
from __future__ import annotations

__all__ = ["easy_words", "hyphenator", "language_constant"]


def hyphenator(locale: str):
    """The ``pyphen.Pyphen`` textstat hyphenates ``locale`` with."""
    from textstat.backend.utils import get_pyphen

    return get_pyphen(locale)


def language_constant(locale: str, key: str) -> float:
    """textstat's constant ``key`` for ``locale`` (English's when ``locale`` has none of its own)."""
    from textstat.backend.utils import get_lang_cfg

    return get_lang_cfg(locale, key)


def easy_words(locale: str) -> set[str]:
    """textstat's easy words of ``locale`` (not complex for Gunning FOG, whatever their syllables)."""
    from textstat.backend.utils import get_lang_easy_words

    return get_lang_easy_words(locale)
