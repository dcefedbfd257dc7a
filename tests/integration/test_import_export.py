"""Import and export against the real database: round trips, idempotence, and bad input changing nothing."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from corpus.formats import read_corpus
from annotator.models import Annotation, Document, Project
from annotator.services.exports import export_corpus
from annotator.services.imports import ImportRejected, import_path
from tests.integration.conftest import MEDDOCAN, needs_meddocan
from tests.integration.import_pages import upload_and_confirm

pytestmark = pytest.mark.django_db


def spans_by_name(documents):
    return {document.name: (document.text, tuple(sorted(document.spans))) for document in documents}


def database_state():
    return (Project.objects.count(), Document.objects.count(), Annotation.objects.count())


@needs_meddocan
def test_meddocan_dev_round_trip_through_the_commands(tmp_path):
    call_command("import_corpus", str(MEDDOCAN / "dev"), project="dev", fmt="brat", schema="MEDDOCAN")
    project = Project.objects.get(name="dev")
    assert project.documents.count() == 250
    assert sum(len(spans) for spans in Annotation.objects.values_list("spans", flat=True)) == 5801

    call_command("export_corpus", str(tmp_path / "out"), project="dev", fmt="brat")
    original = spans_by_name(read_corpus(MEDDOCAN / "dev", "brat"))
    exported = spans_by_name(read_corpus(tmp_path / "out", "brat"))
    assert exported == original
    for path in (MEDDOCAN / "dev").glob("*.txt"):
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes()


@needs_meddocan
def test_i2b2xml_and_brat_versions_import_to_identical_annotations():
    call_command("import_corpus", str(MEDDOCAN / "dev"), project="brat", fmt="brat", schema="MEDDOCAN")
    call_command("import_corpus", str(MEDDOCAN / "dev-i2b2xml"), project="xml", fmt="i2b2xml", schema="MEDDOCAN")

    def stored(name):
        rows = Annotation.objects.filter(document__project__name=name).values_list(
            "document__content_hash", "spans")
        return {digest: sorted((s["start"], s["end"], s["label"]) for s in spans) for digest, spans in rows}

    brat, xml = stored("brat"), stored("xml")
    assert len(brat) == 250
    assert brat == xml


@needs_meddocan
def test_reimport_is_a_no_op():
    call_command("import_corpus", str(MEDDOCAN / "dev"), project="dev", fmt="brat", schema="MEDDOCAN")
    before = database_state()
    out = io.StringIO()
    call_command("import_corpus", str(MEDDOCAN / "dev"), project="dev", fmt="brat", stdout=out)
    assert database_state() == before
    assert "imported 0 documents" in out.getvalue() and "250 already there" in out.getvalue()


def test_project_without_schema_takes_the_labels_found_in_the_data(tmp_path):
    (tmp_path / "a.jsonl").write_text(
        '{"text": "Eva slept in Lund.", "spans": [{"start": 0, "end": 3, "label": "First_Name"},'
        ' {"start": 13, "end": 17, "label": "Location"}]}\n', encoding="utf-8")
    call_command("import_corpus", str(tmp_path / "a.jsonl"), project="sv", fmt="jsonl")
    assert Project.objects.get(name="sv").labels == ["First_Name", "Location"]


def write(path: Path, content: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


GOOD_TEXT = "Paciente Ana Ruiz, 45 años.\n"
GOOD_ANN = "T1\tNOMBRE_SUJETO_ASISTENCIA 9 17\tAna Ruiz\nT2\tEDAD_SUJETO_ASISTENCIA 19 26\t45 años\n"

MALFORMED = {
    # name: (format, files, expected words in the message)
    "truncated brat line": ("brat", {"a.txt": GOOD_TEXT, "a.ann": GOOD_ANN, "b.txt": GOOD_TEXT + " ",
                                     "b.ann": "T1\tNOMBRE_SUJETO_ASISTENCIA 9\n"}, ["b.ann", "line 1"]),
    "offset past the end": ("brat", {"a.txt": GOOD_TEXT, "a.ann": GOOD_ANN, "b.txt": "Corto.\n",
                                     "b.ann": "T1\tFECHAS 2 90\tx\n"}, ["b.ann", "line 1", "90"]),
    "binary file": ("txt", {"a.txt": "Texto normal.\n", "b.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR\xff\xfe"},
                    ["b.txt", "UTF-8"]),
    "invalid XML": ("i2b2xml", {"a.xml": '<?xml version="1.0"?>\n<R><TEXT><![CDATA[Hola]]></TEXT>\n<TAGS>\n</R>\n'},
                    ["a.xml", "line"]),
    "empty file": ("jsonl", {"a.jsonl": ""}, ["a.jsonl", "empty"]),
    "invalid JSON": ("jsonl", {"a.jsonl": '{"text": "uno"}\n{"text": "dos",\n'}, ["a.jsonl", "line 2"]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_names_file_and_line_and_imports_nothing(case, tmp_path, projects):
    fmt, files, words = MALFORMED[case]
    for name, content in files.items():
        write(tmp_path / "corpus" / name, content)
    before = database_state()
    with pytest.raises(CommandError) as raised:
        call_command("import_corpus", str(tmp_path / "corpus"), project="A", fmt=fmt)
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))
    assert database_state() == before


def test_unknown_label_is_reported_not_fixed(tmp_path, projects):
    write(tmp_path / "c" / "a.txt", GOOD_TEXT)
    write(tmp_path / "c" / "a.ann", GOOD_ANN)
    write(tmp_path / "c" / "b.txt", "Visto por Dr. Gil.\n")
    write(tmp_path / "c" / "b.ann", "T1\tDOCTOR_NAME 14 17\tGil\n")
    before = database_state()
    with pytest.raises(ImportRejected) as raised:
        import_path(project=projects["A"], path=tmp_path / "c", fmt="brat")
    assert len(raised.value.problems) == 1
    assert "DOCTOR_NAME" in str(raised.value) and "b" in raised.value.problems[0].document
    assert database_state() == before


def test_overlap_is_refused_unless_the_project_allows_it(tmp_path, projects):
    write(tmp_path / "c" / "a.txt", GOOD_TEXT)
    write(tmp_path / "c" / "a.ann", GOOD_ANN + "T3\tNOMBRE_SUJETO_ASISTENCIA 13 17\tRuiz\n")
    with pytest.raises(ImportRejected, match="overlap"):
        import_path(project=projects["A"], path=tmp_path / "c", fmt="brat")
    assert projects["A"].documents.count() == 0
    Project.objects.filter(pk=projects["A"].pk).update(allow_overlap=True)
    projects["A"].refresh_from_db()
    report = import_path(project=projects["A"], path=tmp_path / "c", fmt="brat")
    assert (report.created, report.spans) == (1, 3)


def test_document_text_is_immutable_in_the_database(projects):
    from annotator.services.imports import import_documents
    from corpus.types import Document as CorpusDocument

    import_documents(project=projects["A"], documents=[CorpusDocument(text="Hola.", name="h")], annotated=False)
    document = projects["A"].documents.get()
    with pytest.raises(IntegrityError, match="immutable"), transaction.atomic():
        Document.objects.filter(pk=document.pk).update(text="Adiós.")
    document.refresh_from_db()
    assert document.text == "Hola."
    Document.objects.filter(pk=document.pk).update(status="assigned")  # other fields may change


def test_silver_spans_are_never_exported_as_gold(tmp_path, projects):
    from annotator.services.imports import import_documents
    from corpus.types import Document as CorpusDocument
    from corpus.types import Span

    import_documents(project=projects["A"], documents=[
        CorpusDocument(text="Ana y Eva.", spans=(Span(0, 3, "NOMBRE_SUJETO_ASISTENCIA"),), name="n")], annotated=True)
    annotation = Annotation.objects.get()
    annotation.spans = annotation.spans + [{"start": 6, "end": 9, "label": "NOMBRE_SUJETO_ASISTENCIA", "origin": "silver"}]
    annotation.save()
    summary = export_corpus(project=projects["A"], fmt="jsonl", out=tmp_path / "out.jsonl")
    assert summary.spans == 1
    [exported] = read_corpus(tmp_path / "out.jsonl", "jsonl")
    assert exported.spans == (Span(0, 3, "NOMBRE_SUJETO_ASISTENCIA"),)


def zip_of(files: dict[str, str | bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    buffer.seek(0)
    buffer.name = "corpus.zip"
    return buffer


def test_api_import_of_a_brat_zip_then_export(users, projects, api_as):
    client = api_as(users["lead"])
    a = projects["A"]
    upload = zip_of({"notes/a.txt": GOOD_TEXT, "notes/a.ann": GOOD_ANN})
    response = client.post(f"/api/projects/{a.pk}/import/", {"format": "brat", "files": [upload]}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"created": 1, "duplicates": 0, "annotated": 1, "spans": 2,
                               "labels_seen": ["EDAD_SUJETO_ASISTENCIA", "NOMBRE_SUJETO_ASISTENCIA"],
                               "evaluation": 0}
    exported = client.get(f"/api/projects/{a.pk}/export/?format=jsonl")
    assert exported.status_code == 200
    assert b'"label": "NOMBRE_SUJETO_ASISTENCIA"' in exported.content or b'"NOMBRE_SUJETO_ASISTENCIA"' in exported.content


def test_api_rejects_bad_uploads_with_a_clear_message(users, projects, api_as, settings):
    client = api_as(users["lead"])
    a = projects["A"]
    binary = io.BytesIO(b"\x00\x01\x02binary\xff")
    binary.name = "scan.txt"
    response = client.post(f"/api/projects/{a.pk}/import/", {"format": "txt", "files": [binary]}, format="multipart")
    assert response.status_code == 400
    assert "scan.txt" in response.json()["detail"]

    escaping = zip_of({"../evil.txt": "x"})
    response = client.post(f"/api/projects/{a.pk}/import/", {"format": "txt", "files": [escaping]}, format="multipart")
    assert response.status_code == 400 and "outside the archive" in response.json()["detail"]

    settings.DEIDLOOP_MAX_UPLOAD_BYTES = 1000
    big = io.BytesIO(b"a" * 5000)
    big.name = "big.txt"
    response = client.post(f"/api/projects/{a.pk}/import/", {"format": "txt", "files": [big]}, format="multipart")
    assert response.status_code == 400 and "limit" in response.json()["detail"]
    assert a.documents.count() == 0


def test_upload_page_shows_the_error_and_imports_nothing(client, users, projects):
    client.force_login(users["lead"])
    a = projects["A"]
    bad = io.BytesIO(b'{"text": "uno"}\n{"text": 5}\n')
    bad.name = "pool.jsonl"
    response = client.post(f"/projects/{a.pk}/import/", {"format": "jsonl", "files": bad})
    assert response.status_code == 400
    assert "pool.jsonl" in response.content.decode() and "line 2" in response.content.decode()
    assert a.documents.count() == 0
    good = io.BytesIO(b'{"text": "uno"}\n{"text": "dos"}\n')
    good.name = "pool.jsonl"
    response = upload_and_confirm(client, a.pk, {"format": "jsonl", "files": good})
    assert response.status_code == 302
    assert list(a.documents.values_list("status", flat=True)) == ["pool", "pool"]


# --- a brat text without its .ann is never PHI-free gold ------------------------------------------------

def write_brat_folder_missing_an_ann(folder: Path) -> None:
    write(folder / "a.txt", GOOD_TEXT)
    write(folder / "a.ann", GOOD_ANN)
    write(folder / "b.txt", "Paciente sin anotar, Eva Gil.\n")


def test_command_refuses_a_brat_txt_without_its_ann_and_stores_nothing(tmp_path, projects):
    write_brat_folder_missing_an_ann(tmp_path / "corpus")
    before = database_state()
    with pytest.raises(CommandError) as raised:
        call_command("import_corpus", str(tmp_path / "corpus"), project="A", fmt="brat")
    assert str(raised.value).startswith("corpus/b.txt: has no b.ann beside it; ")
    assert database_state() == before

    # A project the import would create is not left behind either.
    with pytest.raises(CommandError, match="corpus/b.txt: has no b.ann beside it"):
        call_command("import_corpus", str(tmp_path / "corpus"), project="new", fmt="brat", schema="MEDDOCAN")
    assert database_state() == before
    assert not Project.objects.filter(name="new").exists()


def test_command_refuses_a_folder_of_texts_only_naming_the_first_files(tmp_path, projects):
    for name in ("n1", "n2", "n3", "n4"):
        write(tmp_path / "texts" / f"{name}.txt", f"Nota {name}.\n")
    before = database_state()
    with pytest.raises(CommandError) as raised:
        call_command("import_corpus", str(tmp_path / "texts"), project="A", fmt="brat")
    assert str(raised.value).startswith(
        "texts/n1.txt: has no n1.ann beside it (nor do n2.txt, n3.txt and 1 more: 4 of 4 texts lack their .ann); "
    )
    assert database_state() == before


def test_command_refuses_a_brat_ann_without_its_txt(tmp_path, projects):
    write(tmp_path / "corpus" / "a.txt", GOOD_TEXT)
    write(tmp_path / "corpus" / "a.ann", GOOD_ANN)
    write(tmp_path / "corpus" / "gone.ann", GOOD_ANN)
    before = database_state()
    for flags in ({}, {"unannotated": True}):
        with pytest.raises(CommandError) as raised:
            call_command("import_corpus", str(tmp_path / "corpus"), project="A", fmt="brat", **flags)
        assert str(raised.value) == "corpus/gone.ann: has no matching gone.txt (the text it annotates)"
    assert database_state() == before


def test_command_unannotated_imports_the_texts_as_pool_records(tmp_path, projects):
    write_brat_folder_missing_an_ann(tmp_path / "corpus")
    out = io.StringIO()
    call_command("import_corpus", str(tmp_path / "corpus"), project="A", fmt="brat", unannotated=True, stdout=out)
    assert out.getvalue() == "imported 2 documents (0 annotated, 0 spans); 0 already there\n"
    rows = sorted(projects["A"].documents.values_list("external_id", "role", "status", "text"))
    assert rows == [
        ("a", "pool", "pool", GOOD_TEXT),
        ("b", "pool", "pool", "Paciente sin anotar, Eva Gil.\n"),
    ]
    assert Annotation.objects.count() == 0


def test_api_refuses_a_brat_txt_without_its_ann_then_imports_it_as_text_only(users, projects, api_as):
    client = api_as(users["lead"])
    a = projects["A"]
    files = {"notes/a.txt": GOOD_TEXT, "notes/a.ann": GOOD_ANN, "notes/b.txt": "Paciente sin anotar, Eva Gil.\n"}
    before = database_state()
    response = client.post(f"/api/projects/{a.pk}/import/", {"format": "brat", "files": [zip_of(files)]},
                           format="multipart")
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith("corpus/b.txt: has no b.ann beside it; ")
    assert database_state() == before

    response = client.post(f"/api/projects/{a.pk}/import/",
                           {"format": "brat", "unannotated": "true", "files": [zip_of(files)]}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"created": 2, "duplicates": 0, "annotated": 0, "spans": 0, "labels_seen": [],
                                "evaluation": 0}
    assert sorted(a.documents.values_list("external_id", "status")) == [("a", "pool"), ("b", "pool")]
    assert Annotation.objects.count() == 0


def test_upload_page_refuses_a_brat_txt_without_its_ann_unless_text_only(client, users, projects):
    client.force_login(users["lead"])
    a = projects["A"]
    page = client.get(f"/projects/{a.pk}/import/").content.decode()
    assert 'name="unannotated"' in page and "Text only (no annotations)" in page
    lone = io.BytesIO(GOOD_TEXT.encode("utf-8"))
    lone.name = "lone.txt"
    response = client.post(f"/projects/{a.pk}/import/", {"format": "brat", "files": lone})
    assert response.status_code == 400
    assert "lone.txt: has no lone.ann beside it; " in response.content.decode()
    assert a.documents.count() == 0
    lone.seek(0)
    response = upload_and_confirm(client, a.pk, {"format": "brat", "unannotated": "on", "files": lone})
    assert response.status_code == 302
    assert list(a.documents.values_list("external_id", "status")) == [("lone", "pool")]
    assert Annotation.objects.count() == 0
