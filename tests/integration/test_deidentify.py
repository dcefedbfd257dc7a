"""De-identifying new text with the project's current model, against the real database, Redis and a Celery
worker: the command on a folder (brat and plain) and on JSON Lines, the API and its errors, a project without a
model, and a large input de-identified by the worker with progress and a download; every run audited."""
from __future__ import annotations

import io
import json
import stat
import time
import zipfile
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from annotator.models import AuditEvent
from corpus.formats import read_corpus, write_corpus
from corpus.synthetic import generate_notes
from deid.models import DeidJob
from deid.services.deidentify import Deidentifier
from learning.core.recall_bias import stored_thresholds
from learning.services.retrain import train_and_rank
from tests.integration.celery_worker import Worker

PERSON = "NOMBRE_SUJETO_ASISTENCIA"


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


@pytest.fixture
def trained(loop_project, data_dir):
    """Project A with a current model (trained here, in this process) and unseen notes to de-identify."""
    version = train_and_rank(project=loop_project)
    assert version is not None and version.is_current
    return loop_project, generate_notes(8, seed=101)


def found_share(notes, texts: dict[str, str]) -> float:
    """The share of the notes' person names (longer than 3 characters) gone from their de-identified texts."""
    names = [(note.name, note.text[s.start:s.end]) for note in notes for s in note.spans
             if s.label == PERSON and s.end - s.start > 3]
    return sum(value not in texts[name] for name, value in names) / len(names)


def deid_events(project) -> list[dict]:
    return [event.detail for event in AuditEvent.objects.filter(
        project=project, action=AuditEvent.Action.DEIDENTIFY).order_by("id")]


@pytest.mark.django_db
def test_the_command_de_identifies_a_brat_folder_and_a_folder_of_texts(trained, tmp_path):
    project, notes = trained
    write_corpus(notes[:4], tmp_path / "brat", "brat")  # the .ann files hold gold the command must ignore
    out = io.StringIO()
    call_command("deidentify", str(tmp_path / "brat"), str(tmp_path / "out"), project=project.name, stdout=out)
    assert out.getvalue().startswith("de-identified 4 documents into ")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == sorted([f"{n.name}.txt" for n in notes[:4]] + [f"{n.name}.ann" for n in notes[:4]]
                           + ["report.json"])
    docs = {doc.name: doc for doc in read_corpus(tmp_path / "out", "brat")}
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["documents"] == 4 and report["policy"] == "project" and report["input"] == "brat"
    assert report["model_version"] == project.model_versions.get(is_current=True).pk
    spans = sum(len(doc.spans) for doc in docs.values())
    assert spans > 10 and sum(sum(by.values()) for by in report["counts"].values()) == spans
    assert set(s for by in report["counts"].values() for s in by) == {"pseudo"}
    assert found_share(notes[:4], {name: doc.text for name, doc in docs.items()}) > 0.6
    assert report["to_review_total"] == len(report["to_review"])
    assert all(item["confidence"] < project.review_confidence for item in report["to_review"])
    for item in report["to_review"]:  # listed at their place in the de-identified text, never by value
        assert set(item) == {"document", "start", "end", "label", "strategy", "confidence"}

    plain = tmp_path / "plain"
    write_corpus(notes[4:6], plain, "txt")
    call_command("deidentify", str(plain), str(tmp_path / "plain-out"), project=project.name, policy="class",
                 stdout=io.StringIO())
    assert sorted(p.name for p in (tmp_path / "plain-out").iterdir()) == sorted(
        [f"{n.name}.txt" for n in notes[4:6]] + ["report.json"])
    text = (tmp_path / "plain-out" / f"{notes[4].name}.txt").read_text()
    assert "[NOMBRE_SUJETO_ASISTENCIA]" in text and "[FECHAS]" in text

    assert deid_events(project) == [
        {"documents": 4, "policy": "project", "source": "brat:brat", "model_version": report["model_version"],
         "recall_bias": None},
        {"documents": 2, "policy": "class", "source": "folder:plain", "model_version": report["model_version"],
         "recall_bias": None},
    ]


@pytest.mark.django_db
def test_the_command_de_identifies_jsonl_line_by_line_and_a_single_text(trained, tmp_path):
    project, notes = trained
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"r{i}", "text": note.text}, ensure_ascii=False) + "\n"
                              for i, note in enumerate(notes[:3])) + "\n", encoding="utf-8")
    call_command("deidentify", str(source), str(tmp_path / "out.jsonl"), project=project.name, policy="mask",
                 stdout=io.StringIO())
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["id"] for line in lines] == ["r0", "r1", "r2"]
    for line in lines:
        assert line["spans"] and set(line) == {"id", "text", "spans"}
        for span in line["spans"]:
            assert span["strategy"] == "mask" and 0 < span["confidence"] <= 1
            assert set(line["text"][span["start"]:span["end"]]) <= set("X9 .,/-:ºª()'\"@")
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert report["documents"] == 3 and report["input"] == "jsonl"

    single = tmp_path / "note.txt"
    single.write_text(notes[3].text, encoding="utf-8")
    call_command("deidentify", str(single), str(tmp_path / "note-out.txt"), project=project.name,
                 recall_bias=10.0, stdout=io.StringIO())
    assert found_share(notes[3:4], {notes[3].name: (tmp_path / "note-out.txt").read_text()}) > 0.6
    report = json.loads((tmp_path / "note-out.report.json").read_text())
    assert report["recall_bias"]["beta"] == 10.0 and 0 < report["recall_bias"]["tau_main"] < 1
    assert deid_events(project)[-1]["recall_bias"] == 10.0

    with pytest.raises(CommandError, match="de-identify a .txt file"):
        call_command("deidentify", str(tmp_path / "out.report.json"), str(tmp_path / "x"), project=project.name)


@pytest.mark.django_db
def test_a_model_with_a_pair_per_type_de_identifies_with_them_unless_one_beta_is_asked_for(loop_project, data_dir):
    loop_project.recall_bias_beta, loop_project.recall_bias_betas = 4, {"FECHAS": 40}
    loop_project.save()
    version = train_and_rank(project=loop_project)
    published = version.choices["recall_bias"]
    run = Deidentifier(loop_project)
    assert run.recall_bias == {"beta": 4, "betas": published["betas"], "thresholds": published["thresholds"]}
    assert stored_thresholds(run.recall_bias) == {kind: tuple(pair) for kind, pair in published["thresholds"].items()}
    # β = 4 asked for by name is one β for every type: one pair, tuned for it.
    one = Deidentifier(loop_project, recall_bias=4.0)
    assert "thresholds" not in one.recall_bias and one.recall_bias["beta"] == 4.0
    assert isinstance(stored_thresholds(one.recall_bias), tuple)


@pytest.mark.django_db
def test_the_api_de_identifies_a_text_for_leads_and_refuses_what_it_cannot(trained, api_as, users, settings):
    project, notes = trained
    url = f"/api/projects/{project.pk}/deidentify/"
    api = api_as(users["lead"])
    response = api.post(url, {"text": notes[0].text, "policy": "class"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"text", "spans", "report"}
    assert body["spans"] and all(body["text"][s["start"]:s["end"]] == f"[{s['label']}]" for s in body["spans"])
    assert all(set(s) == {"start", "end", "label", "strategy", "confidence"} for s in body["spans"])
    assert body["report"]["documents"] == 1 and body["report"]["policy"] == "class"
    assert found_share(notes[:1], {notes[0].name: body["text"]}) > 0.6
    default = api.post(url, {"text": notes[0].text}, format="json").json()
    assert default["report"]["policy"] == "project" and {s["strategy"] for s in default["spans"]} == {"pseudo"}
    assert api.post(url, {"text": notes[0].text}, format="json").json() == default  # deterministic surrogates
    assert api.post(url, {"text": ""}, format="json").json()["text"] == ""
    assert [event["source"] for event in deid_events(project)] == ["api"] * 4
    assert AuditEvent.objects.filter(action=AuditEvent.Action.DEIDENTIFY, user=users["lead"]).count() == 4

    settings.DEIDLOOP_DEIDENTIFY_MAX_TEXT_BYTES = 100
    too_big = api.post(url, {"text": "x" * 101}, format="json")
    assert too_big.status_code == 400 and "larger than 100 bytes" in too_big.json()["detail"]
    assert api.post(url, {"text": "x", "policy": "shred"}, format="json").status_code == 400
    assert api.post(url, {}, format="json").status_code == 400
    assert api_as(users["annotator"]).post(url, {"text": "x"}, format="json").status_code == 403
    assert api_as(users["outsider"]).post(url, {"text": "x"}, format="json").status_code == 404
    assert len(deid_events(project)) == 4  # refused requests de-identify nothing


@pytest.mark.django_db
def test_a_project_without_a_model_says_so(projects, users, api_as, client, tmp_path):
    project = projects["A"]
    response = api_as(users["lead"]).post(f"/api/projects/{project.pk}/deidentify/", {"text": "Ana Ruiz"},
                                          format="json")
    assert response.status_code == 409
    assert "has no trained model yet" in response.json()["detail"]
    client.force_login(users["lead"])
    page = client.post(f"/projects/{project.pk}/deidentify/", {"text": "Ana Ruiz", "policy": "project"})
    assert page.status_code == 409 and "has no trained model yet" in page.content.decode()
    (tmp_path / "a.txt").write_text("Ana Ruiz")
    with pytest.raises(CommandError, match="has no trained model yet"):
        call_command("deidentify", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), project=project.name)
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.DEIDENTIFY).exists()


@pytest.mark.django_db
def test_the_page_shows_both_sides_for_a_small_text(trained, client, users):
    project, notes = trained
    client.force_login(users["lead"])
    response = client.post(f"/projects/{project.pk}/deidentify/", {"text": notes[0].text, "policy": "class"})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="original-text"' in page and 'id="deidentified-text"' in page
    assert '<mark class="phi' in page and 'data-strategy="class"' in page
    assert deid_events(project)[-1]["source"] == "page"


@pytest.mark.django_db(transaction=True)
def test_a_large_input_is_de_identified_by_the_worker_with_progress_and_a_download(
    trained, client, users, settings, data_dir, tmp_path, monkeypatch,
):
    project, _ = trained
    notes = generate_notes(40, seed=202)
    settings.DEIDLOOP_SYNC_DEIDENTIFY_BYTES = 5_000
    write_corpus(notes, tmp_path / "notes", "brat")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted((tmp_path / "notes").iterdir()):
            archive.write(path, f"notes/{path.name}")
    buffer.seek(0)
    buffer.name = "notes.zip"
    # The worker reads the model and derives the surrogates' key from the same secret as this process.
    monkeypatch.setenv("SECRET_KEY", django_settings.SECRET_KEY)
    worker = Worker(queue=django_settings.CELERY_TASK_DEFAULT_QUEUE, data_dir=data_dir,
                    log_path=tmp_path / "worker.log").start()
    try:
        client.force_login(users["lead"])
        response = client.post(f"/projects/{project.pk}/deidentify/", {"files": buffer, "policy": "pseudo"})
        assert response.status_code == 302, response.content.decode()[:2000]
        job = DeidJob.objects.get()
        assert response["Location"] == f"/projects/{project.pk}/deidentify/jobs/{job.pk}/"
        folder = data_dir / "deid" / f"job-{job.pk}"
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert "De-identification of notes.zip" in client.get(response["Location"]).content.decode()
        seen = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            partial = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
            job.refresh_from_db()
            seen.append(job.done_bytes)
            if job.status in ("done", "failed"):
                break
            assert 'hx-trigger="every 1s"' in partial and "<progress" in partial
            time.sleep(0.05)
        assert job.status == "done", (job.error, worker.log())
        assert seen == sorted(seen) and job.done_bytes == job.total_bytes and job.done_documents == 40
        partial = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
        assert "hx-trigger" not in partial and "deidentify-download" in partial
        assert not (folder / "input.zip").exists() and not list((data_dir / "deid").glob(f"job-{job.pk}-*"))
        result = folder / "result.zip"  # in the local artifact store, the default
        assert stat.S_IMODE(result.stat().st_mode) == 0o600

        download = client.get(f"/projects/{project.pk}/deidentify/jobs/{job.pk}/download/")
        assert download.status_code == 200
        archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
        names = archive.namelist()
        assert "notes/report.json" in names and len([n for n in names if n.endswith(".txt")]) == 40
        assert len([n for n in names if n.endswith(".ann")]) == 40
        report = json.loads(archive.read("notes/report.json"))
        assert report["documents"] == 40 and report["policy"] == "pseudo" and report == job.report
        texts = {Path(n).stem: archive.read(n).decode() for n in names if n.endswith(".txt")}
        assert found_share(notes, texts) > 0.6
        export = AuditEvent.objects.get(action=AuditEvent.Action.EXPORT, project=project)
        assert export.user == users["lead"] and export.detail == {
            "deidentified_job": job.pk, "documents": 40, "policy": "pseudo"}
        run = AuditEvent.objects.get(action=AuditEvent.Action.DEIDENTIFY, project=project)
        assert run.user == users["lead"] and run.detail["documents"] == 40

        client.force_login(users["annotator"])
        assert client.get(f"/projects/{project.pk}/deidentify/jobs/{job.pk}/download/").status_code == 403
    finally:
        worker.stop()
