"""Writers: exact output for small documents, and round trips through every format on MEDDOCAN dev."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from corpus.formats import FormatError, WRITERS, WriteSummary, read_corpus, write_corpus
from corpus.text import sentence_bounds, tokenize
from corpus.types import Document, Span

TRICKY = Document(
    name="tricky",
    text="Nombre:\tAna\r\nCalle Mayor\n3 ]]> fin & <x> \"q\" \u2028ñ",
    spans=(Span(8, 11, "NOMBRE"), Span(13, 26, "CALLE")),
    meta={"site": "H1", "n": 3},
)


def _pairs(docs):
    return {d.name: (d.text, d.spans) for d in docs}


# --- brat -------------------------------------------------------------------------------------------


def test_brat_round_trip_on_meddocan_dev(meddocan_dev, tmp_path):
    docs = read_corpus(meddocan_dev, "brat")

    summary = write_corpus(docs, tmp_path / "out", "brat")
    back = read_corpus(tmp_path / "out", "brat")

    assert summary.documents == 250
    assert summary.spans == 5801
    assert len(summary.files) == 500
    assert _pairs(back) == _pairs(docs)
    for doc in docs[:25]:
        assert (tmp_path / "out" / f"{doc.name}.txt").read_bytes() == (meddocan_dev / f"{doc.name}.txt").read_bytes()


def test_brat_ann_lines_in_span_order(tmp_path):
    write_corpus([TRICKY, Document(text="nada", name="empty")], tmp_path, "brat")

    assert (tmp_path / "tricky.ann").read_text(encoding="utf-8") == (
        "T1\tNOMBRE 8 11\tAna\n"
        "T2\tCALLE 13 26\tCalle Mayor 3\n"  # the line break inside the span is written as a space
    )
    assert (tmp_path / "tricky.txt").read_bytes() == TRICKY.text.encode("utf-8")
    assert (tmp_path / "empty.ann").read_bytes() == b""
    assert _pairs(read_corpus(tmp_path, "brat")) == {
        "tricky": (TRICKY.text, TRICKY.spans),
        "empty": ("nada", ()),
    }


def test_brat_refuses_a_label_with_a_space(tmp_path):
    doc = Document(text="Ana", name="d", spans=(Span(0, 3, "NOMBRE PACIENTE"),))

    with pytest.raises(FormatError) as info:
        write_corpus([doc], tmp_path, "brat")

    assert str(info.value) == "d.ann: label 'NOMBRE PACIENTE' cannot be written in brat (no spaces or ';' in labels)"


# --- i2b2 XML ---------------------------------------------------------------------------------------


def test_i2b2xml_round_trip_on_meddocan_dev(meddocan_dev, tmp_path):
    docs = read_corpus(meddocan_dev, "brat")

    summary = write_corpus(docs, tmp_path / "xml", "i2b2xml")
    back = read_corpus(tmp_path / "xml", "i2b2xml")

    assert (summary.documents, summary.spans, len(summary.files)) == (250, 5801, 250)
    assert _pairs(back) == _pairs(docs)


def test_i2b2xml_exact_shape_and_awkward_text(tmp_path):
    doc = Document(name="d", text="a]]>b\r\nAna", spans=(Span(7, 10, "NOMBRE"), Span(0, 5, "x y")))

    write_corpus([doc], tmp_path, "i2b2xml")

    assert (tmp_path / "d.xml").read_text(encoding="utf-8") == (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        "<DEIDLOOP>\n"
        "  <TEXT><![CDATA[a]]]]><![CDATA[>b]]>&#13;<![CDATA[\nAna]]></TEXT>\n"
        "  <TAGS>\n"
        '    <TAG id="T1" start="0" end="5" text="a]]&gt;b" TYPE="x y" comment=""/>\n'
        '    <NOMBRE id="T2" start="7" end="10" text="Ana" TYPE="NOMBRE" comment=""/>\n'
        "  </TAGS>\n"
        "</DEIDLOOP>\n"
    )
    expected = Document(text=doc.text, spans=tuple(sorted(doc.spans)), name="d")
    assert read_corpus(tmp_path / "d.xml", "i2b2xml") == [expected]


def test_i2b2xml_round_trip_of_tricky_text_and_custom_root(tmp_path):
    write_corpus([TRICKY], tmp_path, "i2b2xml", root_tag="MEDDOCAN")

    assert (tmp_path / "tricky.xml").read_text(encoding="utf-8").splitlines()[1] == "<MEDDOCAN>"
    assert _pairs(read_corpus(tmp_path, "i2b2xml")) == {"tricky": (TRICKY.text, TRICKY.spans)}


def test_i2b2xml_refuses_text_xml_cannot_hold(tmp_path):
    with pytest.raises(FormatError) as info:
        write_corpus([Document(text="bell\x07", name="b")], tmp_path, "i2b2xml")

    assert str(info.value) == "b.xml: the text has character U+0007 at offset 4, which XML cannot hold"


# --- JSON Lines -------------------------------------------------------------------------------------


def test_jsonl_round_trip_keeps_names_meta_and_text(tmp_path):
    docs = [TRICKY, Document(text="Sin spans.", name="plain")]

    summary = write_corpus(docs, tmp_path / "export.jsonl", "jsonl")
    back = read_corpus(tmp_path / "export.jsonl", "jsonl")

    assert summary == WriteSummary((tmp_path / "export.jsonl",), 2, 2, 0)
    assert back == [Document(text=d.text, spans=d.spans, name=d.name, meta=dict(d.meta)) for d in docs]
    lines = (tmp_path / "export.jsonl").read_text(encoding="utf-8").split("\n")
    assert len(lines) == 3 and lines[2] == ""
    assert json.loads(lines[1]) == {"name": "plain", "text": "Sin spans.", "spans": [], "meta": {}}


def test_jsonl_into_a_folder_and_meddocan_round_trip(meddocan_dev, tmp_path):
    docs = read_corpus(meddocan_dev, "brat")

    summary = write_corpus(docs, tmp_path / "folder", "jsonl")

    assert summary.files == (tmp_path / "folder" / "corpus.jsonl",)
    assert _pairs(read_corpus(tmp_path / "folder", "jsonl")) == _pairs(docs)


# --- CoNLL ------------------------------------------------------------------------------------------


def test_conll_exact_output_and_round_trip(tmp_path):
    docs = [
        Document(
            name="a",
            text="Paciente: Ana  García.\nEdad 45 años.",
            spans=(Span(10, 21, "NOMBRE"), Span(28, 35, "EDAD")),
        ),
        Document(name="b", text="Sin datos.", spans=()),
    ]

    summary = write_corpus(docs, tmp_path, "conll")

    assert summary == WriteSummary((tmp_path / "corpus.conll",), 2, 2, 0)
    assert (tmp_path / "corpus.conll").read_text(encoding="utf-8") == (
        "-DOCSTART-\tO\n\n"
        "Paciente\tO\n:\tO\nAna\tB-NOMBRE\nGarcía\tI-NOMBRE\n.\tO\n\n"
        "Edad\tO\n45\tB-EDAD\naños\tI-EDAD\n.\tO\n\n"
        "-DOCSTART-\tO\n\n"
        "Sin\tO\ndatos\tO\n.\tO\n\n"
    )
    first, second = read_corpus(tmp_path / "corpus.conll", "conll")
    assert first == Document(
        name="corpus:1",
        text="Paciente : Ana García .\nEdad 45 años .",
        spans=(Span(11, 21, "NOMBRE"), Span(29, 36, "EDAD")),
    )
    assert second == Document(name="corpus:2", text="Sin datos .")


def test_conll_single_document_has_no_docstart_and_counts_lossy_spans(tmp_path):
    doc = Document(
        name="x",
        text="Ana García vino",
        spans=(Span(0, 2, "NOMBRE"), Span(4, 10, "APELLIDO"), Span(4, 15, "OTRO")),
    )

    summary = write_corpus([doc], tmp_path / "one.conll", "conll")

    # "Ana" is cut in the middle (misaligned) and OTRO overlaps APELLIDO: two spans do not come back.
    assert summary.lossy_spans == 2
    assert (tmp_path / "one.conll").read_text(encoding="utf-8") == "Ana\tB-NOMBRE\nGarcía\tB-APELLIDO\nvino\tO\n\n"
    assert read_corpus(tmp_path / "one.conll", "conll") == [
        Document(name="one", text="Ana García vino", spans=(Span(0, 3, "NOMBRE"), Span(4, 10, "APELLIDO")))
    ]


@pytest.mark.slow
def test_conll_round_trip_on_meddocan_dev(meddocan_dev, tmp_path):
    docs = read_corpus(meddocan_dev, "brat")

    summary = write_corpus(docs, tmp_path, "conll")
    back = read_corpus(tmp_path / "corpus.conll", "conll")

    assert [d.name for d in back] == [f"corpus:{k}" for k in range(1, 251)]
    expected_total = 0
    for doc, got in zip(docs, back):
        tokens = tokenize(doc.text)
        sentences = sentence_bounds(doc.text, tokens)
        assert got.text == "\n".join(" ".join(t.text for t in tokens[i:j]) for i, j in sentences)
        # What should survive: spans on token boundaries, inside one sentence, not overlapping another.
        starting, ending = {}, {}  # offset -> (sentence number, token index)
        for number, (i, j) in enumerate(sentences):
            for t in range(i, j):
                starting[tokens[t].start] = ending[tokens[t].end] = (number, t)
        expected, reach = [], -1
        for span in doc.spans:
            first, last = starting.get(span.start), ending.get(span.end)
            if first is not None and last is not None and first[0] == last[0] and span.start >= reach:
                expected.append((span.label, " ".join(t.text for t in tokens[first[1] : last[1] + 1])))
            reach = max(reach, span.end)
        surviving = Counter((s.label, got.text[s.start : s.end]) for s in got.spans)
        assert Counter(expected) - surviving == Counter()
        expected_total += len(expected)
    assert summary.spans == 5801
    assert summary.lossy_spans == 5801 - expected_total
    assert summary.lossy_spans < 30  # the tokenizer keeps almost every MEDDOCAN span whole


# --- shared behaviour -------------------------------------------------------------------------------


def test_names_are_made_safe_and_unique(tmp_path):
    docs = [Document(text="uno", name="a/b:c"), Document(text="dos", name=""), Document(text="tres", name=".hidden")]

    summary = write_corpus(docs, tmp_path, "txt")

    assert sorted(p.name for p in summary.files) == ["_hidden.txt", "a_b_c.txt", "doc-00002.txt"]


def test_two_documents_with_one_file_name_is_an_error(tmp_path):
    docs = [Document(text="uno", name="Informe"), Document(text="dos", name="informe")]

    with pytest.raises(FormatError) as info:
        write_corpus(docs, tmp_path / "out", "brat")

    assert str(info.value) == "out: documents 1 and 2 would both be written as 'informe'; give them distinct names"


def test_writers_refuse_a_span_past_the_end(tmp_path):
    doc = Document(text="corto", name="d", spans=(Span(2, 9, "X"),))

    for fmt in WRITERS:
        if fmt == "txt":
            continue
        with pytest.raises(FormatError) as info:
            write_corpus([doc], tmp_path / fmt, fmt)
        assert info.value.message == "d: span 2-9 'X': offset 9 is past the end of the text (5 characters)", fmt
