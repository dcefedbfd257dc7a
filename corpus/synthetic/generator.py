"""``generate_notes``: the one entry point of the synthetic-note generator (see the package docstring)."""
from __future__ import annotations

import random

from faker import Faker

from corpus.synthetic.composer import Composer
from corpus.synthetic.english import EnglishNote, EnglishVocabulary
from corpus.synthetic.spanish import SpanishNote
from corpus.types import Document

LANGUAGES = ("es", "en")
FAKER_LOCALES = {"es": "es_ES", "en": "en_US"}


def generate_notes(n: int, *, seed: int = 0, language: str = "es") -> list[Document]:
    """``n`` synthetic notes with gold PHI spans; the same ``seed`` always gives the same notes."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r} for synthetic notes; choose one of {', '.join(LANGUAGES)}")
    if n < 0:
        raise ValueError(f"cannot generate a negative number of notes ({n})")
    faker = Faker(FAKER_LOCALES[language])
    faker.seed_instance(seed)
    rng = random.Random(seed)
    if language == "es":
        def new_note() -> Composer:
            return SpanishNote(rng=rng, faker=faker)
    else:
        vocabulary = EnglishVocabulary.from_faker(faker)

        def new_note() -> Composer:
            return EnglishNote(rng=rng, faker=faker, vocabulary=vocabulary)
    notes = []
    for index in range(n):
        composer = new_note()
        notes.append(composer.compose(name=f"synthetic-{language}-{seed}-{index:05d}",
                                      meta={"source": "synthetic", "language": language, "seed": seed,
                                            "index": index}))
    return notes
