"""Every word a template shows goes through a translation tag: a template that gains an untranslated string
fails here, naming the file and the text."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"

#: Text that is the same in every language: the brand, symbols, acronyms and units.
ALLOWED = {"deidloop", "API", "PHI", "UTC", "CSV", "JSON", "JSONL", "CoNLL", "brat", "i2b2", "XML", "AULC", "τ_main", "τ_alt", "F", "P", "R", "R²", "s", "F1", "κ", "α", "β", "ms", "%", "×", "→", "←", "·", "…", "—", "–", "/", "|"}

_DROPPED = [
    re.compile(r"\{#.*?#\}", re.S),
    re.compile(r"\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}", re.S),
    re.compile(r"\{%\s*blocktrans(?:late)?\b.*?\{%\s*endblocktrans(?:late)?\s*%\}", re.S),
    re.compile(r"\{%.*?%\}", re.S),
    re.compile(r"\{\{.*?\}\}", re.S),
    re.compile(r"<(script|style)\b.*?</\1>", re.S),
    re.compile(r"<kbd>.*?</kbd>", re.S),  # a key is named as it is printed on the keyboard
    re.compile(r"<!--.*?-->", re.S),
]
#: Attributes a person reads (the others hold names, URLs, classes, data for scripts).
_READ_ATTRIBUTES = re.compile(r"""\b(title|placeholder|aria-label|alt|label)\s*=\s*(["'])(.*?)\2""", re.S)
_TAG = re.compile(r"<[^>]*>", re.S)
_WORD = re.compile(r"[^\W\d_][^\s<>]*")


def untranslated_text(source: str) -> list[str]:
    """The words of ``source`` shown to a person and not inside a translation tag."""
    for pattern in _DROPPED:
        source = pattern.sub(" ", source)
    found = [value for _, _, value in _READ_ATTRIBUTES.findall(source)]
    found.append(_TAG.sub(" ", source))
    words = []
    for text in found:
        words += [word for word in _WORD.findall(text) if word.strip(".,:;()[]!?\"'") not in ALLOWED]
    return words


def test_the_checker_sees_text_outside_translation_tags():
    source = """{% load i18n %}<h1>{% translate "Records" %}</h1>{# a note #}
    <p title="Open it">{{ count }} {% blocktranslate %}left {{ n }}{% endblocktranslate %} Pending</p>
    <button aria-label="{% translate 'Close' %}">×</button> deidloop"""
    assert untranslated_text(source) == ["Open", "it", "Pending"]


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_a_template_shows_no_untranslated_text(path):
    assert untranslated_text(path.read_text(encoding="utf-8")) == [], f"{path.name}: wrap these words"
