"""The measuring functions of bench/deid.py on three hand-made notes, so that the benchmark cannot rot."""
import datetime as dt
import importlib.util
from pathlib import Path

import pytest

from corpus.types import Document, Span
from deid.core.surrogates import Surrogates

BENCH = Path(__file__).resolve().parents[3] / "bench" / "deid.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_deid", BENCH)  # not "deid": that is the package
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def note(name: str, text: str, phi: list[tuple[str, str]]) -> Document:
    """A document whose spans are the (value, label) pairs found one after the other in ``text``."""
    spans, cursor = [], 0
    for value, label in phi:
        start = text.index(value, cursor)
        cursor = start + len(value)
        spans.append(Span(start, start + len(value), label))
    return Document(text=text, spans=tuple(sorted(spans)), name=name)


DOCS = [
    note("n1", "Paciente: Pedro Navarro Ruiz. NHC: 2569870.\n"
               "Ingreso: 17/03/2009. Alta: 27/03/2009.\n"
               "Domicilio: Calle Mayor, 23, Villanueva, España.\n"
               "El Sr. Navarro, varón de 53 años, con enfermedad de Parkinson, ingresó en el Hospital La Paz.\n"
               "Control el 2 de abril de 2009 con el Dr. Luis García.\n",
         [("Pedro Navarro Ruiz", "NOMBRE_SUJETO_ASISTENCIA"), ("2569870", "ID_SUJETO_ASISTENCIA"),
          ("17/03/2009", "FECHAS"), ("27/03/2009", "FECHAS"), ("Calle Mayor, 23", "CALLE"),
          ("Villanueva", "TERRITORIO"), ("España", "PAIS"), ("Navarro", "NOMBRE_SUJETO_ASISTENCIA"),
          ("varón", "SEXO_SUJETO_ASISTENCIA"), ("53 años", "EDAD_SUJETO_ASISTENCIA"),
          ("Parkinson", "NOMBRE_SUJETO_ASISTENCIA"), ("Hospital La Paz", "HOSPITAL"),
          ("2 de abril de 2009", "FECHAS"), ("Luis García", "NOMBRE_PERSONAL_SANITARIO")]),
    note("n2", "Mujer de 45 años. Acude con su madre Ana López al Hospital.\n"
               "Ana López refiere que vive en Madrid. Nacida el 10/10/63. Revisión el 12-1-2010.\n"
               "Viajó a Madrid en 2008.\n",
         [("Mujer", "SEXO_SUJETO_ASISTENCIA"), ("45 años", "EDAD_SUJETO_ASISTENCIA"),
          ("madre", "FAMILIARES_SUJETO_ASISTENCIA"), ("Ana López", "NOMBRE_SUJETO_ASISTENCIA"),
          ("Hospital", "HOSPITAL"), ("Ana López", "NOMBRE_SUJETO_ASISTENCIA"), ("Madrid", "TERRITORIO"),
          ("10/10/63", "FECHAS"), ("12-1-2010", "FECHAS")]),
    note("n3", "Remitido por la Dra. Carmen Romero Selas (cromero@hospital-norte.es), teléfono 915 555 123.\n"
               "Firmado: Dra. Romero Selas.\n",
         [("Carmen Romero Selas", "NOMBRE_PERSONAL_SANITARIO"), ("cromero@hospital-norte.es", "CORREO_ELECTRONICO"),
          ("915 555 123", "NUMERO_TELEFONO"), ("Romero Selas", "NOMBRE_PERSONAL_SANITARIO")]),
]
SETTINGS = Surrogates(language="es", secret=b"bench-deid-test")


def test_read_full_date_reads_the_forms_of_the_corpus_and_nothing_partial(bench):
    assert bench.read_full_date("17/03/2009") == dt.date(2009, 3, 17)
    assert bench.read_full_date("12-1-2010") == dt.date(2010, 1, 12)
    assert bench.read_full_date("10/10/63") == dt.date(1963, 10, 10)
    assert bench.read_full_date("05.06.29") == dt.date(2029, 6, 5)
    assert bench.read_full_date("2009-03-17") == dt.date(2009, 3, 17)
    assert bench.read_full_date("2 de Abril de 2009") == dt.date(2009, 4, 2)
    assert bench.read_full_date("17 mar. del 2009") == dt.date(2009, 3, 17)
    for partial in ("marzo de 2009", "2009", "31/02/2009", "24/08//1979", "junio"):
        assert bench.read_full_date(partial) is None, partial


@pytest.mark.parametrize("strategy", ["pseudo", "class", "mask", "remove"])
def test_concealment_figures_count_what_the_notes_hold(bench, strategy):
    figures = bench.concealment_figures(DOCS, strategy, SETTINGS)
    # 27 spans, 26 distinct values per note; 1 eponym (Parkinson), 1 generic (Hospital), 1 also written
    # outside PHI (Madrid); under pseudo the two ages and the two sex words (varón, Mujer) are kept by design.
    assert (figures["eponyms"], figures["generic"], figures["also_outside_phi"]) == (1, 1, 1)
    assert figures["kept_by_design"] == (4 if strategy == "pseudo" else 0)
    assert figures["values_checked"] == 26 - 3 - figures["kept_by_design"]
    assert figures["residual_phi"] == figures["residual_name_words"] == 0
    # name words: pedro navarro ruiz luis garcia ana lopez carmen romero selas
    assert figures["name_words_checked"] == 10
    assert figures["leaks"] == []
    if strategy == "remove":
        assert figures["repeated_values"] == 0 and "repeated_consistent_share" not in figures
    else:
        assert (figures["repeated_values"], figures["repeated_consistent_share"]) == (1, 1.0)  # Ana López
    if strategy == "pseudo":  # three full dates in n1 (3 pairs), two in n2 (1 pair)
        assert (figures["dates_read"], figures["date_pairs"], figures["date_pairs_preserved"]) == (5, 4, 4)
        assert figures["date_intervals_preserved_share"] == 1.0
    else:
        assert figures["date_pairs"] == 0


def test_a_kept_value_is_residual_so_the_measure_can_fail(bench):
    figures = bench.concealment_figures(DOCS, "keep", SETTINGS)
    assert figures["residual_phi"] == figures["values_checked"] == 23
    assert figures["residual_name_words"] == figures["name_words_checked"] == 10
    assert figures["surrogate_collisions"] == 0


def test_the_exports_move_the_spans_onto_the_replacements(bench):
    for strategy in ("pseudo", "class", "mask"):
        exported = bench.concealed_corpus(DOCS, strategy, SETTINGS)
        assert [len(d.spans) for d in exported] == [13, 9, 4]  # the eponym is left as written; Ana López twice
        for doc in exported:
            for span in doc.spans:
                value = doc.text[span.start:span.end]
                assert value == value.strip() and value
                if strategy == "class":
                    assert value == f"[{span.label}]"


def test_utility_and_speed_run_on_tiny_notes(bench):
    utility, tagger = bench.utility_figures(DOCS, DOCS, ["pseudo", "mask"], SETTINGS)
    assert set(utility) == {"original", "pseudo", "mask"}
    assert 0.5 < utility["original"]["entity_f1"] <= 1.0  # trained and scored on the same three notes
    for strategy in ("pseudo", "mask"):
        assert utility[strategy]["delta_f1"] == pytest.approx(
            utility[strategy]["entity_f1"] - utility["original"]["entity_f1"], abs=1e-4)
    speed = bench.speed_figures(tagger, DOCS, SETTINGS, rounds=1)
    assert speed["tokens"] == sum(len(bench.tokenize(d.text)) for d in DOCS)
    assert speed["overhead_ratio"] == pytest.approx(speed["deidentify_seconds"] / speed["tag_seconds"], rel=0.05)
    assert speed["overhead_ratio"] > 0.5
    result = {"concealment": {"pseudo": bench.concealment_figures(DOCS, "pseudo", SETTINGS)},
              "utility": utility, "speed": speed}
    checks = bench.checks(result)
    assert {"residual_phi_pseudo", "residual_name_words_pseudo", "repeated_consistent_pseudo",
            "date_intervals_pseudo", "utility_pseudo", "speed_overhead"} == set(checks)
    assert checks["residual_phi_pseudo"] and checks["date_intervals_pseudo"]
    assert checks["utility_pseudo"] == (abs(utility["pseudo"]["delta_f1"]) <= 0.01)
