"""Synthetic clinical notes with exact PHI spans, for the demo project and for benchmark pools.

``language="es"`` writes Spanish clinical case reports laid out like the MEDDOCAN corpus (a patient data
header, a narrative report, a "Remitido por" footer) and labels their PHI with the MEDDOCAN label names;
``language="en"`` writes shorter English discharge summaries labelled with the i2b2-2014 names.

Every note is written piece by piece: the offsets of a PHI value are taken at the moment it is appended,
so a span always covers exactly the value that was written, and spans come out sorted and disjoint.
Surface values (names, streets, cities, e-mail domains, phone numbers) come from Faker; the choice of
case, sentences, dates and identifiers comes from a ``random.Random`` seeded with the same seed, so one seed
always gives the same notes, and the first ``k`` notes of ``generate_notes(n, seed=s)`` are the notes of
``generate_notes(k, seed=s)``.

Layout: ``generator.py`` holds ``generate_notes``; ``composer.py`` the shared machinery (a writer that records
spans as it appends, compiled ``{slot}`` templates, the ``Composer`` base); ``spanish.py`` and ``english.py``
one composer per language; ``vocabulary.py``, ``cases.py`` and ``templates.py`` only data. Like the rest of
``corpus``, nothing here imports Django.
"""
from corpus.synthetic.generator import LANGUAGES, generate_notes

__all__ = ["LANGUAGES", "generate_notes"]
