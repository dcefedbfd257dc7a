"""The name lists inside Faker's locale providers, which Faker uses but does not document.

Faker's public API draws a first name of a given sex (``first_name_female()``), but surrogates also need
to *recognise* one: whether "Lucía" is a female first name of the locale decides which list its surrogate
comes from. The lists are class attributes of ``faker.providers.person.<locale>.Provider``
(``first_names_female``, ``first_names_male``, ``last_names``), tuples in some locales and
``OrderedDict`` (name -> weight) in others. This module is the one place that reads them;
``tests/unit/deid/test_faker_compat.py`` pins what it relies on, so a Faker upgrade that moves them fails
that test by name.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

__all__ = ["NameLists", "countries", "name_lists", "street_prefixes", "street_types"]


@dataclass(frozen=True)
class NameLists:
    """One-word first names by sex and surnames of a locale, in Faker's order, without duplicates.

    Compound entries ("Francisco Javier", "de la Fuente") are split into their words for recognition
    (``*_words``) and left out of the lists surrogates are drawn from, so that a surrogate has exactly
    one word like the name part it replaces.
    """

    female: tuple[str, ...]
    male: tuple[str, ...]
    last: tuple[str, ...]
    female_words: frozenset[str]
    male_words: frozenset[str]
    last_words: frozenset[str]


def _names(value: object) -> list[str]:
    # tuple in es_ES and it_IT, OrderedDict name -> frequency in en_US and sv_SE
    return [str(name) for name in (value.keys() if isinstance(value, dict) else value)]  # type: ignore[union-attr]


def _single(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if n and " " not in n and "-" not in n))


def _words(names: list[str]) -> frozenset[str]:
    return frozenset(word for name in names for word in name.replace("-", " ").split())


@cache
def name_lists(locale: str) -> NameLists:
    """The first-name and surname lists of Faker's ``locale`` (e.g. ``"es_ES"``)."""
    provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
    female = _names(provider.first_names_female)
    male = _names(provider.first_names_male)
    last = _names(provider.last_names)
    return NameLists(
        female=_single(female), male=_single(male), last=_single(last),
        female_words=_words(female), male_words=_words(male), last_words=_words(last),
    )


@cache
def street_prefixes(locale: str) -> tuple[str, ...]:
    """The first halves of Swedish-style compound street names ("Björk" + "gatan"); empty elsewhere.

    ``sv_SE`` builds street names as ``{{street_prefix}}{{street_suffix}}``; its prefixes are what a
    compound's proper part is replaced with. Other locales' ``street_prefixes`` are street types
    ("Calle", "Avenida"), not name parts, so they are not returned.
    """
    if locale != "sv_SE":
        return ()
    provider = importlib.import_module(f"faker.providers.address.{locale}").Provider
    return tuple(dict.fromkeys(str(p) for p in provider.street_prefixes))


@cache
def street_types(locale: str) -> tuple[str, ...]:
    """The words of a locale's street names that say what kind of street it is ("Calle", "Avenue", "Via").

    Faker keeps them as ``street_prefixes`` in ``es_ES`` and as ``street_suffixes`` in ``en_US`` and
    ``it_IT`` (where they come first all the same); ``sv_SE``'s suffixes are compound endings ("gatan").
    """
    provider = importlib.import_module(f"faker.providers.address.{locale}").Provider
    attribute = "street_prefixes" if locale == "es_ES" else "street_suffixes"
    return tuple(dict.fromkeys(str(word) for word in getattr(provider, attribute, ())))


# Entries of Faker's country lists that a note would not write so: misspellings, and official long forms
# where notes use the short name. A name mapped to None is left out ("Dominicana" is not a country's name;
# "Korea" stands for two countries).
_COUNTRY_FIXES: dict[str, dict[str, str | None]] = {
    "es_ES": {
        "Vietman": "Vietnam", "Dominicana": None, "Estados Unidos de América": "Estados Unidos",
        "Reino Unido de Gran Bretaña e Irlanda del Norte": "Reino Unido", "Federación de Rusia": "Rusia",
        "República Árabe Siria": "Siria", "República de Corea": "Corea del Sur",
        "República Popular Democrática de Corea": "Corea del Norte", "República Democrática Popular Lao": "Laos",
        "República Federal Democrática de Nepal": "Nepal", "República de Moldova": "Moldavia",
        "República Unida de Tanzanía": "Tanzania", "República de Macedonia del Norte": "Macedonia del Norte",
        "Nueva Zelandia": "Nueva Zelanda", "Belarús": "Bielorrusia",
    },
    "en_US": {
        "United States of America": "United States", "Russian Federation": "Russia",
        "Libyan Arab Jamahiriya": "Libya", "Syrian Arab Republic": "Syria", "Korea": None,
        "Netherlands Antilles": None, "Lao People's Democratic Republic": "Laos",
        "Slovakia (Slovak Republic)": "Slovakia",
    },
    "it_IT": {
        "Equador": "Ecuador", "Republicca Kirgiza": "Kirghizistan", "Latvia": "Lettonia", "Korea": None,
        "Libyan Arab Jamahiriya": "Libia", "Antille Olandesi": None,
    },
    "sv_SE": {"SierraLeone": "Sierra Leone", "Nederländska Antillerna": None},
}


@cache
def countries(locale: str) -> tuple[str, ...]:
    """The country names of Faker's ``locale``, cleaned: misspellings corrected, long official forms
    shortened to the name notes use, entries with a parenthesis (territory descriptions such as
    "Bouvet Island (Bouvetoya)") and duplicates left out. Empty if the locale has no list."""
    provider = importlib.import_module(f"faker.providers.address.{locale}").Provider
    fixes = _COUNTRY_FIXES.get(locale, {})
    names = (fixes.get(str(name), str(name)) for name in getattr(provider, "countries", ()))
    return tuple(dict.fromkeys(name for name in names if name and "(" not in name))
