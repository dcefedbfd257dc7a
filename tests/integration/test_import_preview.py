"""The import page's preview against the real database and channel layer: what an upload holds is counted
from the staged files (records, annotated records, spans per label, unknown labels, texts already in the
project, the evaluation set) with nothing written; unknown labels are refused or added on confirming;
cancelling deletes the staged files; a large upload's worker pushes its progress to the project's leads."""
from __future__ import annotations

import asyncio
import io
import zipfile

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client

from annotator.models import Annotation, AuditEvent, Document, ImportJob, Membership
from annotator.services.imports import import_documents
from annotator.services.notify import leads_group
from annotator.services.projects import create_project, set_membership
from annotator.services.uploads import run_import_job
from corpus.types import Document as CorpusDocument

pytestmark = pytest.mark.django_db

SEEN = "Paciente Luis Gil, visto en 2019.\n"
# name → (text, .ann); "known" is already in the project.
BRAT = {
    "a": ("Paciente Ana Ruiz, tel 600123456.\n", "T1\tNAME 9 17\tAna Ruiz\nT2\tPHONE 23 32\t600123456\n"),
    "b": ("Dr. Pedro Sanz vio a Eva Moreno.\n", "T1\tDOCTOR 4 14\tPedro Sanz\nT2\tNAME 21 31\tEva Moreno\n"),
    "c": ("Sin datos personales.\n", ""),
    "d": ("Atendido por Dr. Pedro Sanz y Dr. Juan Ros.\n",
          "T1\tDOCTOR 17 27\tPedro Sanz\nT2\tDOCTOR 34 42\tJuan Ros\n"),
    "known": (SEEN, "T1\tNAME 9 17\tLuis Gil\n"),
}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


@pytest.fixture
def project(users):
    project = create_project(name="Preview", labels=["NAME", "PHONE"], created_by=users["lead"])
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text=SEEN, name="old")])
    return project


def brat_zip(records: dict = BRAT) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, (text, ann) in records.items():
            archive.writestr(f"notes/{name}.txt", text)
            archive.writestr(f"notes/{name}.ann", ann)
    buffer.seek(0)
    buffer.name = "notes.zip"
    return buffer


def lead_client(users) -> Client:
    client = Client()
    client.force_login(users["lead"])
    return client


def upload(client, project, **fields):
    response = client.post(f"/projects/{project.pk}/import/", {"format": "brat", "files": brat_zip(), **fields})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert response["Location"].startswith(f"/projects/{project.pk}/import/preview/")
    return response["Location"]


def staged(data_dir) -> list[str]:
    root = data_dir / "uploads"
    return sorted(path.name for path in root.iterdir()) if root.exists() else []


def cells(page: str) -> dict[str, str]:
    """The preview's counts, by their data-count name."""
    import re

    return {name: value.strip().split()[0] for name, value in re.findall(r'data-count="(\w+)">([^<]*)', page)}


def test_the_preview_counts_the_upload_and_writes_nothing(users, project, data_dir):
    client = lead_client(users)
    documents_before = Document.objects.count()
    events_before = AuditEvent.objects.count()
    preview = upload(client, project)
    page = client.get(preview).content.decode()
    assert cells(page) == {"records": "5", "annotated": "4", "spans": "7", "duplicates": "1", "repeated": "0",
                           "new": "4", "evaluation": "0"}
    for label, spans, known in [("DOCTOR", 3, "no"), ("NAME", 3, "yes"), ("PHONE", 1, "yes")]:
        assert f'<tr data-label="{label}"><td>{label}</td><td>{spans}</td>' in page
        assert known in page.split(f'data-label="{label}"')[1].split("</tr>")[0]
    assert '<li data-unknown="DOCTOR">DOCTOR: 3 spans</li>' in page
    assert 'value="add"' in page and 'value="refuse"' in page
    # Nothing was written: no record, no annotation, no label, no audit event; the upload is staged.
    assert Document.objects.count() == documents_before and Annotation.objects.count() == 0
    project.refresh_from_db()
    assert project.labels == ["NAME", "PHONE"]
    assert AuditEvent.objects.count() == events_before
    assert len(staged(data_dir)) == 1 and staged(data_dir)[0].startswith("preview-")


def test_the_preview_says_how_many_go_to_the_evaluation_set_and_the_import_sets_that_many_aside(
        users, project, data_dir):
    project.labels = ["NAME", "PHONE", "DOCTOR"]
    project.save()
    client = lead_client(users)
    preview = upload(client, project, evaluation_percent="50")
    said = int(cells(client.get(preview).content.decode())["evaluation"])
    assert said == 2  # half of the 4 new records, holding every label they hold
    response = client.post(preview, {"action": "import"})
    assert response.status_code == 302 and response["Location"] == f"/projects/{project.pk}/"
    assert Document.objects.filter(project=project, role=Document.Role.EVALUATION).count() == said
    assert Document.objects.filter(project=project).count() == 5
    assert staged(data_dir) == []


def test_unknown_labels_must_be_added_or_the_import_refused(users, project, data_dir):
    client = lead_client(users)
    preview = upload(client, project)
    undecided = client.post(preview, {"action": "import"})
    assert undecided.status_code == 400
    assert "the upload uses 1 label(s) the project does not have (DOCTOR)" in undecided.content.decode()
    assert Document.objects.filter(project=project).count() == 1

    refused = client.post(preview, {"action": "import", "unknown_labels": "refuse"})
    assert refused.status_code == 302 and refused["Location"] == f"/projects/{project.pk}/import/"
    assert staged(data_dir) == [] and Document.objects.filter(project=project).count() == 1
    assert client.get(preview).status_code == 404

    preview = upload(client, project)
    added = client.post(preview, {"action": "import", "unknown_labels": "add"})
    assert added.status_code == 302 and added["Location"] == f"/projects/{project.pk}/"
    project.refresh_from_db()
    assert project.labels == ["NAME", "PHONE", "DOCTOR"]
    assert AuditEvent.objects.filter(project=project, action=AuditEvent.Action.EDIT,
                                     detail__label_added="DOCTOR", user=users["lead"]).count() == 1
    imported = AuditEvent.objects.get(project=project, action=AuditEvent.Action.IMPORT, user=users["lead"])
    assert imported.detail["created"] == 4 and imported.detail["duplicates"] == 1
    doctors = [span for annotation in Annotation.objects.filter(document__project=project)
               for span in annotation.spans if span["label"] == "DOCTOR"]
    assert len(doctors) == 3
    assert staged(data_dir) == []


def test_cancel_deletes_the_staged_files_and_imports_nothing(users, project, data_dir):
    client = lead_client(users)
    preview = upload(client, project)
    assert len(staged(data_dir)) == 1
    response = client.post(preview, {"action": "cancel"})
    assert response.status_code == 302 and response["Location"] == f"/projects/{project.pk}/import/"
    assert staged(data_dir) == []
    assert Document.objects.filter(project=project).count() == 1
    assert client.get(preview).status_code == 404
    assert client.post(preview, {"action": "import"}).status_code == 404


def test_a_preview_is_its_uploaders_only(users, project, data_dir):
    preview = upload(lead_client(users), project)
    other_lead = users["admin"]
    admin = Client()
    admin.force_login(other_lead)
    assert admin.get(preview).status_code == 404
    assert admin.post(preview, {"action": "cancel"}).status_code == 404
    assert len(staged(data_dir)) == 1
    annotator = Client()
    set_membership(project=project, user=users["annotator"], role=Membership.Role.ANNOTATOR)
    annotator.force_login(users["annotator"])
    assert annotator.get(preview).status_code == 403


def test_span_problems_are_shown_and_the_import_refused(users, project, data_dir):
    client = lead_client(users)
    overlapping = {"x": ("Paciente Ana Ruiz.\n", "T1\tNAME 9 17\tAna Ruiz\nT2\tNAME 13 17\tRuiz\n")}
    response = client.post(f"/projects/{project.pk}/import/", {"format": "brat", "files": brat_zip(overlapping)})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "x: span 13-17 NAME: overlaps span 9-17 NAME" in page
    assert 'value="import"' not in page
    refused = client.post(response["Location"], {"action": "import"})
    assert refused.status_code == 400 and "overlaps span 9-17 NAME" in refused.content.decode()
    assert Document.objects.filter(project=project).count() == 1


def test_an_unreadable_upload_is_refused_on_the_form_and_nothing_is_staged(users, project, data_dir):
    client = lead_client(users)
    lone = io.BytesIO(b"Paciente Ana Ruiz.\n")
    lone.name = "lone.txt"
    response = client.post(f"/projects/{project.pk}/import/", {"format": "brat", "files": lone})
    assert response.status_code == 400 and "lone.txt: has no lone.ann beside it" in response.content.decode()
    assert staged(data_dir) == []


def test_a_large_upload_becomes_a_job_whose_progress_reaches_the_leads_socket(users, project, data_dir, settings):
    settings.DEIDLOOP_SYNC_IMPORT_BYTES = 10
    client = lead_client(users)
    preview = upload(client, project)
    assert "imported in the background" in client.get(preview).content.decode()
    layer = get_channel_layer()
    leads_channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(leads_group(project.pk), leads_channel)
    try:
        response = client.post(preview, {"action": "import", "unknown_labels": "add"})
        job = ImportJob.objects.get(project=project)
        assert response.status_code == 302 and response["Location"] == f"/projects/{project.pk}/imports/{job.pk}/"
        assert staged(data_dir) == [f"job-{job.pk}"]
        assert Document.objects.filter(project=project).count() == 1  # the worker imports it
        run_import_job(job_id=job.pk)  # what the worker runs

        async def until_finished():  # one event loop: the layer buffers a channel's messages per loop
            received = []
            while not received or received[-1]["data"]["status"] == "running":
                received.append(await asyncio.wait_for(layer.receive(leads_channel), timeout=10))
            return received

        messages = async_to_sync(until_finished)()
    finally:
        async_to_sync(layer.group_discard)(leads_group(project.pk), leads_channel)
    assert {message["kind"] for message in messages} == {"import_progress"}
    assert all(message["text"] == "" and message["data"]["job_id"] == job.pk for message in messages)
    progress = [(m["data"]["done"], m["data"]["total"]) for m in messages]
    assert progress[0] == (0, 10) and progress[-1] == (10, 10)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    assert messages[-1]["data"]["status"] == "done"
    assert Document.objects.filter(project=project).count() == 5
    assert staged(data_dir) == []
    page = client.get(f"/projects/{project.pk}/imports/{job.pk}/").content.decode()
    assert "100 %" in page and 'data-socket="/ws/projects/' in page and "js/job_progress.js" in page
