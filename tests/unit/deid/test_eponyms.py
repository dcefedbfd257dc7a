"""The eponym guard (deid.core.eponyms): eponyms in a medical context are not PHI."""
import pytest

from corpus.types import Span
from deid.core.eponyms import EPONYMS, STANDALONE_EPONYMS, EponymGuard, is_eponym, split_eponyms


def check(text: str, value: str, extra=()) -> bool:
    start = text.index(value)
    return is_eponym(text, Span(start, start + len(value), "NOMBRE"), extra)


def test_the_built_in_list_holds_at_least_forty_eponyms():
    names = EPONYMS | STANDALONE_EPONYMS
    assert len(names) >= 40
    assert {"Parkinson", "Alzheimer", "Crohn", "Sjögren", "Down", "Hodgkin", "Wilson", "Graves", "Cushing",
            "Addison", "Barrett", "Dupuytren", "Willebrand"} <= names


@pytest.mark.parametrize("text, value", [
    ("Diagnosticada de enfermedad de Parkinson hace años.", "Parkinson"),
    ("Paciente con síndrome de Down.", "Down"),
    ("Paciente con síndrome de Down.", "síndrome de Down"),  # the span holds its own context
    ("Antecedente de enfermedad de Wilson.", "Wilson"),
    ("Sd. de Cushing iatrogénico.", "Cushing"),
    ("Esófago de Barrett sin displasia.", "Barrett"),
    ("Enfermedad inflamatoria intestinal tipo Crohn.", "Crohn"),
    ("Síndrome de Guillain-Barré.", "Guillain-Barré"),
    ("Enfermedad de von Willebrand tipo 1.", "Willebrand"),
    ("Enfermedad de von Willebrand tipo 1.", "von Willebrand"),
    ("Linfoma de Hodgkin en remisión.", "Hodgkin"),
    ("Tiene Parkinson desde 2010.", "Parkinson"),  # standalone, the capital only opens the sentence
    ("Antecedentes: Alzheimer.", "Alzheimer"),
    ("Holter de 24 horas normal.", "Holter"),
    ("Sjogren primario.", "Sjogren"),  # accents optional
    ("History of Parkinson's disease.", "Parkinson"),
    ("History of Parkinson's disease.", "Parkinson's"),
    ("Graves disease treated with radioiodine.", "Graves"),
    ("Known Crohn disease.", "Crohn"),
    ("Tidigare Parkinsons sjukdom.", "Parkinsons"),
    ("Tidigare Parkinsons sjukdom.", "Parkinsons sjukdom"),
    ("Affetto da morbo di Crohn.", "Crohn"),
])
def test_eponyms_in_a_medical_context(text, value):
    assert check(text, value)


@pytest.mark.parametrize("text, value", [
    ("Wilson acude a consulta.", "Wilson"),  # a common surname needs a medical word around it
    ("Remitido por el Dr. Barrett.", "Barrett"),
    ("El Sr. Parkinson acude.", "Parkinson"),  # title
    ("Juan Parkinson acude.", "Parkinson"),  # a first name before it
    ("Visto por Ramos Parkinson.", "Parkinson"),  # a capitalised word inside the sentence
    ("Enfermedad de Pérez.", "Pérez"),  # not an eponym
    ("Mr. Down was discharged.", "Down"),
])
def test_names_that_are_not_eponyms_here(text, value):
    assert not check(text, value)


def test_a_project_adds_its_own_eponyms():
    text = "Enfermedad de Pérez-Rodríguez confirmada."
    assert not check(text, "Pérez-Rodríguez")
    assert check(text, "Pérez-Rodríguez", extra=["Pérez-Rodríguez"])
    guard = EponymGuard(extra_standalone=["Zubizarreta"])
    text = "Tiene Zubizarreta."
    assert guard.is_eponym(text, Span(6, 17, "NOMBRE"))
    assert not EponymGuard(extra=["Zubizarreta"]).is_eponym(text, Span(6, 17, "NOMBRE"))


def test_model_suggestions_lose_their_eponyms():
    text = "Enfermedad de Crohn. Visto por la Dra. Crohn y por Ana."
    spans = [Span(14, 19, "NOMBRE"), Span(39, 44, "NOMBRE"), Span(51, 54, "NOMBRE")]
    assert [text[s.start:s.end] for s in spans] == ["Crohn", "Crohn", "Ana"]
    assert split_eponyms(text, spans) == ([spans[1], spans[2]], [spans[0]])
