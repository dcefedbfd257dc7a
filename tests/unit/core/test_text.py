from __future__ import annotations

import pytest

from corpus.text import Token, TokenOffsets, offsets_of, sentence_bounds, tokenize


def texts(s: str) -> list[str]:
    return [t.text for t in tokenize(s)]


def test_offsets_point_into_the_text():
    s = "Paciente  de 70 años,\nNHC: 368503."
    toks = tokenize(s)
    assert all(s[t.start : t.end] == t.text for t in toks)
    assert toks[0] == Token("Paciente", 0, 8)
    assert toks[1] == Token("de", 10, 12)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("Fecha de nacimiento: 03/03/1946.", ["Fecha", "de", "nacimiento", ":", "03/03/1946", "."]),
        ("el 3-3-1946 y el 1946-03-03", ["el", "3-3-1946", "y", "el", "1946-03-03"]),
        ("a las 10:30 h", ["a", "las", "10:30", "h"]),
        ("Correo: nnavcu@hotmail.com.", ["Correo", ":", "nnavcu@hotmail.com", "."]),
        ("E-mail: ana.gil-rey@salud.es", ["E", "-", "mail", ":", "ana.gil-rey@salud.es"]),
        ("E-mail.hleon@hotmail.com", ["E", "-", "mail", ".", "hleon@hotmail.com"]),
        ("ver https://www.msc.es/guia.pdf.", ["ver", "https://www.msc.es/guia.pdf", "."]),
        ("Tel: 91 555 12 34.", ["Tel", ":", "91 555 12 34", "."]),
        ("Tel. 915-551-234", ["Tel", ".", "915-551-234"]),
        ("NºCol: 28 28 70973.", ["NºCol", ":", "28", "28", "70973", "."]),
        ("NHC 1234567-B, DNI 12345678X", ["NHC", "1234567-B", ",", "DNI", "12345678X"]),
        ("CIPA: nhc-1305469.", ["CIPA", ":", "nhc", "-", "1305469", "."]),
        ("PSA de 1.16 ng/ml y 3,5 mg", ["PSA", "de", "1.16", "ng", "/", "ml", "y", "3,5", "mg"]),
        ("Varón de 52años", ["Varón", "de", "52", "años"]),
        ("Gastón Demaría MartínezNºCol", ["Gastón", "Demaría", "Martínez", "NºCol"]),
        ("Remitido por: DRAlberto Miján", ["Remitido", "por", ":", "DR", "Alberto", "Miján"]),
        ("08005-Barcelona", ["08005", "-", "Barcelona"]),
        ("0-5 leucocitos/campo", ["0", "-", "5", "leucocitos", "/", "campo"]),
        ("niño, señora Peña (Ávila)", ["niño", ",", "señora", "Peña", "(", "Ávila", ")"]),
    ],
)
def test_tokens(source, expected):
    assert texts(source) == expected


def test_empty_and_whitespace():
    assert tokenize("") == []
    assert tokenize(" \n\t ") == []


def test_sentence_bounds_split_lines_and_stops_but_not_abbreviations():
    s = "Nombre: Ana.\nEdad: 70 años. Vive con la Sra. Gil y el Dr. Pérez. Alta el 3/3/2016.\n\nFin"
    toks = tokenize(s)
    bounds = sentence_bounds(s, toks)
    sentences = [" ".join(t.text for t in toks[i:j]) for i, j in bounds]
    assert sentences == [
        "Nombre : Ana .",
        "Edad : 70 años .",
        "Vive con la Sra . Gil y el Dr . Pérez .",
        "Alta el 3/3/2016 .",
        "Fin",
    ]
    # Contiguous cover of all tokens.
    assert bounds[0][0] == 0 and bounds[-1][1] == len(toks)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))


def test_sentence_bounds_keeps_address_numbers_and_initials_together():
    s = "Domicilio: C/. Gral. Rey, 59. 4 A. Remitido por J. García."
    toks = tokenize(s)
    assert sentence_bounds(s, toks) == [(0, len(toks))]


def test_sentence_bounds_empty():
    assert sentence_bounds("", []) == []


def test_token_offsets_read_as_the_tokens_they_stand_for():
    text = "Ana Gil, 42 años; NHC 123456."
    tokens = tokenize(text)
    offsets = TokenOffsets(text, [t.start for t in tokens], [t.end for t in tokens])
    assert len(offsets) == len(tokens) and offsets == tokens and tokens == offsets
    assert offsets[0] == tokens[0] and offsets[-1] == tokens[-1] and offsets[2:5] == tokens[2:5]
    assert list(offsets) == tokens and offsets != tokens[:-1]
    assert all(type(t.start) is int and type(t.end) is int for t in offsets)
    with pytest.raises(IndexError):
        offsets[len(tokens)]
    with pytest.raises(ValueError):
        TokenOffsets(text, [0, 1], [1])
    # Their starts and ends are read without making the tokens, the same as a list of tokens gives them.
    assert offsets_of(offsets) == (offsets.starts, offsets.ends)
    assert [list(side) for side in offsets_of(offsets)] == [list(side) for side in offsets_of(tokens)]
    assert offsets_of(tokens)[0][:3] == [0, 4, 7]
