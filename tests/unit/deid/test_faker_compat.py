"""Pins what deid.core._compat.faker_data reads from Faker's locale providers (undocumented class data)."""
import pytest

from deid.core._compat.faker_data import countries, name_lists, street_prefixes, street_types
from deid.core.place_data import COUNTRY_WEIGHTS


@pytest.mark.parametrize("locale, female, male, last", [
    ("es_ES", "Lucía", "Pedro", "Bayona"),
    ("en_US", "Mary", "John", "Smith"),
    ("sv_SE", "Anna", "Erik", "Andersson"),
    ("it_IT", "Giulia", "Marco", "Rossi"),
])
def test_name_lists_by_sex_and_surnames(locale, female, male, last):
    lists = name_lists(locale)
    assert len(lists.female) >= 150 and len(lists.male) >= 150 and len(lists.last) >= 400
    assert female in lists.female and male in lists.male and last in lists.last
    assert all(" " not in n and "-" not in n for n in lists.female + lists.male + lists.last)
    assert len(set(lists.female)) == len(lists.female)


def test_compound_first_names_are_split_for_recognition_only():
    lists = name_lists("es_ES")
    assert "Javier" in lists.male_words and "Francisco Javier" not in lists.male


def test_swedish_street_prefixes():
    prefixes = street_prefixes("sv_SE")
    assert len(prefixes) >= 20 and "Björk" in prefixes
    assert street_prefixes("es_ES") == ()


def test_street_types_of_each_locale():
    assert {"Calle", "Avenida", "Paseo"} <= set(street_types("es_ES"))
    assert {"Avenue", "Street", "Corner"} <= set(street_types("en_US"))
    assert {"Via", "Viale", "Piazza"} <= set(street_types("it_IT"))
    assert "gatan" in street_types("sv_SE")


@pytest.mark.parametrize("locale, good, bad", [
    ("es_ES", {"España", "Vietnam", "Reino Unido", "Estados Unidos", "Rusia", "Nueva Zelanda"},
     {"Vietman", "Dominicana", "Federación de Rusia", "Reino Unido de Gran Bretaña e Irlanda del Norte"}),
    ("en_US", {"Spain", "United States", "Russia", "Slovakia"},
     {"Korea", "United States of America", "Bouvet Island (Bouvetoya)"}),
    ("it_IT", {"Ecuador", "Lettonia", "Spagna"}, {"Equador", "Latvia", "Republicca Kirgiza"}),
    ("sv_SE", {"Sierra Leone", "Spanien"}, {"SierraLeone"}),
])
def test_country_lists_are_cleaned(locale, good, bad):
    names = countries(locale)
    assert len(names) >= 180 and len(set(names)) == len(names)
    assert good <= set(names) and not bad & set(names)
    assert not any("(" in name for name in names)


def test_every_weighted_country_is_in_its_locale_list():
    for language, locale in (("es", "es_ES"), ("en", "en_US")):
        assert set(COUNTRY_WEIGHTS[language]) <= set(countries(locale)), language
