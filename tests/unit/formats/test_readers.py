"""Readers on the real corpora (MEDDOCAN, WNUT-17) and on small hand-made files with known answers."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from corpus.formats import FORMATS, READERS, read_corpus, validate_spans
from corpus.formats.errors import SpanProblem
from corpus.types import Document, Span


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


# --- MEDDOCAN ---------------------------------------------------------------------------------------


def test_meddocan_dev_brat_counts_and_first_document(meddocan_dev):
    docs = read_corpus(meddocan_dev, "brat")

    assert len(docs) == 250
    assert sum(len(d.spans) for d in docs) == 5801
    assert [d.name for d in docs] == sorted(d.name for d in docs)
    first = docs[0]
    assert first.name == "S0004-06142006000500012-1"
    assert len(first.text) == 3064
    assert first.spans[:3] == (
        Span(29, 34, "NOMBRE_SUJETO_ASISTENCIA"),
        Span(47, 63, "NOMBRE_SUJETO_ASISTENCIA"),
        Span(70, 77, "ID_SUJETO_ASISTENCIA"),
    )
    assert first.text[first.spans[0].start : first.spans[0].end] == "Pedro"
    assert Span(3042, 3063, "CORREO_ELECTRONICO") in first.spans
    assert first.text[3042:3063] == "eromeroselas@yahoo.es"
    labels = Counter(s.label for d in docs for s in d.spans)
    assert len(labels) == 22
    assert labels.most_common(3) == [("TERRITORIO", 987), ("FECHAS", 724), ("EDAD_SUJETO_ASISTENCIA", 521)]
    assert all(list(d.spans) == sorted(d.spans) for d in docs)


def test_meddocan_train_brat_counts(meddocan_train):
    docs = read_corpus(meddocan_train, "brat")

    assert len(docs) == 500
    assert sum(len(d.spans) for d in docs) == 11333
    assert validate_spans(docs) == []


def test_meddocan_text_is_read_byte_for_byte(meddocan_dev):
    docs = read_corpus(meddocan_dev, "brat")

    for doc in docs[:25]:
        assert doc.text.encode("utf-8") == (meddocan_dev / f"{doc.name}.txt").read_bytes()


def test_meddocan_dev_brat_and_i2b2xml_agree(meddocan_dev, meddocan_dev_xml):
    from_brat = {d.name: (d.text, d.spans) for d in read_corpus(meddocan_dev, "brat")}
    from_xml = {d.name: (d.text, d.spans) for d in read_corpus(meddocan_dev_xml, "i2b2xml")}

    assert len(from_xml) == 250
    assert from_xml.keys() == from_brat.keys()
    differing = [name for name in from_brat if from_brat[name] != from_xml[name]]
    assert differing == []


def test_brat_single_file_reads_its_pair(meddocan_dev):
    by_txt = read_corpus(meddocan_dev / "S0004-06142006000500012-1.txt", "brat")
    by_ann = read_corpus(meddocan_dev / "S0004-06142006000500012-1.ann", "brat")

    assert by_txt == by_ann
    assert len(by_txt) == 1
    assert len(by_txt[0].spans) == 17  # the 17 T lines of the .ann


# --- WNUT-17 ----------------------------------------------------------------------------------------


def test_wnut17_train_counts(wnut17):
    (doc,) = read_corpus(wnut17 / "wnut17train.conll", "conll")

    assert doc.name == "wnut17train"
    assert doc.text.count("\n") + 1 == 3394  # sentences
    assert len(doc.spans) == 1975  # entities
    assert len(doc.text) == 335138
    assert Counter(s.label for s in doc.spans) == {
        "person": 660,
        "location": 548,
        "group": 264,
        "corporation": 221,
        "product": 142,
        "creative-work": 140,
    }
    assert [(doc.text[s.start : s.end], s.label) for s in doc.spans[:3]] == [
        ("Empire State Building", "location"),
        ("ESB", "location"),
        ("AHFA", "group"),
    ]
    assert doc.text.startswith("@paulwalk It 's the view from where I 'm living for two weeks . Empire State Building")


def test_wnut17_dev_counts(wnut17):
    (doc,) = read_corpus(wnut17 / "emerging.dev.conll", "conll")

    assert doc.text.count("\n") + 1 == 1009
    assert len(doc.spans) == 836


def test_conll_folder_reads_every_file_sorted(wnut17):
    docs = read_corpus(wnut17, "conll")

    assert [d.name for d in docs] == ["emerging.dev", "wnut17train"]


# --- CoNLL, hand-made -------------------------------------------------------------------------------


def test_conll_docstart_iob1_and_columns(tmp_path):
    path = _write(
        tmp_path / "mini.conll",
        "-DOCSTART- -X- -X- O\n"
        "\n"
        "John\tNNP\tB-PER\n"
        "Smith\tNNP\tI-PER\n"
        "visited\tVBD\tO\n"
        "Paris\tNNP\tI-LOC\n"  # IOB1: I- after O opens a span
        "\n"
        "Rome\tB-LOC\n"
        "\t\n"  # a tab-only line is a sentence break too
        "Jane I-PER\n"
        "Doe   I-ORG\n"  # whitespace columns; a new type opens a new span
        "-DOCSTART- O\n"
        "\n"
        "\n"
        "Only O\n"
        "words O\n",
    )

    first, second = read_corpus(path, "conll")

    assert first.name == "mini:1"
    assert first.text == "John Smith visited Paris\nRome\nJane Doe"
    assert first.spans == (
        Span(0, 10, "PER"),
        Span(19, 24, "LOC"),
        Span(25, 29, "LOC"),
        Span(30, 34, "PER"),
        Span(35, 38, "ORG"),
    )
    assert second == Document(text="Only words", spans=(), name="mini:2")


def test_conll_span_never_crosses_a_sentence_break(tmp_path):
    path = _write(tmp_path / "cut.conll", "New\tB-LOC\n\nYork\tI-LOC\n")

    (doc,) = read_corpus(path, "conll")

    assert doc.text == "New\nYork"
    assert doc.spans == (Span(0, 3, "LOC"), Span(4, 8, "LOC"))


def test_conll_tab_separated_token_keeps_its_spaces(tmp_path):
    path = _write(tmp_path / "phone.conll", "Tel\tO\n:\tO\n612 345 678\tB-TEL\n")

    (doc,) = read_corpus(path, "conll")

    assert doc.text == "Tel : 612 345 678"
    assert doc.spans == (Span(6, 17, "TEL"),)


def test_conll_crlf_lines(tmp_path):
    path = _write(tmp_path / "crlf.conll", "A\tB-X\r\nb\tO\r\n\r\nC\tO\r\n")

    (doc,) = read_corpus(path, "conll")

    assert doc.text == "A b\nC"
    assert doc.spans == (Span(0, 1, "X"),)


# --- txt --------------------------------------------------------------------------------------------


def test_txt_file_and_folder(tmp_path):
    _write(tmp_path / "notes" / "b.txt", "Segundo.\r\nLínea dos.\n")
    _write(tmp_path / "notes" / "a.txt", "\ufeffPrimero.")
    _write(tmp_path / "notes" / "._a.txt", b"\x00\x05Mac resource fork")
    _write(tmp_path / "notes" / "readme.md", "not a document")

    docs = read_corpus(tmp_path / "notes", "txt")

    assert docs == [Document(text="Primero.", name="a"), Document(text="Segundo.\r\nLínea dos.\n", name="b")]
    assert read_corpus(tmp_path / "notes" / "b.txt", "txt") == [docs[1]]


# --- JSON Lines -------------------------------------------------------------------------------------


def test_jsonl_fields_names_and_meta(tmp_path):
    path = _write(
        tmp_path / "batch.jsonl",
        '{"text": "Ana vive en Soria.", "spans": [{"start": 12, "end": 17, "label": "LOC"}, [0, 3, "NAME"]], '
        '"name": "n1", "meta": {"site": "H1"}}\n'
        "\n"
        '{"text": "Sin datos.", "id": 42, "source": "scan", "meta": {"source": "ocr"}}\n'
        '{"text": "Otro.", "meta": {"id": "m7"}}\n'
        '{"text": "Nada."}\r\n',
    )

    docs = read_corpus(path, "jsonl")

    assert docs == [
        Document(
            text="Ana vive en Soria.",
            spans=(Span(0, 3, "NAME"), Span(12, 17, "LOC")),
            name="n1",
            meta={"site": "H1"},
        ),
        Document(text="Sin datos.", name="42", meta={"source": "ocr"}),
        Document(text="Otro.", name="m7", meta={"id": "m7"}),
        Document(text="Nada.", name="batch.jsonl:5"),
    ]


def test_jsonl_line_separator_inside_text_is_not_a_line_break(tmp_path):
    path = _write(tmp_path / "u.jsonl", '{"text": "uno\u2028dos", "name": "u"}\n')

    (doc,) = read_corpus(path, "jsonl")

    assert doc.text == "uno\u2028dos"


# --- i2b2 XML, hand-made ----------------------------------------------------------------------------


def test_i2b2xml_labels_cdata_and_positionless_tags(tmp_path):
    path = _write(
        tmp_path / "rec.xml",
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<deidi2b2>\n"
        "<TEXT><![CDATA[Patient: John <Doe>\n"
        "Seen 2014-01-02 & discharged.]]></TEXT>\n"
        "<TAGS>\n"
        '<NAME id="P0" start="9" end="13" text="John" TYPE="PATIENT" comment=""/>\n'
        '<DATE id="P1" start="25" end="35" text="2014-01-02"/>\n'
        '<DOCTIME type="admission"/>\n'
        "</TAGS>\n"
        "</deidi2b2>\n",
    )

    (doc,) = read_corpus(path, "i2b2xml")

    assert doc.name == "rec"
    assert doc.text == "Patient: John <Doe>\nSeen 2014-01-02 & discharged."
    assert doc.spans == (Span(9, 13, "PATIENT"), Span(25, 35, "DATE"))


def test_i2b2xml_text_attribute_with_unescaped_line_break_is_accepted(tmp_path):
    path = _write(
        tmp_path / "wrap.xml",
        "<R><TEXT><![CDATA[Calle\nMayor 3]]></TEXT>"
        '<TAGS><LOCATION start="0" end="13" text="Calle\nMayor 3" TYPE="CALLE"/></TAGS></R>',
    )

    (doc,) = read_corpus(path, "i2b2xml")

    assert doc.spans == (Span(0, 13, "CALLE"),)


# --- registry and validation ------------------------------------------------------------------------


def test_registry_lists_the_five_formats():
    assert FORMATS == ("txt", "jsonl", "brat", "conll", "i2b2xml")
    assert set(READERS) == set(FORMATS)
    with pytest.raises(ValueError, match="unknown corpus format 'csv'"):
        read_corpus("whatever", "csv")


def test_validate_spans_reports_every_problem_in_order():
    docs = [
        Document(
            text="Ana Pérez, 45 años",
            name="d1",
            spans=(
                Span(0, 3, "NOMBRE"),
                Span(0, 9, "NOMBRE"),  # overlaps the first
                Span(0, 9, "NOMBRE"),  # exact repeat
                Span(11, 19, "EDAD"),  # past the end (18 characters)
                Span(13, 13, "EDAD"),  # empty
                Span(11, 13, "DNI"),  # unknown label
            ),
        ),
        Document(text="Sin problemas", name="d2", spans=(Span(0, 3, "NOMBRE"),)),
    ]

    problems = validate_spans(docs, labels={"NOMBRE", "EDAD"}, allow_overlap=False)

    assert problems == [
        SpanProblem("d1", Span(0, 9, "NOMBRE"), "overlap", "overlaps span 0-3 NOMBRE"),
        SpanProblem("d1", Span(0, 9, "NOMBRE"), "overlap", "repeats span 0-9 NOMBRE"),
        SpanProblem("d1", Span(11, 13, "DNI"), "unknown_label", "label 'DNI' is not in the label set"),
        SpanProblem("d1", Span(11, 19, "EDAD"), "out_of_range", "lies outside the text (18 characters)"),
        SpanProblem("d1", Span(13, 13, "EDAD"), "empty", "covers no characters (start is not before end)"),
    ]
    assert str(problems[2]) == "d1: span 11-13 DNI: label 'DNI' is not in the label set"
    assert [p.kind for p in validate_spans(docs, labels=None, allow_overlap=True)] == ["out_of_range", "empty"]
