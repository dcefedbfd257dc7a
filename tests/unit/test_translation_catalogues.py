"""The Spanish catalogues are complete: every entry translated (none fuzzy), with the placeholders of its
English, and every message that ``makemessages`` extracts from the code, templates and scripts is in them."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import polib
import pytest
from django.core.management import call_command
from django.test import override_settings

from config.i18n import LOCALE_DIR, compile_catalogues

ROOT = LOCALE_DIR.parent
DOMAINS = ("django", "djangojs")
#: What ``makemessages`` reads: the apps, the settings package, the templates and the browser scripts.
SOURCES = ("annotator", "learning", "deid", "corpus", "config", "templates", "static/js")
#: The options the catalogues are made with (no locations, so that a moved line changes nothing).
MAKEMESSAGES = {"locale": ["es"], "no_location": True, "verbosity": 0}
PLACEHOLDER = re.compile(r"%\(\w+\)[sdr]|%[sd]|\{\w+\}|%\{[^}]+\}")


def catalogue(domain: str, locale_dir: Path = LOCALE_DIR) -> polib.POFile:
    return polib.pofile(str(locale_dir / "es" / "LC_MESSAGES" / f"{domain}.po"))


def translations(entry: polib.POEntry) -> list[str]:
    return list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_spanish_entry_is_translated_and_none_is_fuzzy(domain):
    po = catalogue(domain)
    assert len(po) > 100
    assert [entry.msgid for entry in po.untranslated_entries()] == []
    assert [entry.msgid for entry in po.fuzzy_entries()] == []
    assert po.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_translation_keeps_the_placeholders_of_its_english(domain):
    wrong = []
    for entry in catalogue(domain):
        english = sorted(PLACEHOLDER.findall(entry.msgid_plural or entry.msgid))
        for spanish in translations(entry):
            if sorted(PLACEHOLDER.findall(spanish)) != english:
                wrong.append((entry.msgid, spanish))
    assert wrong == []


def test_the_catalogues_compile_without_gnu_gettext(tmp_path):
    folder = tmp_path / "locale" / "es" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    for domain in DOMAINS:
        shutil.copy(LOCALE_DIR / "es" / "LC_MESSAGES" / f"{domain}.po", folder)
    written = compile_catalogues(tmp_path / "locale")
    assert sorted(path.name for path in written) == ["django.mo", "djangojs.mo"]
    assert compile_catalogues(tmp_path / "locale") == []  # up to date: nothing compiled twice
    spanish = polib.mofile(str(folder / "django.mo"))
    assert spanish.find("Submit and next").msgstr == "Enviar y siguiente"


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="makemessages needs GNU gettext (xgettext)")
def test_the_catalogues_hold_every_message_makemessages_extracts(tmp_path):
    # makemessages writes next to the sources it reads, so it runs on a copy: the checkout is left as it is.
    for source in SOURCES:
        shutil.copytree(ROOT / source, tmp_path / source, ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
    fresh = tmp_path / "locale"
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with override_settings(LOCALE_PATHS=[fresh]):
            call_command("makemessages", **MAKEMESSAGES)
            call_command("makemessages", domain="djangojs", **MAKEMESSAGES)
    finally:
        os.chdir(here)
    for domain in DOMAINS:
        extracted = {entry.msgid for entry in catalogue(domain, fresh)}
        shipped = {entry.msgid for entry in catalogue(domain) if not entry.obsolete}
        assert sorted(extracted - shipped) == [], f"{domain}.po lacks these messages: run makemessages and translate"
        assert sorted(shipped - extracted) == [], f"{domain}.po holds messages nothing uses any more"


def test_every_setting_of_the_learning_core_is_marked_for_translation():
    from learning.core.costs import MEASURED_ROI_PARAMETERS
    from learning.core.registry import TAGGERS, tagger_class
    from learning.core.self_training import POLICY_PARAMETERS
    from learning.core.strategies import _KINDS
    from learning.forms.parameter_texts import PARAMETER_TEXTS

    params = [param for kind in TAGGERS for param in tagger_class(kind).PARAMETERS]
    params += [param for _, kind_params in _KINDS.values() for param in kind_params]
    params += [*MEASURED_ROI_PARAMETERS, *POLICY_PARAMETERS]
    assert len(params) > 20
    assert {text for param in params for text in (param.label, param.help)} == set(PARAMETER_TEXTS)
