"""Structured-PHI patterns (learning.core.patterns): each pattern on what it must and must not find, the
check digits worked by hand, the token alignment, the merge rule and the per-token names for the CRF."""
from __future__ import annotations

import pytest

from annotator.schemas import PRESETS
from corpus.text import Token, tokenize
from corpus.types import Span
from learning.core.patterns import (
    BY_NAME, KIND_LABELS, LIKELY, PATTERNS, SURE, Match, cif_is_valid, dni_letter, find, labels_for_kind, merge,
    non_overlapping, nuss_is_valid, patterns_for, token_pattern_names,
)

from .meddocan import read_split


def found(text: str, language: str | None = "es") -> list[tuple[str, str]]:
    """(pattern, matched text) of the resolved matches."""
    return [(m.pattern, text[m.start:m.end]) for m in find(text, language)]


def every(text: str, language: str | None = "es") -> set[tuple[str, str]]:
    return {(m.pattern, text[m.start:m.end]) for m in find(text, language, overlapping=True)}


# ------------------------------------------------------------------------------------------- the tables


def test_every_label_is_one_of_its_preset_and_every_pattern_maps_to_meddocan_or_is_english():
    assert set(KIND_LABELS) <= set(PRESETS)
    for schema, kinds in KIND_LABELS.items():
        for labels in kinds.values():
            assert set(labels) <= set(PRESETS[schema]), schema
    for pattern in PATTERNS:
        assert pattern.precision in (SURE, LIKELY)
        assert pattern.labels("MEDDOCAN"), pattern.name
    assert len(BY_NAME) == len(PATTERNS)


def test_labels_for_kind_follows_the_project_labels():
    assert labels_for_kind("phone", PRESETS["MEDDOCAN"]) == ("NUMERO_TELEFONO", "NUMERO_FAX")
    assert labels_for_kind("fax", PRESETS["i2b2-2014"]) == ("FAX", "PHONE")
    assert labels_for_kind("email", PRESETS["Stockholm-EPR"]) == ()
    # A custom schema reusing preset names.
    assert labels_for_kind("phone", ["PHONE", "NAME"]) == ("PHONE",)
    assert labels_for_kind("date", ["DATE", "FECHAS"]) == ("FECHAS", "DATE")


def test_patterns_for_a_language():
    names = {p.name for p in patterns_for("es")}
    assert {"dni", "nuss", "date_es", "email", "date_numeric"} <= names
    assert not {"date_en", "phone_us", "zip_us"} & names
    assert {p.name for p in patterns_for("es-ES")} == names
    assert {p.name for p in patterns_for(None)} == {p.name for p in PATTERNS}
    assert "dni" not in {p.name for p in patterns_for("sv")} and "email" in {p.name for p in patterns_for("sv")}


# ---------------------------------------------------------------------------------------- check digits


def test_dni_letter_worked_by_hand():
    # 12345678 = 23 * 536768 + 14 and letter 14 of TRWAGMYFPDXBNJZSQVHLCKE is Z.
    assert dni_letter(12345678) == "Z"
    assert found("DNI: 12345678Z.") == [("dni", "12345678Z")]
    assert found("DNI 12.345.678-Z") == [("dni", "12.345.678-Z")]
    assert found("DNI: 12345678A.") == []  # wrong letter
    assert found("lote 123456789Z") == []  # nine digits


def test_nie_and_nif_letters():
    # X -> 0: 01234567 = 23 * 53676 + 19 -> L; Y -> 1: 11234567 = 23 * 488459 + 10 -> X.
    assert found("NIE X1234567L") == [("nie_nif", "X1234567L")]
    assert found("NIE Y1234567X") == [("nie_nif", "Y1234567X")]
    assert found("NIE X1234567A") == []


def test_cif_control_worked_by_hand():
    # B1234567?: even places 2+4+6 = 12; odd places doubled 2, 6, 10 -> 1, 14 -> 5: 14; 26 -> control 4.
    assert cif_is_valid("B12345674") and not cif_is_valid("B12345675")
    # P (public body) takes the letter: 4 -> "JABCDEFGHI"[4] = D.
    assert cif_is_valid("P1234567D") and not cif_is_valid("P12345674")
    assert found("CIF B12345674 del hospital") == [("cif", "B12345674")]
    assert found("CIF B12345675") == []


def test_nuss_mod_97_worked_by_hand():
    # Body 12345678 >= 10^7: 2812345678 = 97 * 28993254 + 40.
    assert nuss_is_valid("28 12345678 40") and not nuss_is_valid("28 12345678 41")
    # Body 01234567 < 10^7: 28 * 10^7 + 1234567 = 281234567 = 97 * 2899325 + 42.
    assert nuss_is_valid("28/01234567/42") and not nuss_is_valid("28/01234567/40")
    assert found("NUSS 28 12345678 40.") == [("nuss", "28 12345678 40")]
    assert found("afiliado 281234567840") == [("nuss", "281234567840")]
    assert found("número 281234567841 de lote") == []  # twelve digits failing the check


def test_keyed_social_security_number_without_a_valid_control():
    # MEDDOCAN's surrogates fail the check; the keyword still names them.
    assert found("NASS: 26 63514095.") == [("nass_keyed", "26 63514095")]
    assert found("Nº de afiliación: 28 7654321 11") == [("nass_keyed", "28 7654321 11")]
    assert found("NSS: 92-91-90-8443-1") == [("nass_keyed", "92-91-90-8443-1")]


def test_us_ssn():
    assert found("SSN 123-45-6789", "en") == [("ssn_us", "123-45-6789")]
    assert found("SSN 666-45-6789", "en") == [] and found("SSN 123-00-6789", "en") == []


# ------------------------------------------------------------------------------------- record numbers


def test_record_numbers_after_their_keywords():
    assert found("NHC: 368503.") == [("record_number", "368503")]
    assert found("CIPA: nhc-1305469") == [("record_number", "1305469")]
    assert found("Nº historia clínica: 78956135/2") == [("record_number", "78956135/2")]
    assert found("NHC: 22 75689632 36") == [("record_number", "22 75689632 36")]
    assert found("MRN: 0012345, record no. 445566", "en") == [
        ("record_number", "0012345"), ("record_number", "445566")]
    assert found("NHC: 12") == []  # too short for a record number
    assert found("a record 2019 high", "en") == []


def test_episode_and_collegiate_numbers():
    assert found("Episodio: 3407605.") == [("episode", "3407605")]
    assert found("Médico: Ignacio Navarro NºCol: 28 28 70973.") == [("licence", "28 28 70973")]


# ----------------------------------------------------------------------------------------------- phones


def test_spanish_phones_in_phone_grouping_are_sure_and_nine_plain_digits_likely():
    assert found("Llamar al 630 75 89 15 o al 91 336 87 85") == [
        ("phone_es", "630 75 89 15"), ("phone_es", "91 336 87 85")]
    assert found("móvil 630-758-915") == [("phone_keyed", "630-758-915")]
    assert found("contacto 619128686") == [("phone_es_plain", "619128686")]
    assert find("contacto 619128686", "es")[0].precision == LIKELY
    assert found("(+34) 91-555-12-34") == [("phone_es", "(+34) 91-555-12-34")]


def test_phone_and_fax_after_their_keywords():
    text = "Tel.: 948 255 400 Fax: 948 255 401. Tfno. 848428434"
    assert found(text) == [
        ("phone_keyed", "948 255 400"), ("fax_keyed", "948 255 401"), ("phone_keyed", "848428434")]
    assert [m.kind for m in find(text, "es")] == ["phone", "fax", "phone"]


def test_international_and_us_phones():
    assert found("phone +34 915 551 234") == [("phone_keyed", "+34 915 551 234")]
    assert found("llame al +44 20 7946 0958") == [("phone_intl", "+44 20 7946 0958")]
    assert found("Tel.: + 34 93 693 29 05") == [("phone_keyed", "+ 34 93 693 29 05")]
    assert found("FAX: + 34- 963864175") == [("fax_keyed", "+ 34- 963864175")]
    assert found("call (617) 555-0123 or 617-555-0199", "en") == [
        ("phone_us", "(617) 555-0123"), ("phone_us", "617-555-0199")]
    assert found("code 123-456-7890", "en") == []  # no US area code starts with 1


@pytest.mark.parametrize("text", [
    "glucemia de 12.5 mg/dl", "TA 120/80 mmHg", "plaquetas 250.000/mm3", "1.250.000 plaquetas",
    "900 000 000 UI de vitamina", "PSA de 1.16 ng/ml", "Leucocitos 17850 neutrófilos 86%", "a las 12:30:45",
    "versión 1.2.3", "IgG 1/2048", "pH 7.35", "dosis 20 mg cada 8 h",
])
def test_measurements_are_not_phi(text):
    assert found(text) == [] and found(text, "en") == []


# --------------------------------------------------------------------------------------------- internet


def test_email_url_and_ip_addresses():
    assert found("Correo electrónico: ana.gil@hospital.es.") == [("email", "ana.gil@hospital.es")]
    assert found("E-mail.hleonbrito@hotmail.com") == [("email", "hleonbrito@hotmail.com")]
    # After its keyword, an address lacking its domain's suffix; without the keyword, none.
    assert found("Chile. Correo electrónico: vtomicic@alemana. Correo") == [("email_keyed", "vtomicic@alemana")]
    assert found("e-mail: j.ruiz@hgu-alicante, tel") == [("email_keyed", "j.ruiz@hgu-alicante")]
    assert found("escribir a vtomicic@alemana.") == []
    assert found("Correo electrónico: ana.gil@hospital.es.") == [("email", "ana.gil@hospital.es")]
    assert found("véase https://x.org/a?b=1, o www.salud.es.") == [
        ("url", "https://x.org/a?b=1"), ("url", "www.salud.es")]
    assert found("servidor 192.168.1.20 y 2001:db8::1") == [("ipv4", "192.168.1.20"), ("ipv6", "2001:db8::1")]
    assert found("valor 256.1.1.1 y 10.01.1.1") == []
    assert found("en el portal salud.gob.es") == [("domain", "salud.gob.es")]


# ----------------------------------------------------------------------------------------------- places


def test_spanish_postcodes_in_an_address():
    assert found("CP: 28016.") == [("postcode_es_keyed", "28016")]
    assert found("c/ del Abedul 5-7, 2º dcha 28036 Madrid") == [("postcode_es_town", "28036")]
    assert find("28036 Madrid", "es")[0].precision == LIKELY
    assert found("CP: 53001") == [] and found("28036 mg") == []  # no province 53; no town


def test_us_zip_codes():
    assert found("Boston, MA 02114", "en") == [("zip_us", "02114")]
    assert found("ZIP code: 02114-1234", "en") == [("zip_us_keyed", "02114-1234")]
    assert found("scored 02114 points", "en") == []


# ------------------------------------------------------------------------------------------------ dates


def test_numeric_dates():
    assert found("03/03/2019, 2019-03-03, 3-3-19 y 12.12.2016") == [
        ("date_numeric", "03/03/2019"), ("date_numeric", "2019-03-03"), ("date_numeric", "3-3-19"),
        ("date_numeric", "12.12.2016")]
    assert found("12/31/2019", "en") == [("date_numeric", "12/31/2019")]  # month first
    assert found("32/13/2019 y 30/02/2019 y apartado 1.2.10") == []


def test_keyed_dates_keep_their_typing_errors():
    assert found("Fecha de Ingreso: 27/011/2014.") == [("date_keyed", "27/011/2014")]
    assert found("Fecha de nacimiento: 12/04 /2011.") == [("date_keyed", "12/04 /2011")]


def test_written_spanish_dates():
    assert found("El 3 de marzo de 2019 ingresó") == [("date_es", "3 de marzo de 2019")]
    assert found("en Marzo del 2013 y el 1º de mayo") == [("date_es", "Marzo del 2013"), ("date_es", "1º de mayo")]
    assert found("desde el 15-feb-07") == [("date_es", "15-feb-07")]
    assert found("diciembre-08 y sep-04") == [("date_es", "diciembre-08"), ("date_es", "sep-04")]
    assert found("el mar estaba en calma; mayo") == []
    assert found("3 mar") == []  # an abbreviated month needs a year


def test_written_english_dates():
    assert found("Seen on March 3, 2019 and 3rd of March 2019; May 2018.", "en") == [
        ("date_en", "March 3, 2019"), ("date_en", "3rd of March 2019"), ("date_en", "May 2018")]
    assert found("you may march on", "en") == []
    assert found("El 3 de marzo", "en") == []  # Spanish patterns are for Spanish


def test_years_and_months_in_context_are_likely():
    assert found("En el año 2000 y desde 2008, en junio") == [
        ("date_in_context", "año 2000"), ("date_in_context", "2008"), ("date_in_context", "junio")]
    assert found("in June", "en") == [("date_in_context", "June")]
    assert all(m.precision == LIKELY for m in find("desde 2008", "es"))
    assert found("en 2000 mg") == [] and found("in 2000 patients", "en") == [("date_in_context", "2000")]
    assert found("en mayoría") == []
    assert every("en junio de 2009") == {("date_es", "junio de 2009")}  # not the month alone as well


# --------------------------------------------------------------------------------------- token alignment


def test_matches_start_and_end_on_tokens():
    text = "Tel.: 948 255 400. NHC:786946231. Fecha de Ingreso: 12/12/2016."
    tokens = tokenize(text)
    starts, ends = {t.start for t in tokens}, {t.end for t in tokens}
    matches = find(text, "es", overlapping=True)
    assert [m.pattern for m in matches] == [
        "phone_es", "phone_keyed", "phone_es_plain", "record_number", "date_keyed", "date_numeric"]
    assert all(m.start in starts and m.end in ends for m in matches)


def test_a_token_cut_by_a_match_is_taken_whole():
    text = "www.x.es/ana@x.es"
    assert [t.text for t in tokenize(text)] == [text]
    assert every(text) == {("email", text), ("url", text), ("domain", text)}


def test_a_token_touched_only_by_punctuation_is_left_out():
    text = "ab(+34) 915 551 234"
    tokens = [Token("ab(", 0, 3), Token("+34)", 3, 7), Token("915", 8, 11), Token("551", 12, 15),
              Token("234", 16, 19)]
    [m] = find(text, "es", tokens=tokens)
    assert (m.start, m.end) == (3, 19)


def test_non_overlapping_prefers_sure_then_longer_then_pattern_order():
    a = Match(0, 9, "phone_es_plain", "phone", LIKELY)
    b = Match(0, 9, "record_number", "medical_record", SURE)
    c = Match(0, 4, "dni", "national_id", SURE)
    d = Match(10, 14, "email", "email", SURE)
    assert non_overlapping([a, c, b, d]) == [b, d]
    assert [m.pattern for m in find("NHC:786946231", "es")] == ["record_number"]


# ----------------------------------------------------------------------------------------------- merge

LABELS = PRESETS["MEDDOCAN"]
PHONE = Match(10, 22, "phone_es", "phone", SURE)


def test_merge_adds_a_sure_match_where_the_model_has_nothing():
    model = [Span(0, 5, "NOMBRE_SUJETO_ASISTENCIA")]
    assert merge(model, [PHONE], LABELS) == [Span(0, 5, "NOMBRE_SUJETO_ASISTENCIA"), Span(10, 22, "NUMERO_TELEFONO")]


def test_merge_keeps_the_model_span_of_equal_or_wider_extent():
    assert merge([Span(10, 22, "ID_SUJETO_ASISTENCIA")], [PHONE], LABELS) == [Span(10, 22, "ID_SUJETO_ASISTENCIA")]
    assert merge([Span(4, 22, "CALLE")], [PHONE], LABELS) == [Span(4, 22, "CALLE")]
    assert merge([Span(12, 30, "CALLE")], [PHONE], LABELS) == [Span(12, 30, "CALLE")]  # partly outside


def test_merge_widens_model_spans_strictly_inside_a_sure_match():
    # The model's label stays when the pattern can mean it ...
    assert merge([Span(10, 16, "NUMERO_FAX"), Span(17, 22, "NUMERO_FAX")], [PHONE], LABELS) == [
        Span(10, 22, "NUMERO_FAX")]
    # ... and the pattern's first label replaces one it cannot mean.
    assert merge([Span(13, 16, "TERRITORIO")], [PHONE], LABELS) == [Span(10, 22, "NUMERO_TELEFONO")]


def test_merge_ignores_likely_matches_unless_asked_and_kinds_without_a_label():
    likely = Match(10, 19, "phone_es_plain", "phone", LIKELY)
    assert merge([], [likely], LABELS) == []
    assert merge([], [likely], LABELS, precisions=(SURE, LIKELY)) == [Span(10, 19, "NUMERO_TELEFONO")]
    email = Match(0, 8, "email", "email", SURE)
    assert merge([], [email], PRESETS["Stockholm-EPR"]) == []
    assert merge([], [email, PHONE], ["PHONE", "EMAIL"]) == [Span(0, 8, "EMAIL"), Span(10, 22, "PHONE")]


def test_merge_on_a_real_text():
    text = "Tel.: 948 255 400. NHC: 368503. Fecha: 3 de marzo de 2019."
    matches = find(text, "es")
    model = [Span(text.index("368503"), text.index("368503") + 6, "ID_SUJETO_ASISTENCIA"),
             Span(text.index("marzo"), text.index("marzo") + 5, "FECHAS")]
    merged = merge(model, matches, LABELS)
    assert [(text[s.start:s.end], s.label) for s in merged] == [
        ("948 255 400", "NUMERO_TELEFONO"), ("368503", "ID_SUJETO_ASISTENCIA"), ("3 de marzo de 2019", "FECHAS")]


# ---------------------------------------------------------------------------------------- CRF attributes


def test_token_pattern_names():
    text = "NHC: 786946231. El 3 de marzo de 2019."
    tokens = tokenize(text)
    names = token_pattern_names(text, tokens)
    assert len(names) == len(tokens)
    by_text = {t.text: n for t, n in zip(tokens, names) if t.text not in ("de", ".")}
    assert by_text["NHC"] == () and by_text[":"] == () and by_text["El"] == ()
    assert by_text["786946231"] == ("record_number", "phone_es_plain")  # overlaps kept, in pattern order
    assert by_text["3"] == by_text["marzo"] == by_text["2019"] == ("date_es",)
    assert [n for t, n in zip(tokens, names) if t.text == "de"] == [("date_es",), ("date_es",)]
    assert token_pattern_names("") == []


# --------------------------------------------------------------------------------------------- MEDDOCAN


def test_sure_patterns_are_precise_on_a_meddocan_sample():
    docs = read_split("train", 100)
    if not docs:
        pytest.skip("MEDDOCAN corpus not available")
    matches = off_phi = 0
    for doc in docs:
        for m in find(doc.text, "es"):
            if m.precision == SURE:
                matches += 1
                off_phi += not any(s.start < m.end and m.start < s.end for s in doc.spans)
    assert matches > 500
    assert off_phi / matches < 0.01
