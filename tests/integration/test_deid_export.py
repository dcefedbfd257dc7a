"""The de-identified export against the real database: every concealment in every format keeps the annotations
aligned to the new text; a de-identified brat export imports back with the same spans; re-exports agree and
other projects get other surrogates; the report counts what was done; the settings page saves and audits; the
export page and API are for leads and admins."""
from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from django.core.management import call_command

from annotator.models import AuditEvent
from annotator.selectors import gold_documents
from annotator.services.imports import import_documents
from annotator.services.projects import create_project
from corpus.formats import read_corpus
from corpus.synthetic import generate_notes
from corpus.types import Document, Span
from deid.core.surrogates import mask
from deid.services.exports import export_deidentified
from deid.services.policy import surrogate_secret

pytestmark = pytest.mark.django_db

FORMATS = ("jsonl", "brat", "conll", "i2b2xml")
CONCEALMENTS = ("pseudo", "class", "mask", "remove", "project")
PERSON = "NOMBRE_SUJETO_ASISTENCIA"

HAND_TEXT = "Paciente Ana Ruiz, 45 años, ingresó el 3 de mayo de 2010 por enfermedad de Parkinson.\nSin alergias.\n"


def hand_document() -> Document:
    def span(fragment: str, label: str) -> Span:
        start = HAND_TEXT.index(fragment)
        return Span(start, start + len(fragment), label)

    return Document(HAND_TEXT, (span("Ana Ruiz", PERSON), span("45 años", "EDAD_SUJETO_ASISTENCIA"),
                                span("3 de mayo de 2010", "FECHAS"), span("Parkinson", PERSON)), name="hand")


@pytest.fixture
def gold(projects):
    """Project A with six gold notes (one of them evaluation)."""
    notes = generate_notes(6, seed=11)
    import_documents(project=projects["A"], documents=notes[:5], annotated=True)
    import_documents(project=projects["A"], documents=notes[5:], annotated=True, evaluation=True)
    return projects["A"], {note.name: note for note in notes}


def holds_word(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as whole words (not inside a longer word, as "Ana" in "Mariana")."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


def exported(path, fmt) -> dict[str, Document]:
    return {doc.name: doc for doc in read_corpus(path, fmt)}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("conceal", CONCEALMENTS)
def test_every_concealment_in_every_format_keeps_the_spans_on_their_replacements(gold, tmp_path, fmt, conceal):
    project, notes = gold
    out = tmp_path / "out"
    out.mkdir()
    result = export_deidentified(project=project, fmt=fmt, out=out, conceal=conceal)
    report = json.loads((out / "report.json").read_text())
    assert report == result.report
    assert report["documents"] == result.summary.documents == 6 and report["conceal"] == conceal
    assert report["gold_spans"] == sum(len(n.spans) for n in notes.values())
    docs = exported(out, fmt)
    assert len(docs) == 6
    if fmt != "conll":  # CoNLL keeps tokens, not names or the text's exact spacing
        assert set(docs) == set(notes)
    concealed = sum(report["counts"].get(label, {}).get(conceal if conceal != "project" else "pseudo", 0)
                    for label in report["counts"])
    if conceal == "remove":
        assert result.summary.spans == 0 and report["removed_sentences"] > 0
        assert sum(len(d.spans) for d in docs.values()) == 0
    else:
        assert sum(len(d.spans) for d in docs.values()) == result.summary.spans > 0
        assert concealed == report["gold_spans"] - sum(report["eponyms"].values())
    for doc in docs.values():
        for span in doc.spans:
            value = doc.text[span.start:span.end]
            if fmt == "conll":  # the text is rebuilt from tokens: "[FECHAS]" comes back as "[ FECHAS ]"
                value = value.replace(" ", "") if conceal == "class" else value
            if conceal == "class":
                assert value == f"[{span.label}]"
            elif conceal == "mask":
                assert value == mask(value) and not re.search(r"[^\WX9_]", value)
    if fmt != "conll":
        for name, note in notes.items():
            names = {note.text[s.start:s.end] for s in note.spans if s.label == PERSON}
            # as whole words: a surrogate may hold a name inside a longer word ("Sola" in "Solana"); which one
            # does depends on the project's id, so a substring test failed in some runs and not in others
            left = [value for value in names if len(value) > 3 and holds_word(docs[name].text, value)]
            assert left == [], (name, names)


def test_a_deidentified_brat_export_imports_back_with_its_spans(gold, tmp_path, users):
    project, _ = gold
    call_command("export_corpus", str(tmp_path / "brat"), project=project.name, fmt="brat", conceal="pseudo",
                 stdout=io.StringIO())
    assert (tmp_path / "brat" / "report.json").is_file()
    written = exported(tmp_path / "brat", "brat")
    copy = create_project(name="Copy", schema="MEDDOCAN", created_by=users["lead"])
    call_command("import_corpus", str(tmp_path / "brat"), project="Copy", fmt="brat", stdout=io.StringIO())
    back = {doc.name: doc for doc in gold_documents(project=copy)}
    assert set(back) == set(written)
    for name, doc in written.items():
        assert back[name].text == doc.text
        assert back[name].spans == doc.spans


def test_surrogates_agree_on_a_re_export_and_differ_between_projects(gold, tmp_path, users):
    project, notes = gold
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    export_deidentified(project=project, fmt="jsonl", out=first, conceal="pseudo")
    export_deidentified(project=project, fmt="jsonl", out=second, conceal="pseudo")
    assert first.read_bytes() == second.read_bytes()
    assert (tmp_path / "first.report.json").is_file()

    other = create_project(name="Other", schema="MEDDOCAN", created_by=users["lead"])
    import_documents(project=other, documents=list(notes.values()), annotated=True)
    assert surrogate_secret(other) != surrogate_secret(project)
    theirs = tmp_path / "other.jsonl"
    export_deidentified(project=other, fmt="jsonl", out=theirs, conceal="pseudo")
    ours, others = exported(first, "jsonl"), exported(theirs, "jsonl")
    assert set(ours) == set(others)
    differing = sum(ours[name].text != others[name].text for name in ours)
    assert differing == len(ours)
    # Neither the secret nor an original name is in what an export writes (each document's own names; a
    # surrogate may by chance be a name another document holds).
    for path in (first, tmp_path / "first.report.json"):
        assert surrogate_secret(project).hex() not in path.read_text()
    report = (tmp_path / "first.report.json").read_text()
    for name, note in notes.items():
        originals = [note.text[s.start:s.end] for s in note.spans if s.label == PERSON]
        assert originals and not any(holds_word(ours[name].text, value) or holds_word(report, value)
                                     for value in originals)


def test_the_report_counts_each_label_and_strategy_and_the_eponyms_kept(projects, tmp_path):
    project = projects["A"]
    import_documents(project=project, documents=[hand_document()], annotated=True)
    export_deidentified(project=project, fmt="jsonl", out=tmp_path / "class.jsonl", conceal="class")
    (doc,) = read_corpus(tmp_path / "class.jsonl", "jsonl")
    assert doc.text == ("Paciente [NOMBRE_SUJETO_ASISTENCIA], [EDAD_SUJETO_ASISTENCIA], ingresó el [FECHAS] por "
                        "enfermedad de Parkinson.\nSin alergias.\n")
    assert [doc.text[s.start:s.end] for s in doc.spans] == [
        "[NOMBRE_SUJETO_ASISTENCIA]", "[EDAD_SUJETO_ASISTENCIA]", "[FECHAS]"]
    assert doc.meta == {}
    report = json.loads((tmp_path / "class.report.json").read_text())
    assert report["counts"] == {"EDAD_SUJETO_ASISTENCIA": {"class": 1}, "FECHAS": {"class": 1}, PERSON: {"class": 1}}
    assert report["eponyms"] == {PERSON: 1}
    assert (report["documents"], report["gold_spans"], report["spans"]) == (1, 4, 3)

    export_deidentified(project=project, fmt="jsonl", out=tmp_path / "remove.jsonl", conceal="remove")
    (removed,) = read_corpus(tmp_path / "remove.jsonl", "jsonl")
    assert removed.text == "Sin alergias.\n" and removed.spans == ()
    report = json.loads((tmp_path / "remove.report.json").read_text())
    assert report["removed_sentences"] == 1 and report["counts"][PERSON] == {"remove": 1}

    export_deidentified(project=project, fmt="jsonl", out=tmp_path / "pseudo.jsonl", conceal="pseudo")
    (pseudo,) = read_corpus(tmp_path / "pseudo.jsonl", "jsonl")
    assert "Ana Ruiz" not in pseudo.text and "3 de mayo de 2010" not in pseudo.text
    assert "enfermedad de Parkinson" in pseudo.text and " 45 años" in pseudo.text  # ages under 90 are kept
    assert re.search(r"el \d{1,2} de [a-z]+ de \d{4} por", pseudo.text)  # the date keeps its format


def test_the_settings_page_saves_the_policy_audits_it_and_the_export_follows_it(client, users, projects, tmp_path):
    project = projects["A"]
    import_documents(project=project, documents=[hand_document()], annotated=True)
    url = f"/projects/{project.pk}/deid-settings/"
    client.force_login(users["annotator"])
    assert client.get(url).status_code == 403
    client.force_login(users["outsider"])
    assert client.get(url).status_code == 404
    client.force_login(users["lead"])
    page = client.get(url).content.decode()
    assert "De-identification settings" in page and "FECHAS" in page
    # A strategy per label, the scope, and the model that finds the PHI.
    assert page.split('id="deid-policy"')[1].split("</form>")[0].count("<select") == 31

    form = {f"conceal__{label}": "pseudo" for label in project.labels}
    form.update({"conceal__FECHAS": "mask", "conceal__EDAD_SUJETO_ASISTENCIA": "keep",
                 "surrogate_scope": "project", "age_bucket": "80", "review_confidence": "0.6", "deid_model": "loop"})
    response = client.post(url, form)
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.conceal_policy == {"FECHAS": "mask", "EDAD_SUJETO_ASISTENCIA": "keep"}
    assert (project.surrogate_scope, project.age_bucket, project.review_confidence) == ("project", 80, 0.6)
    event = AuditEvent.objects.get(project=project, action=AuditEvent.Action.EDIT)
    assert event.user == users["lead"]
    assert event.detail["settings"]["conceal_policy"] == [{}, {"FECHAS": "mask", "EDAD_SUJETO_ASISTENCIA": "keep"}]
    assert event.detail["settings"]["surrogate_scope"] == ["document", "project"]
    assert 'value="mask" selected' in client.get(url).content.decode()

    # An unknown strategy is refused and nothing changes.
    assert client.post(url, {**form, "conceal__FECHAS": "shred"}).status_code == 400
    project.refresh_from_db()
    assert project.conceal_policy["FECHAS"] == "mask"

    result = export_deidentified(project=project, fmt="jsonl", out=tmp_path / "p.jsonl", conceal="project")
    (doc,) = read_corpus(tmp_path / "p.jsonl", "jsonl")
    assert "9 XX XXXX XX 9999" in doc.text and "45 años" in doc.text and "Ana Ruiz" not in doc.text
    assert result.report["counts"] == {"EDAD_SUJETO_ASISTENCIA": {"keep": 1}, "FECHAS": {"mask": 1},
                                       PERSON: {"pseudo": 1}}
    assert result.report["policy"]["FECHAS"] == "mask" and result.report["surrogate_scope"] == "project"
    # The loop's settings page and the project page link to it.
    assert url in client.get(f"/projects/{project.pk}/loop/").content.decode()
    assert url in client.get(f"/projects/{project.pk}/").content.decode()


def test_the_export_page_and_api_conceal_and_audit_for_leads_only(client, api_as, users, gold):
    project, notes = gold
    client.force_login(users["lead"])
    page = client.get(f"/projects/{project.pk}/export/")
    assert page.status_code == 200 and 'name="conceal"' in page.content.decode()
    response = client.post(f"/projects/{project.pk}/export/", {"format": "brat", "conceal": "class",
                                                               "include_evaluation": "on", "statuses": "submitted"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="A-brat-class.zip"'
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content) if response.streaming
                                         else response.content))
    names = archive.namelist()
    assert "A-brat-class/report.json" in names and len([n for n in names if n.endswith(".ann")]) == 6
    report = json.loads(archive.read("A-brat-class/report.json"))
    assert report["conceal"] == "class" and report["documents"] == 6
    event = AuditEvent.objects.filter(project=project, action=AuditEvent.Action.EXPORT).latest("id")
    assert event.user == users["lead"]
    assert (event.detail["conceal"], event.detail["documents"], event.detail["format"]) == ("class", 6, "brat")

    api = api_as(users["lead"])
    masked = api.get(f"/api/projects/{project.pk}/export/", {"format": "jsonl", "conceal": "mask",
                                                             "include_evaluation": "false"})
    assert masked.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(masked.content))
    corpus = archive.read("A-jsonl-mask/corpus.jsonl").decode()
    assert len(corpus.splitlines()) == 5
    assert json.loads(archive.read("A-jsonl-mask/report.json"))["documents"] == 5
    plain = api.get(f"/api/projects/{project.pk}/export/", {"format": "jsonl"})
    assert plain.status_code == 200 and len(plain.content.decode().splitlines()) == 6
    assert api.get(f"/api/projects/{project.pk}/export/", {"format": "jsonl", "conceal": "shred"}).status_code == 400
    assert [e.detail.get("conceal") for e in AuditEvent.objects.filter(
        project=project, action=AuditEvent.Action.EXPORT).order_by("id")] == ["class", "mask", None]

    assert api_as(users["annotator"]).get(f"/api/projects/{project.pk}/export/",
                                          {"format": "jsonl", "conceal": "pseudo"}).status_code == 403
    client.force_login(users["annotator"])
    assert client.post(f"/projects/{project.pk}/export/", {"format": "jsonl", "conceal": "pseudo"}).status_code == 403
    assert api_as(users["outsider"]).get(f"/api/projects/{project.pk}/export/", {"format": "jsonl"}).status_code == 404


def test_the_command_reports_the_concealment(gold, tmp_path):
    project, _ = gold
    out = io.StringIO()
    call_command("export_corpus", str(tmp_path / "x"), project=project.name, fmt="i2b2xml", conceal="mask",
                 pool_only=True, stdout=out)
    assert out.getvalue().startswith("exported 5 documents with ")
    assert f"(concealed: mask; report in {tmp_path / 'x' / 'report.json'})" in out.getvalue()
