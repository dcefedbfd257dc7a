"""The synthetic-note generator: exact offsets, well-formed spans, determinism, vocabulary and shape."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.schemas import I2B2_2014, MEDDOCAN
from corpus.synthetic import generate_notes
from corpus.types import Document, Span


@pytest.fixture(scope="module")
def spanish() -> list[Document]:
    return generate_notes(300, seed=11)


@pytest.fixture(scope="module")
def english() -> list[Document]:
    return generate_notes(150, seed=11, language="en")


def _span_at(document: Document, start: int) -> Span:
    matches = [span for span in document.spans if span.start == start]
    assert len(matches) == 1, f"{document.name}: no single span starts at {start}: {document.text[start:start + 40]!r}"
    return matches[0]


def _assert_spanned(document: Document, match: re.Match, group: int | str, label: str) -> str:
    """The value the header shows in ``group`` is exactly one span with ``label``."""
    span = _span_at(document, match.start(group))
    assert (span.end, span.label) == (match.end(group), label), (document.name, match.group(group), span)
    return match.group(group)


# Each header line of a Spanish note and the label its value must carry.
SPANISH_HEADER = [
    (r"^Nombre: +(.+)\.$", "NOMBRE_SUJETO_ASISTENCIA", True),
    (r"^Apellidos: (.+)\.$", "NOMBRE_SUJETO_ASISTENCIA", True),
    (r"^NHC: (\d{6,8})\.$", "ID_SUJETO_ASISTENCIA", True),
    (r"^NASS: (\d\d \d{8}(?: \d\d)?)\.$", "ID_ASEGURAMIENTO", False),
    (r"^Domicilio: (.+)\.$", "CALLE", True),
    (r"^Localidad/ Provincia: ([^,\n]+?)(?:, [^\n]+)?\.$", "TERRITORIO", True),
    (r"^CP: (\d{5})\.$", "TERRITORIO", True),
    (r"^Fecha de nacimiento: (\d\d/\d\d/\d{4})\.$", "FECHAS", True),
    (r"^País: (España)\.$", "PAIS", True),
    (r"^Edad: ?(\d+ (?:años?|meses)) Sexo: [HM]\.$", "EDAD_SUJETO_ASISTENCIA", True),
    (r"^Edad: ?\d+ (?:años?|meses) Sexo: ([HM])\.$", "SEXO_SUJETO_ASISTENCIA", True),
    (r"^Fecha de Ingreso: (\d\d/\d\d/\d{4})\.$", "FECHAS", True),
    (r"^Episodio: (\d+)\.$", "ID_CONTACTO_ASISTENCIAL", False),
    (r"^Médico: +(.+) NºCol: \d\d \d\d \d{5}\.$", "NOMBRE_PERSONAL_SANITARIO", True),
    (r"^Médico: +.+ NºCol: (\d\d \d\d \d{5})\.$", "ID_TITULACION_PERSONAL_SANITARIO", True),
    (r"(?:E-mail|Correo electrónico): (\S+@\S+)$", "CORREO_ELECTRONICO", True),
]


@pytest.mark.parametrize("pattern,label,required", SPANISH_HEADER, ids=[p[0][:24] for p in SPANISH_HEADER])
def test_every_spanish_header_value_is_exactly_one_span(spanish, pattern, label, required):
    found = 0
    for document in spanish:
        match = re.search(pattern, document.text, re.MULTILINE)
        if match is None:
            assert not required, f"{document.name} lacks the header line {pattern!r}"
            continue
        _assert_spanned(document, match, 1, label)
        found += 1
    # Optional lines still occur in a fair share of the notes.
    assert found >= (len(spanish) if required else len(spanish) // 10)


def _patient(document: Document) -> tuple[str, str]:
    first = re.search(r"^Nombre: +(.+)\.$", document.text, re.MULTILINE).group(1)
    surnames = re.search(r"^Apellidos: (.+)\.$", document.text, re.MULTILINE).group(1)
    return first, surnames


def test_the_patient_is_named_consistently_through_the_note(spanish):
    notes_naming_patient_in_narrative = 0
    for document in spanish:
        first, surnames = _patient(document)
        allowed = {first, surnames, surnames.split()[0], f"{first} {surnames}"}
        names = [document.text[s.start:s.end] for s in document.spans if s.label == "NOMBRE_SUJETO_ASISTENCIA"]
        assert set(names) <= allowed, (document.name, names, allowed)
        notes_naming_patient_in_narrative += len(names) > 2
    assert notes_naming_patient_in_narrative >= len(spanish) // 2


def test_no_patient_name_record_number_or_country_is_left_outside_a_span(spanish):
    for document in spanish:
        first, surnames = _patient(document)
        nhc = re.search(r"^NHC: (\d+)\.$", document.text, re.MULTILINE).group(1)
        covered = [(s.start, s.end) for s in document.spans]
        for token in {*first.split(), *surnames.split(), nhc, "España"}:
            for occurrence in re.finditer(rf"(?<!\w){re.escape(token)}(?!\w)", document.text):
                assert any(start <= occurrence.start() and occurrence.end() <= end for start, end in covered), (
                    document.name, token, document.text[max(0, occurrence.start() - 30):occurrence.end() + 30])


def test_birth_date_admission_date_age_and_sex_agree(spanish):
    for document in spanish:
        text = document.text
        born = dt.datetime.strptime(re.search(r"^Fecha de nacimiento: (\S+)\.$", text, re.M).group(1), "%d/%m/%Y")
        admitted = dt.datetime.strptime(re.search(r"^Fecha de Ingreso: (\S+)\.$", text, re.M).group(1), "%d/%m/%Y")
        age = re.search(r"^Edad: ?(\d+) (años?|meses) Sexo: ([HM])\.$", text, re.M)
        assert born < admitted
        if age.group(2) != "meses":
            years = admitted.year - born.year - ((admitted.month, admitted.day) < (born.month, born.day))
            assert years == int(age.group(1)), document.name
        words = {text[s.start:s.end].lower() for s in document.spans if s.label == "SEXO_SUJETO_ASISTENCIA"}
        expected = {"h", "varón", "hombre", "niño"} if age.group(3) == "H" else {"m", "mujer", "niña"}
        assert words <= expected, (document.name, words)


@pytest.mark.parametrize("corpus", ["spanish", "english"])
def test_spans_are_sorted_disjoint_and_cover_trimmed_values(corpus, request):
    for document in request.getfixturevalue(corpus):
        assert document.spans, document.name
        assert list(document.spans) == sorted(document.spans)
        for span, following in zip(document.spans, document.spans[1:]):
            assert span.end <= following.start, (document.name, span, following)
        for span in document.spans:
            value = document.text[span.start:span.end]
            assert 0 <= span.start < span.end <= len(document.text)
            assert value == value.strip() and "\n" not in value, (document.name, span, value)
            # A value never ends in the middle of a word or a number.
            assert not document.text[span.end:span.end + 1].isalnum(), (document.name, value)
            assert not document.text[span.start - 1:span.start].isalnum() or span.start == 0, (document.name, value)


def test_spanish_labels_are_meddocan_labels_and_cover_its_common_types(spanish):
    labels = {span.label for document in spanish for span in document.spans}
    assert labels <= set(MEDDOCAN)
    assert labels >= {
        "NOMBRE_SUJETO_ASISTENCIA", "NOMBRE_PERSONAL_SANITARIO", "FECHAS", "EDAD_SUJETO_ASISTENCIA",
        "SEXO_SUJETO_ASISTENCIA", "CALLE", "TERRITORIO", "PAIS", "ID_SUJETO_ASISTENCIA", "ID_ASEGURAMIENTO",
        "ID_TITULACION_PERSONAL_SANITARIO", "CORREO_ELECTRONICO", "HOSPITAL", "INSTITUCION",
        "FAMILIARES_SUJETO_ASISTENCIA", "PROFESION", "NUMERO_TELEFONO", "CENTRO_SALUD", "ID_CONTACTO_ASISTENCIAL",
    }


def test_english_notes_use_i2b2_labels_and_exact_header_values(english):
    labels = {span.label for document in english for span in document.spans}
    assert labels <= set(I2B2_2014)
    assert labels >= {"PATIENT", "DOCTOR", "DATE", "AGE", "HOSPITAL", "CITY", "STREET", "ZIP", "PHONE", "EMAIL",
                      "MEDICALRECORD", "IDNUM", "PROFESSION", "COUNTRY", "STATE", "ORGANIZATION"}
    for document in english:
        for pattern, label in [(r"^Patient: (.+)$", "PATIENT"), (r"^MRN: (\d+)", "MEDICALRECORD"),
                               (r"^Record date: (.+)$", "DATE"), (r"^Attending: (.+), MD$", "DOCTOR")]:
            _assert_spanned(document, re.search(pattern, document.text, re.MULTILINE), 1, label)
        first, last = re.search(r"^Patient: (.+)$", document.text, re.M).group(1).rsplit(" ", 1)
        names = {document.text[s.start:s.end] for s in document.spans if s.label == "PATIENT"}
        assert names <= {f"{first} {last}", last}
        record = re.search(r"^MRN: (\d+)", document.text, re.M).group(1)
        for token in (first, last, record):
            for occurrence in re.finditer(rf"(?<!\w){re.escape(token)}(?!\w)", document.text):
                assert any(s.start <= occurrence.start() and occurrence.end() <= s.end for s in document.spans), (
                    document.name, token)


def test_dates_come_in_numeric_and_spelled_out_forms(spanish):
    dates = [d.text[s.start:s.end] for d in spanish for s in d.spans if s.label == "FECHAS"]
    assert any(re.fullmatch(r"\d\d/\d\d/\d{4}", value) for value in dates)
    assert any(re.fullmatch(r"\d{1,2} de [a-z]+ del? \d{4}", value) for value in dates)
    assert any(re.fullmatch(r"[A-Za-z]+ del? \d{4}", value) for value in dates)
    assert any(re.fullmatch(r"(19|20)\d\d", value) for value in dates)


def test_lengths_vary_over_the_intended_range(spanish, english):
    words = [len(document.text.split()) for document in spanish]
    assert 120 <= min(words) and max(words) <= 800
    assert min(words) < 200 and max(words) > 600
    assert 300 <= statistics.median(words) <= 500
    english_words = [len(document.text.split()) for document in english]
    assert 80 <= min(english_words) and max(english_words) <= 400


def test_notes_vary_in_specialty_and_text(spanish):
    assert len({document.meta["specialty"] for document in spanish}) >= 12
    assert len({document.text for document in spanish}) == len(spanish)
    assert len({document.name for document in spanish}) == len(spanish)


@pytest.mark.parametrize("language", ["es", "en"])
def test_a_seed_always_gives_the_same_notes_and_longer_runs_extend_shorter_ones(language):
    notes = generate_notes(25, seed=5, language=language)
    assert notes == generate_notes(25, seed=5, language=language)
    assert generate_notes(10, seed=5, language=language) == notes[:10]
    other = generate_notes(25, seed=6, language=language)
    assert all(a.text != b.text for a, b in zip(notes, other))


def _fingerprint(notes: list[Document]) -> str:
    digest = hashlib.sha256()
    for note in notes:
        digest.update(note.text.encode())
        digest.update(repr(note.spans).encode())
    return digest.hexdigest()


def test_notes_do_not_depend_on_the_process_that_generates_them():
    # Benchmark pools are regenerated by other processes (workers, later runs): string hashing must not leak in.
    script = ("import sys; from corpus.synthetic import generate_notes; "
              "from tests.unit.test_synthetic import _fingerprint; "
              "print(_fingerprint(generate_notes(20, seed=8, language=sys.argv[1])))")
    root = Path(__file__).resolve().parents[2]
    for language in ("es", "en"):
        expected = _fingerprint(generate_notes(20, seed=8, language=language))
        for hash_seed in ("1", "2"):
            result = subprocess.run([sys.executable, "-c", script, language], cwd=root, capture_output=True, text=True,
                                    env={**os.environ, "PYTHONHASHSEED": hash_seed}, check=True)
            assert result.stdout.strip() == expected


def test_names_and_meta_identify_the_run():
    notes = generate_notes(3, seed=42, language="es")
    assert [note.name for note in notes] == ["synthetic-es-42-00000", "synthetic-es-42-00001", "synthetic-es-42-00002"]
    assert notes[1].meta["seed"] == 42 and notes[1].meta["index"] == 1 and notes[1].meta["language"] == "es"


def test_bad_arguments_are_refused_with_a_clear_message():
    assert generate_notes(0) == []
    with pytest.raises(ValueError, match="language"):
        generate_notes(1, language="fr")
    with pytest.raises(ValueError, match="negative"):
        generate_notes(-1)
