"""textstat==0.7.13: the per-language data of textstat.backend.utils that learning.core._compat.textstat
reads (see its docstring). The numbers are those of the pinned release."""
from __future__ import annotations

import pyphen
import pytest

from learning.core._compat import textstat as textstat_compat


@pytest.mark.parametrize(
    "locale, word, positions",
    [("es", "diagnóstico", [4, 7, 9]), ("es", "paciente", [2, 6]), ("en_US", "hospitalization", [3, 5, 8, 11])],
)
def test_hyphenator_is_pyphens_dictionary_for_the_locale(locale, word, positions):
    hyphenator = textstat_compat.hyphenator(locale)
    assert isinstance(hyphenator, pyphen.Pyphen)
    assert hyphenator.positions(word) == positions
    assert textstat_compat.hyphenator(locale) is hyphenator  # cached per locale


@pytest.mark.parametrize(
    "locale, expected",
    [
        ("es", {"fre_base": 206.84, "fre_sentence_length": 1.02, "fre_syll_per_word": 60.0, "syllable_threshold": 3}),
        (
            "en_US",
            {"fre_base": 206.835, "fre_sentence_length": 1.015, "fre_syll_per_word": 84.6, "syllable_threshold": 3},
        ),
    ],
)
def test_language_constants_are_the_published_flesch_and_fog_ones(locale, expected):
    assert {key: textstat_compat.language_constant(locale, key) for key in expected} == expected


def test_easy_words_are_the_per_language_lists():
    spanish, english = textstat_compat.easy_words("es"), textstat_compat.easy_words("en_US")
    assert isinstance(spanish, set) and isinstance(english, set)
    assert (len(spanish), len(english)) == (20000, 2941)
    assert {"paciente", "diagnóstico", "abajo"} <= spanish
    assert "hospital" in english and "patient" not in english


def test_reading_the_data_leaves_textstats_global_language_alone():
    import textstat

    sample = "Der Patient wurde gestern aufgenommen. Er klagt seit Tagen über starke Schmerzen im Bauch."
    textstat.set_lang("de_DE")
    try:
        before = textstat.flesch_reading_ease(sample)
        for locale in ("es", "en_US"):
            textstat_compat.hyphenator(locale)
            textstat_compat.language_constant(locale, "fre_base")
            textstat_compat.easy_words(locale)
        assert textstat.flesch_reading_ease(sample) == before
    finally:
        textstat.set_lang("en_US")  # textstat's default
