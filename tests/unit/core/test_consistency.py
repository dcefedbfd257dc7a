"""Document-level consistency: every mention of a string the model tagged, under one label, with the rules
that keep short and common strings from spreading."""
from __future__ import annotations

import numpy as np
import pytest

from corpus.bio import bio_labels, spans_to_bio
from corpus.text import tokenize
from corpus.types import Span
from learning.core.consistency import ShownSpan, consistent_spans, span_confidences

NAME = "NOMBRE_SUJETO_ASISTENCIA"
DOCTOR = "NOMBRE_PERSONAL_SANITARIO"


def at(text: str, piece: str, label: str, occurrence: int = 0) -> Span:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(piece, start + 1)
    return Span(start, start + len(piece), label)


def shown(text: str, spans, **kwargs) -> list[tuple[str, str, float, str]]:
    result = consistent_spans(tokenize(text), spans, **kwargs)
    return [(text[s.span.start:s.span.end], s.span.label, s.confidence, s.reason) for s in result]


def test_a_name_is_shown_everywhere_in_the_record_and_its_parts_where_capitalised():
    text = "Apellidos: Ramos Ibañez. La Sra. RAMOS IBAÑEZ acude. Ramos trae ramos. Sr. Ibañez Ramos y Anabel."
    assert shown(text, [at(text, "Ramos Ibañez", NAME)], confidences=[0.8]) == [
        ("Ramos Ibañez", NAME, 0.8, "model"),
        ("RAMOS IBAÑEZ", NAME, 0.8, "propagated"),  # case-insensitive, whole
        ("Ramos", NAME, 0.8, "propagated"),  # a surname alone; "ramos" (bunches) in lower case is not
        ("Ibañez Ramos", NAME, 0.8, "propagated"),  # two copied parts side by side: one name
    ]


def test_matches_stop_at_token_boundaries():
    text = "Paciente: Ana. Anabel y Mariana visitan a Ana."
    assert shown(text, [at(text, "Ana", NAME)], confidences=[0.9]) == [
        ("Ana", NAME, 0.9, "model"), ("Ana", NAME, 0.9, "propagated"),
    ]


def test_a_surname_tagged_alone_is_a_seed_and_function_words_of_a_name_are_not():
    text = "Dr. Pérez de la Fuente. Informe de Pérez. La fuente de datos. Consultar a Fuente."
    result = shown(text, [at(text, "Pérez de la Fuente", DOCTOR)], confidences=[0.95])
    assert result == [
        ("Pérez de la Fuente", DOCTOR, 0.95, "model"),
        ("Pérez", DOCTOR, 0.95, "propagated"),
        ("Fuente", DOCTOR, 0.95, "propagated"),
    ]
    # A word tagged alone spreads by itself, in capitals only when it was only seen in capitals.
    text = "Visto por Soler. Soler indica reposo. Tras soler caminar."
    assert shown(text, [at(text, "Soler", DOCTOR)], confidences=[0.7]) == [
        ("Soler", DOCTOR, 0.7, "model"), ("Soler", DOCTOR, 0.7, "propagated"),
    ]


def test_a_word_tagged_in_lower_case_matches_any_case():
    text = "Varón de 40 años. El varón refiere dolor."
    sex = "SEXO_SUJETO_ASISTENCIA"
    assert shown(text, [at(text, "varón", sex)], confidences=[0.9]) == [
        ("Varón", sex, 0.9, "propagated"), ("varón", sex, 0.9, "model"),
    ]


def test_short_numeric_and_common_strings_are_not_copied():
    text = "Sexo: M. Edad: 22. NHC: 150679. Año 2016 y de M a 22 mm; ref 150679, en 2016, de nuevo."
    spans = [at(text, "M", "SEXO"), at(text, "22", "EDAD"), at(text, "150679", "ID"), at(text, "2016", "FECHAS"),
             at(text, "de", "CALLE")]
    result = shown(text, spans, confidences=[0.99] * 5)
    copies = [(piece, label) for piece, label, _, reason in result if reason == "propagated"]
    # "M" (one character), "22" (two digits) and "de" (a function word) stay where the model put them.
    assert copies == [("150679", "ID"), ("2016", "FECHAS")]
    # The limits are parameters: with min_digits 2 the age is copied too; a project's common word is not.
    result = shown(text, spans, confidences=[0.99] * 5, min_digits=2, common_words={"2016"})
    assert [(p, lab) for p, lab, _, reason in result if reason == "propagated"] == [("22", "EDAD"), ("150679", "ID")]


def test_an_unsure_span_is_shown_but_not_copied():
    text = "Vive en Lugo. Trasladado a Lugo."
    assert shown(text, [at(text, "Lugo", "TERRITORIO")], confidences=[0.3]) == [("Lugo", "TERRITORIO", 0.3, "model")]
    assert len(shown(text, [at(text, "Lugo", "TERRITORIO")], confidences=[0.3], min_seed_confidence=0.2)) == 2


def test_one_label_per_string_by_summed_confidence():
    text = "Barcelona. Hospital en Barcelona. Barcelona otra vez. Y Barcelona."
    spans = [at(text, "Barcelona", "TERRITORIO", 0), at(text, "Barcelona", "HOSPITAL", 1),
             at(text, "Barcelona", "HOSPITAL", 2)]
    # TERRITORIO 0.9 against HOSPITAL 0.4 + 0.3: TERRITORIO everywhere; the relabelled spans take its 0.9.
    assert shown(text, spans, confidences=[0.9, 0.4, 0.3]) == [
        ("Barcelona", "TERRITORIO", 0.9, "model"),
        ("Barcelona", "TERRITORIO", 0.9, "relabelled"),
        ("Barcelona", "TERRITORIO", 0.9, "relabelled"),
        ("Barcelona", "TERRITORIO", 0.9, "propagated"),
    ]
    assert [s[1] for s in shown(text, spans, confidences=[0.9, 0.4, 0.3], reconcile_labels=False)] == [
        "TERRITORIO", "HOSPITAL", "HOSPITAL", "TERRITORIO"]


def test_a_copy_absorbs_a_shorter_span_inside_it_and_never_cuts_one():
    text = "Médico: Josep Rubio Palau. Firmado: Rubio Palau. Calle Josep Rubio 4, 2º."
    spans = [at(text, "Josep Rubio Palau", DOCTOR), at(text, "Rubio Palau", DOCTOR, 1),
             at(text, "Calle Josep Rubio", "CALLE")]
    result = shown(text, spans, confidences=[0.9, 0.6, 0.8])
    assert result == [
        ("Josep Rubio Palau", DOCTOR, 0.9, "model"),
        ("Rubio Palau", DOCTOR, 0.6, "model"),  # the whole name is not here: "Firmado: Rubio Palau"
        ("Calle Josep Rubio", "CALLE", 0.8, "model"),  # its name parts are not cut out of it
    ]
    text = "Médico: Josep Rubio Palau. Visto por josep Rubio Palau."
    spans = [at(text, "Josep Rubio Palau", DOCTOR), at(text, "Rubio Palau", DOCTOR, 1)]
    assert shown(text, spans, confidences=[0.9, 0.6]) == [
        ("Josep Rubio Palau", DOCTOR, 0.9, "model"), ("josep Rubio Palau", DOCTOR, 0.9, "propagated"),
    ]


def test_confidences_from_the_marginals():
    text = "Lugo y Lugo"
    tokens = tokenize(text)
    labels = bio_labels(["TERRITORIO"])  # O, B-TERRITORIO, I-TERRITORIO
    marginals = np.array([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.6, 0.35, 0.05]])
    spans = [Span(0, 4, "TERRITORIO")]
    assert span_confidences(tokens, spans, marginals, labels) == [pytest.approx(0.8)]
    result = consistent_spans(tokens, spans, marginals=marginals, labels=labels)
    assert result == [ShownSpan(Span(0, 4, "TERRITORIO"), pytest.approx(0.8), "model"),
                      ShownSpan(Span(7, 11, "TERRITORIO"), pytest.approx(0.8), "propagated")]
    # The model's own probability counts when it is higher than the seed's.
    marginals[2] = [0.05, 0.9, 0.05]
    marginals[0] = [0.3, 0.6, 0.1]
    assert consistent_spans(tokens, spans, marginals=marginals, labels=labels)[1].confidence == pytest.approx(0.9)


def test_propagated_spans_are_one_valid_bio_sequence():
    text = "Ana Gil vino. Gil y Ana Gil Gil."
    result = consistent_spans(tokenize(text), [at(text, "Ana Gil", NAME)], confidences=[0.9])
    spans = [s.span for s in result]
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    assert spans_to_bio(tokenize(text), spans)[1] == 0  # every span on token boundaries
    assert [text[s.start:s.end] for s in spans] == ["Ana Gil", "Gil", "Ana Gil Gil"]


def test_inputs_are_checked():
    text = "Ana"
    with pytest.raises(ValueError, match="2 confidences for 1 spans"):
        consistent_spans(tokenize(text), [Span(0, 3, NAME)], confidences=[0.1, 0.2])
    with pytest.raises(ValueError, match="marginals need their labels"):
        consistent_spans(tokenize(text), [Span(0, 3, NAME)], marginals=np.ones((1, 3)) / 3)
    assert consistent_spans([], []) == []
