"""The export page's form against the real database: every combination of format, concealment, evaluation
set and records' statuses is either produced (a download, audited with what it held) or refused next to the
field it concerns, writing nothing and auditing nothing; the REST export refuses the same combinations; a long
export is a worker's job whose progress reaches the leads' socket and whose download is audited."""
from __future__ import annotations

import asyncio
import io
import itertools
import re
import zipfile

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client

from annotator.models import AuditEvent, Document
from annotator.services.imports import import_documents
from annotator.services.notify import leads_group
from annotator.services.projects import create_project
from corpus.synthetic import generate_notes
from corpus.types import Document as CorpusDocument
from corpus.types import Span
from deid.services.export_jobs import run_export_job

pytestmark = pytest.mark.django_db

FORMATS = ("jsonl", "brat", "conll", "i2b2xml")
CONCEALMENTS = ("none", "pseudo", "class", "mask", "remove", "project")


@pytest.fixture
def gold(projects):
    """Project A: five gold notes in the pool, two in the evaluation set, all submitted; three to annotate."""
    notes = generate_notes(10, seed=21)
    project = projects["A"]
    import_documents(project=project, documents=notes[:5], annotated=True)
    import_documents(project=project, documents=notes[5:7], annotated=True, evaluation=True)
    import_documents(project=project, documents=[CorpusDocument(text=n.text, name=n.name) for n in notes[7:]],
                     annotated=False)
    return project


def lead(users) -> Client:
    client = Client()
    client.force_login(users["lead"])
    return client


def errors_by_field(page: str) -> dict[str, str]:
    return {field: re.sub(r"&#x27;", "'", message)
            for field, message in re.findall(r'data-error-for="(\w+)">([^<]*)<', page)}


def post(client, project, *, fmt, conceal="none", evaluation=True, statuses=("submitted",)):
    data = {"format": fmt, "conceal": conceal, "statuses": list(statuses)}
    if evaluation:
        data["include_evaluation"] = "on"
    return client.post(f"/projects/{project.pk}/export/", data)


def test_every_format_and_concealment_with_and_without_the_evaluation_set_is_produced_and_audited(users, gold):
    client = lead(users)
    for fmt, conceal, evaluation in itertools.product(FORMATS, CONCEALMENTS, (True, False)):
        response = post(client, gold, fmt=fmt, conceal=conceal, evaluation=evaluation)
        combination = (fmt, conceal, evaluation)
        assert response.status_code == 200, (combination, errors_by_field(response.content.decode()))
        assert response["Content-Disposition"].startswith("attachment; filename="), combination
        event = AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).latest("id")
        assert event.user == users["lead"] and event.detail["format"] == fmt, combination
        assert event.detail["documents"] == (7 if evaluation else 5), combination
        assert event.detail["statuses"] == ["submitted"] and event.detail["include_evaluation"] is evaluation
    assert AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).count() == 48


def test_statuses_are_refused_next_to_their_field_when_they_hold_no_gold(users, gold):
    client = lead(users)
    page = client.get(f"/projects/{gold.pk}/export/").content.decode()
    assert 'id="export-counts">Records with gold: 7 submitted (2 in the evaluation set).' in page
    cases = [
        ((), True, "Choose at least one status."),
        (("adjudicated",), True, "No record with gold is adjudicated: there is nothing to export."),
        (("pool", "assigned"), True, "No record with gold is in the pool or assigned: there is nothing to export."),
    ]
    for statuses, evaluation, message in cases:
        response = post(client, gold, fmt="jsonl", statuses=statuses, evaluation=evaluation)
        assert response.status_code == 400
        assert errors_by_field(response.content.decode()) == {"statuses": message}, statuses
    Document.objects.filter(project=gold, role=Document.Role.POOL, status="submitted").update(status="adjudicated")
    response = post(client, gold, fmt="jsonl", statuses=("submitted",), evaluation=False)
    assert errors_by_field(response.content.decode()) == {
        "statuses": "No record with gold is submitted outside the evaluation set: there is nothing to export."}
    produced = post(client, gold, fmt="jsonl", statuses=("adjudicated",), evaluation=False)
    assert produced.status_code == 200
    event = AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).latest("id")
    assert (event.detail["documents"], event.detail["statuses"]) == (5, ["adjudicated"])
    assert AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).count() == 1


def test_surrogates_are_refused_for_a_language_without_them(users, gold):
    gold.language = "fr"
    gold.save()
    client = lead(users)
    for conceal in ("pseudo", "project"):
        response = post(client, gold, fmt="brat", conceal=conceal)
        assert response.status_code == 400
        assert errors_by_field(response.content.decode()) == {"conceal": (
            "This project cannot be de-identified this way: there are no surrogates for the project's language "
            "'fr' (one of es, en, sv, it); conceal with class, mask or remove instead.")}, conceal
    assert post(client, gold, fmt="brat", conceal="mask").status_code == 200
    assert AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).count() == 1


def test_conll_is_refused_for_overlapping_gold_and_other_formats_carry_it(users, projects):
    project = create_project(name="Nested", labels=["NAME", "PLACE"], allow_overlap=True, created_by=users["lead"])
    text = "Hospital Ana Ruiz de Sevilla."
    import_documents(project=project, annotated=True, documents=[CorpusDocument(
        text=text, name="n1", spans=[Span(0, 28, "PLACE"), Span(9, 17, "NAME")])])
    client = lead(users)
    refused = post(client, project, fmt="conll")
    assert refused.status_code == 400
    assert errors_by_field(refused.content.decode()) == {"format": (
        "CoNLL BIO gives each token one tag, so it cannot hold the 1 overlapping span(s) of this gold standard; "
        "choose JSONL, brat standoff or i2b2 XML.")}
    for fmt in ("jsonl", "brat", "i2b2xml"):
        assert post(client, project, fmt=fmt).status_code == 200, fmt
    assert AuditEvent.objects.filter(project=project, action=AuditEvent.Action.EXPORT).count() == 3


def test_the_rest_export_refuses_the_same_combinations(users, gold, api_as):
    api = api_as(users["lead"])
    url = f"/api/projects/{gold.pk}/export/"
    refused = api.get(url, {"format": "jsonl", "statuses": "adjudicated"})
    assert refused.status_code == 400
    assert refused.json() == {"statuses": "No record with gold is adjudicated: there is nothing to export."}
    produced = api.get(url, {"format": "jsonl", "statuses": ["submitted"], "include_evaluation": "false"})
    assert produced.status_code == 200
    assert len(produced.content.decode().splitlines()) == 5
    assert api.get(url, {"format": "jsonl"}).status_code == 200  # without statuses: every record with gold
    gold.language = "fr"
    gold.save()
    assert set(api.get(url, {"format": "jsonl", "conceal": "pseudo"}).json()) == {"conceal"}


def test_annotators_may_not_export(users, gold):
    annotator = Client()
    annotator.force_login(users["annotator"])
    assert post(annotator, gold, fmt="jsonl").status_code == 403
    assert not AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).exists()


def test_a_long_export_is_a_job_whose_progress_reaches_the_leads_socket_and_whose_download_is_audited(
        users, gold, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.DEIDLOOP_SYNC_EXPORT_RECORDS = 3
    client = lead(users)
    response = post(client, gold, fmt="conll", conceal="class", evaluation=False)
    assert response.status_code == 302 and f"/projects/{gold.pk}/export/jobs/" in response["Location"]
    token = response["Location"].rstrip("/").rsplit("/", 1)[1]
    page = client.get(response["Location"]).content.decode()
    assert 'data-status="queued"' in page and 'data-kind="export_progress"' in page and "js/job_progress.js" in page
    assert not AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).exists()

    layer = get_channel_layer()
    leads_channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(leads_group(gold.pk), leads_channel)
    try:
        assert run_export_job(project_id=gold.pk, token=token).status == "done"  # what the worker runs

        async def until_finished():  # one event loop: the layer buffers a channel's messages per loop
            received = []
            while not received or received[-1]["data"]["status"] in ("queued", "running"):
                received.append(await asyncio.wait_for(layer.receive(leads_channel), timeout=10))
            return received

        messages = async_to_sync(until_finished)()
    finally:
        async_to_sync(layer.group_discard)(leads_group(gold.pk), leads_channel)
    assert {m["kind"] for m in messages} == {"export_progress"} and all(m["text"] == "" for m in messages)
    assert all(m["data"]["job_id"] == token for m in messages)
    assert [m["data"]["done"] for m in messages] == sorted(m["data"]["done"] for m in messages)
    assert (messages[-1]["data"]["status"], messages[-1]["data"]["done"], messages[-1]["data"]["total"]) == ("done", 5, 5)
    made = AuditEvent.objects.get(project=gold, action=AuditEvent.Action.EXPORT)
    assert (made.user, made.detail["documents"], made.detail["conceal"]) == (users["lead"], 5, "class")

    partial = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert 'data-status="done"' in partial and "100 %" in partial and 'id="export-download"' in partial
    download_url = f"/projects/{gold.pk}/export/jobs/{token}/download/"
    other = Client()
    other.force_login(users["admin"])
    assert other.get(download_url).status_code == 404 and other.get(response["Location"]).status_code == 404
    annotator = Client()
    annotator.force_login(users["annotator"])
    assert annotator.get(download_url).status_code == 403
    assert AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).count() == 1
    download = client.get(download_url)
    assert download.status_code == 200
    assert download["Content-Disposition"] == 'attachment; filename="A-conll-class.zip"'
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert archive.read("A-conll-class/corpus.conll").decode().count("-DOCSTART-") == 5
    downloaded = AuditEvent.objects.filter(project=gold, action=AuditEvent.Action.EXPORT).latest("id")
    assert (downloaded.user, downloaded.detail["download"], downloaded.detail["export_job"]) == \
        (users["lead"], "A-conll-class.zip", token)


def test_every_export_token_names_a_folder_of_the_artifact_store():
    """The token is part of the job's artifact names, which may not start with "-" or "." (a URL-safe token
    started with "-" one time in 64, and its export failed)."""
    from annotator.artifact_store import checked_name
    from deid.services.export_jobs import _folder, new_token

    for _ in range(2000):
        checked_name(f"{_folder(1, new_token())}/state.json")
