"""Malformed input: every reader names the file (as the user knows it) and the line, with a message a
person can act on.  Fixtures are written into tmp_path by each test."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from corpus.formats import FormatError, SpanProblem, read_corpus, validate_spans
from corpus.formats import files as format_files
from corpus.types import Span

TEXT = "Paciente: Ana García, 45 años.\nIngreso: 12/03/2019.\n"  # 52 characters
GOOD_ANN = "T1\tNOMBRE 10 20\tAna García\n#1\tAnnotatorNotes T1\tnombre completo\nT2\tEDAD 22 29\t45 años\n"


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def _brat(tmp_path: Path, ann: str, text: str = TEXT) -> Path:
    folder = tmp_path / "corpus"
    _write(folder / "rec.txt", text)
    _write(folder / "rec.ann", ann)
    return folder


def _error(path: Path, fmt: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        read_corpus(path, fmt)
    return info.value


def test_format_error_fields_and_text():
    err = FormatError("dev/S0004-06142005000700014-1.ann", 7, "offset 812 is past the end of the text (801 characters)")

    assert (err.path, err.line, err.message) == (
        "dev/S0004-06142005000700014-1.ann",
        7,
        "offset 812 is past the end of the text (801 characters)",
    )
    assert str(err) == (
        "dev/S0004-06142005000700014-1.ann, line 7: offset 812 is past the end of the text (801 characters)"
    )
    assert str(FormatError("a.xml", None, "is empty")) == "a.xml: is empty"
    assert isinstance(err, ValueError)
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.path, copy.line, copy.message) == (err.path, err.line, err.message)


def test_the_well_formed_brat_fixture_reads(tmp_path):
    (doc,) = read_corpus(_brat(tmp_path, GOOD_ANN + "R1\tRel Arg1:T1 Arg2:T2\nA1\tNegated T1\n"), "brat")

    assert doc.spans == (Span(10, 20, "NOMBRE"), Span(22, 29, "EDAD"))


# --- brat -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ann", "expected"),
    [
        (
            GOOD_ANN + "T3\tFECHAS 40",
            "corpus/rec.ann, line 4: truncated annotation T3: expected ID<TAB>LABEL START END<TAB>TEXT",
        ),
        (
            GOOD_ANN + "T3\tFECHAS 40 5x\t12/03/2019\n",
            "corpus/rec.ann, line 4: annotation T3: offset '5x' is not a non-negative integer",
        ),
        (
            GOOD_ANN + "T3\tFECHAS 41 58\t12/03/2019.\n",
            "corpus/rec.ann, line 4: offset 58 is past the end of the text (52 characters)",
        ),
        (GOOD_ANN + "T3\tFECHAS 41 41\t\n", "corpus/rec.ann, line 4: empty span: start 41 is not before end 41"),
        (
            GOOD_ANN + "T3\tFECHAS 41 43;44 46\t12 03\n",
            "corpus/rec.ann, line 4: annotation T3 is discontinuous (41 43;44 46); only continuous spans are "
            "supported, split it into separate annotations",
        ),
        (
            "T1\tNOMBRE 10 20\tAna Garcia\n",
            "corpus/rec.ann, line 1: annotation T1 says 'Ana Garcia' but the text at 10-20 is 'Ana García'",
        ),
        (GOOD_ANN + "T1\tEDAD 22 24\t45\n", "corpus/rec.ann, line 4: duplicate annotation id T1 (also on line 1)"),
        (
            GOOD_ANN + "T3\tFECHAS\t12/03/2019\n",
            "corpus/rec.ann, line 4: annotation T3: expected LABEL START END, found 'FECHAS'",
        ),
    ],
    ids=[
        "truncated", "non-integer", "past-end", "empty-span", "discontinuous", "surface-mismatch", "duplicate-id",
        "no-offsets",
    ],
)
def test_brat_malformed_ann(tmp_path, ann, expected):
    err = _error(_brat(tmp_path, ann), "brat")

    assert str(err) == expected
    assert err.path == "corpus/rec.ann"


def test_brat_offset_past_end_read_as_single_file(tmp_path):
    folder = _brat(tmp_path, "T1\tNOMBRE 10 99\tAna García\n")

    err = _error(folder / "rec.txt", "brat")

    assert (err.path, err.line, err.message) == ("rec.ann", 1, "offset 99 is past the end of the text (52 characters)")


def test_brat_ann_without_txt(tmp_path):
    folder = _brat(tmp_path, GOOD_ANN)
    _write(folder / "lost.ann", "T1\tNOMBRE 0 3\tAna\n")

    assert str(_error(folder, "brat")) == "corpus/lost.ann: has no matching lost.txt (the text it annotates)"


_MISSING_ADVICE = (
    "a text without its .ann would be imported as gold with no PHI. Add the .ann (an empty one if the text "
    "truly has no PHI), or import the folder as text only to annotate (import_corpus --unannotated, or "
    '"Text only" on the import form)'
)


def test_brat_txt_without_ann_is_an_error_naming_the_file(tmp_path):
    folder = _brat(tmp_path, GOOD_ANN)
    _write(folder / "zz-lost.txt", "Paciente: Eva.\n")

    err = _error(folder, "brat")

    assert (err.path, err.line) == ("corpus/zz-lost.txt", None)
    assert str(err) == f"corpus/zz-lost.txt: has no zz-lost.ann beside it; {_MISSING_ADVICE}"


def test_brat_single_txt_without_ann_is_an_error(tmp_path):
    path = _write(tmp_path / "alone.txt", TEXT)

    assert str(_error(path, "brat")) == f"alone.txt: has no alone.ann beside it; {_MISSING_ADVICE}"


def test_brat_folder_of_texts_only_names_the_first_few(tmp_path):
    folder = tmp_path / "notes"
    for name in ("a", "b", "c", "d", "e"):
        _write(folder / f"{name}.txt", f"Nota {name}.\n")

    err = _error(folder, "brat")

    assert str(err) == (
        "notes/a.txt: has no a.ann beside it (nor do b.txt, c.txt and 2 more: 5 of 5 texts lack their .ann); "
        + _MISSING_ADVICE
    )


def test_brat_two_texts_without_ann_are_both_named(tmp_path):
    folder = _brat(tmp_path, GOOD_ANN)
    _write(folder / "x.txt", "Uno.\n")
    _write(folder / "y.txt", "Dos.\n")

    assert str(_error(folder, "brat")).startswith(
        "corpus/x.txt: has no x.ann beside it (nor do y.txt: 2 of 3 texts lack their .ann); "
    )


def test_brat_text_only_reads_texts_without_ann_as_documents_without_spans(tmp_path):
    folder = _brat(tmp_path, GOOD_ANN)
    _write(folder / "plain.txt", "\ufeffPaciente: Eva.\n")

    docs = read_corpus(folder, "brat", text_only=True)

    assert [(d.name, d.text, d.spans) for d in docs] == [
        ("plain", "\ufeffPaciente: Eva.\n", ()),  # brat keeps a byte-order mark: offsets count it
        ("rec", TEXT, (Span(10, 20, "NOMBRE"), Span(22, 29, "EDAD"))),
    ]
    assert [d.name for d in read_corpus(tmp_path / "corpus" / "plain.txt", "brat", text_only=True)] == ["plain"]


def test_brat_text_only_still_refuses_an_ann_without_its_txt(tmp_path):
    folder = tmp_path / "notes"
    _write(folder / "a.txt", "Nota.\n")
    _write(folder / "lost.ann", "T1\tNOMBRE 0 3\tAna\n")

    with pytest.raises(FormatError) as info:
        read_corpus(folder, "brat", text_only=True)

    assert str(info.value) == "notes/lost.ann: has no matching lost.txt (the text it annotates)"


def test_brat_binary_txt(tmp_path):
    folder = _brat(tmp_path, "")
    _write(folder / "rec.txt", b"line one\nline two\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

    err = _error(folder, "brat")

    assert str(err) == "corpus/rec.txt, line 3: is not UTF-8 text (binary file?)"  # the first bad byte


def test_latin1_text_is_not_utf8(tmp_path):
    folder = _brat(tmp_path, "")
    _write(folder / "rec.txt", "Paciente: Ana\nGarcía\n".encode("latin-1"))

    assert str(_error(folder, "brat")) == "corpus/rec.txt, line 2: is not UTF-8 text (binary file?)"


def test_empty_txt_is_an_error_but_empty_ann_is_not(tmp_path):
    folder = _brat(tmp_path, "")
    assert read_corpus(folder, "brat")[0].spans == ()

    _write(folder / "rec.txt", " \n\t\n")
    assert str(_error(folder, "brat")) == "corpus/rec.txt: is empty"


# --- size guard, missing paths ----------------------------------------------------------------------


def test_file_over_the_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(format_files, "MAX_FILE_BYTES", 3 * 1024 * 1024)
    path = _write(tmp_path / "big.txt", b"a" * (4 * 1024 * 1024 + 1024 * 512))

    assert str(_error(path, "txt")) == "big.txt: is 4.5 MB, larger than the 3 MB limit for one file"


def test_missing_path_and_folder_without_files(tmp_path):
    (tmp_path / "docs").mkdir()
    _write(tmp_path / "docs" / "notes.md", "hola")

    assert str(_error(tmp_path / "nowhere", "jsonl")) == "nowhere: does not exist"
    assert str(_error(tmp_path / "docs", "i2b2xml")) == "docs: contains no .xml files (i2b2 XML files expected)"


def test_symbolic_link_in_a_folder_is_refused(tmp_path):
    _write(tmp_path / "up" / "a.txt", "hola")
    (tmp_path / "up" / "b.txt").symlink_to(_write(tmp_path / "secret.txt", "no"))

    assert str(_error(tmp_path / "up", "txt")) == "up/b.txt: is a symbolic link; links are not followed"


# --- JSON Lines -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            '{"text": "uno"}\n{"text": "dos"}\n{"text": "tres", "spans": [}\n',
            "batch.jsonl, line 3: invalid JSON: Expecting value (column 28)",
        ),
        ('{"text": "uno"}\n\n{"texto": "dos"}\n', 'batch.jsonl, line 3: missing field "text"'),
        ('["uno"]\n', "batch.jsonl, line 1: expected a JSON object, found a list"),
        (
            '{"text": "Ana", "spans": [{"start": 0, "end": "3", "label": "N"}]}\n',
            'batch.jsonl, line 1: span 1: "end" must be an integer, found "3"',
        ),
        (
            '{"text": "Ana", "spans": [{"start": 0, "end": 3, "label": "N"}, {"start": 1, "end": 9, "label": "N"}]}\n',
            "batch.jsonl, line 1: span 2: offset 9 is past the end of the text (3 characters)",
        ),
        ('{"text": "Ana", "spans": [{"start": 0, "end": 3}]}\n', 'batch.jsonl, line 1: span 1: missing field "label"'),
        (
            '{"text": "a", "id": "x"}\n{"text": "b", "id": "x"}\n',
            "batch.jsonl, line 2: duplicate document name 'x' (first used at batch.jsonl, line 1)",
        ),
        (
            '{"text": "\\ud800 roto"}\n',
            'batch.jsonl, line 1: field "text" contains an unpaired surrogate at character 0',
        ),
        ('{"text": "   "}\n', 'batch.jsonl, line 1: field "text" is empty'),
        ("\n \n", "batch.jsonl: is empty"),
        ("", "batch.jsonl: is empty"),
    ],
    ids=[
        "invalid-json", "missing-text", "not-object", "string-offset", "past-end", "no-label", "duplicate-name",
        "surrogate", "blank-text", "blank-file", "zero-bytes",
    ],
)
def test_jsonl_malformed(tmp_path, content, expected):
    path = _write(tmp_path / "batch.jsonl", content)

    assert str(_error(path, "jsonl")) == expected


# --- CoNLL ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Ana\tB-PER\nGarcía\tPER\n", "tags.conll, line 2: tag 'PER' is not a BIO tag (O, B-TYPE or I-TYPE)"),
        ("Ana\tB-PER\n\nvino\n", "tags.conll, line 3: expected a token and a tag separated by a tab, found 'vino'"),
        ("Ana\tB-\n", "tags.conll, line 1: tag 'B-' is not a BIO tag (O, B-TYPE or I-TYPE)"),
        ("-DOCSTART- O\n\n-DOCSTART- O\n", "tags.conll: contains no tokens"),
        ("\n\t\n  \n", "tags.conll: is empty"),
        (b"Ana\tO\n\x00\x01\x02\n", "tags.conll, line 2: is not UTF-8 text (binary file?)"),
    ],
    ids=["bad-tag", "one-column", "no-type", "only-docstart", "blank", "binary"],
)
def test_conll_malformed(tmp_path, content, expected):
    path = _write(tmp_path / "tags.conll", content)

    assert str(_error(path, "conll")) == expected


# --- i2b2 XML ---------------------------------------------------------------------------------------


def _xml(tags: str, text: str = "Ana García vino") -> str:
    return (
        f"<?xml version='1.0' encoding='UTF-8'?>\n<R>\n  <TEXT><![CDATA[{text}]]></TEXT>\n"
        f"  <TAGS>\n{tags}  </TAGS>\n</R>\n"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            _xml('    <NAME id="T1" start="0" end="3" text="Ana" TYPE="N">\n'),
            "rec.xml, line 6: invalid XML: mismatched tag (column 5)",  # where </TAGS> meets the open <NAME>
        ),
        (
            "<R>\n<TEXT>Ana & Co</TEXT>\n</R>\n",
            "rec.xml, line 2: invalid XML: not well-formed (invalid token) (column 12)",
        ),
        (
            _xml(
                '    <NAME id="T1" start="0" end="3" text="Ana" TYPE="N"/>\n'
                '    <NAME id="T2" start="4" end="40" text="García" TYPE="N"/>\n'
            ),
            "rec.xml, line 6: <NAME> T2: offset 40 is past the end of the text (15 characters)",
        ),
        (
            _xml('    <NAME id="T1" start="4" end="10" text="Garcia" TYPE="N"/>\n'),
            "rec.xml, line 5: <NAME> T1 says 'Garcia' but the text at 4-10 is 'García'",
        ),
        (_xml('    <NAME id="T1" start="4" TYPE="N"/>\n'), 'rec.xml, line 5: <NAME> T1 has no "end" attribute'),
        (_xml('    <NAME start="a" end="3"/>\n'), "rec.xml, line 5: <NAME>: offset 'a' is not a non-negative integer"),
        ("<R><TAGS/></R>", "rec.xml: has no <TEXT> element"),
        (
            '<?xml version="1.0"?>\n<!DOCTYPE R [<!ENTITY a "aaaa">]>\n<R><TEXT>&a;</TEXT></R>',
            "rec.xml, line 2: contains a DTD (<!DOCTYPE …>), which is not accepted",
        ),
        ("", "rec.xml: is empty"),
        (b"<R>\x00</R>", "rec.xml, line 1: is not UTF-8 text (binary file?)"),
    ],
    ids=[
        "mismatched-tag", "bare-ampersand", "past-end", "text-mismatch", "no-end", "non-integer", "no-text", "dtd",
        "empty", "binary",
    ],
)
def test_i2b2xml_malformed(tmp_path, content, expected):
    path = _write(tmp_path / "rec.xml", content)

    assert str(_error(path, "i2b2xml")) == expected


# --- unknown labels (validation, not parsing) -------------------------------------------------------


def test_unknown_label_is_reported_by_validate_spans(tmp_path):
    docs = read_corpus(_brat(tmp_path, GOOD_ANN + "T3\tFECHA_INGRESO 40 50\t12/03/2019\n"), "brat")

    problems = validate_spans(docs, labels=["NOMBRE", "EDAD", "FECHAS"], allow_overlap=False)

    assert problems == [
        SpanProblem(
            "rec", Span(40, 50, "FECHA_INGRESO"), "unknown_label", "label 'FECHA_INGRESO' is not in the label set"
        )
    ]
    assert str(problems[0]) == "rec: span 40-50 FECHA_INGRESO: label 'FECHA_INGRESO' is not in the label set"
