"""The de-identification model (the ensemble of the CRF and the BiLSTM-CRF): a lead asks for it on the
de-identification settings page, a real Celery worker trains it on the project's gold, the page shows it, and
text is de-identified with it once the project chooses it — and refused, saying why, before it exists."""
from __future__ import annotations

import io
import re

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from annotator.models import AuditEvent
from corpus.synthetic import generate_notes
from deid.services.deidentify import NoModelError, deidentify_text
from learning.models import DeidModel
from learning.selectors.models import leaks_by_type
from learning.services.retrain import train_and_rank
from tests.html_forms import form_values
from tests.integration.celery_worker import Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

#: A BiLSTM-CRF small enough to train in seconds on the test notes.
TINY_FLAIR = {"hidden_size": 16, "word_dim": 8, "word_epochs": 2, "char_dim": 8, "char_hidden_size": 8,
              "max_epochs": 4, "mini_batch_size": 8, "learning_rate": 0.02}


@pytest.fixture
def lead(client, users):
    client.force_login(users["lead"])
    return client


def test_a_lead_trains_the_ensemble_and_text_is_de_identified_with_it(lead, users, loop_project, settings, tmp_path,
                                                                         monkeypatch, api_as):
    project = loop_project
    settings.DATA_DIR = tmp_path / "data"
    train_and_rank(project=project)  # the loop's model: the default
    project.recall_bias_beta = 4
    project.deid_tagger = {"kind": "loop", "params": {"member_params": {"flair": TINY_FLAIR}}}
    project.save()
    url = f"/projects/{project.pk}/deid-settings/"
    page = lead.get(url).content.decode()
    assert 'id="deid-model-none"' in page and 'value="loop" selected' in page

    # Chosen before it exists: de-identification says why and does nothing.
    shown = form_values(page, "settings")
    assert lead.post(url, {**shown, "deid_model": "ensemble"}).status_code == 302
    project.refresh_from_db()
    assert project.deid_tagger == {"kind": "ensemble", "params": {"member_params": {"flair": TINY_FLAIR}}}
    with pytest.raises(NoModelError, match="none has finished training: train it on the De-identification"):
        deidentify_text(project=project, text="Paciente Ana López, 45 años.", user=users["lead"])

    monkeypatch.setenv("SECRET_KEY", django_settings.SECRET_KEY)
    worker = Worker(queue=django_settings.CELERY_TASK_DEFAULT_QUEUE, data_dir=settings.DATA_DIR,
                    log_path=tmp_path / "worker.log").start()
    try:
        assert lead.post(f"/projects/{project.pk}/deid-model/").status_code == 302
        # Asked again while it is under way (here through the API): the same one.
        again = api_as(users["lead"]).post(f"/api/projects/{project.pk}/deid-model/")
        assert again.status_code == 202 and again.json()["created"] is False
        assert DeidModel.objects.filter(project=project).count() == 1
        assert again.json()["id"] == DeidModel.objects.get(project=project).pk
        # The page follows it while it trains (the model takes seconds here, so it is still under way).
        partial = lead.get(url, HTTP_HX_REQUEST="true").content.decode()
        assert partial.startswith('<div id="deid-model-state" hx-get=') and 'hx-trigger="every 5s"' in partial
        model = wait_for(lambda: DeidModel.objects.filter(project=project, status__in=["done", "failed"]).first(),
                         600, worker, "the de-identification model")
    finally:
        worker.stop()
    assert model.status == "done", (model.error, worker.log())
    assert model.tagger_kind == "ensemble" and model.n_documents == 10
    assert model.tagger_params["member_params"]["flair"] == TINY_FLAIR
    assert 0 < model.metrics["entity"]["f1"] <= 1 and model.train_seconds > 0
    bias = model.choices["recall_bias"]
    assert bias["beta"] == 4 and 0 < bias["tau_main"] < 1 and "metrics" in bias
    assert AuditEvent.objects.filter(project=project, detail__deid_model_requested=model.pk).exists()

    api = api_as(users["lead"])
    state = api.get(f"/api/projects/{project.pk}/deid-model/").json()
    assert state["current"]["id"] == model.pk and state["current"]["status"] == "done" and state["latest"] is None
    assert state["current"]["metrics"]["entity"] == model.metrics["entity"]

    page = lead.get(url).content.decode()
    table = re.search(r'id="deid-model-table">(.*?)</table>', page, re.S).group(1)
    assert "10 gold records" in table and f"{model.metrics['entity']['f1']:.3f}" in table
    # The types it leaks, as its recall bias conceals (cross-fitted), the largest share first.
    counted = bias["metrics"]["leaked_by_type"]
    leaks = re.search(r'<tr id="deid-model-leaks">(.*?)</tr>', table, re.S).group(1)
    shown = re.findall(r'<span data-type="([^"]+)">[^<]* (\d+) / (\d+)</span>', leaks)
    assert shown == sorted(((kind, str(c["leaked"]), str(c["gold"])) for kind, c in counted.items() if c["leaked"]),
                           key=lambda row: (-int(row[1]) / int(row[2]), row[0]))
    assert (shown == []) == ("none of the evaluation set" in leaks) and "with the recall bias, cross-fitted" in leaks
    assert "deid-model-latest" not in page
    partial = lead.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in partial and 'id="deid-model-table"' in partial

    notes = generate_notes(3, seed=202)
    result, report = deidentify_text(project=project, text=notes[0].text, user=users["lead"])
    assert report["deid_model"] == model.pk and "model_version" not in report
    names = [notes[0].text[s.start:s.end] for s in notes[0].spans if s.label == "NOMBRE_SUJETO_ASISTENCIA"]
    assert names and not any(name in result.text for name in names if len(name) > 3)
    shown = lead.post(f"/projects/{project.pk}/deidentify/", {"text": notes[2].text, "policy": "project"})
    summary = re.search(r'id="deidentify-summary">(.*?)</p>', shown.content.decode(), re.S).group(1)
    assert f"de-identification model #{model.pk}" in summary

    # Back to the loop's model.
    assert lead.post(url, {**form_values(page, "settings"), "deid_model": "loop"}).status_code == 302
    project.refresh_from_db()
    assert "model_version" in deidentify_text(project=project, text=notes[1].text, user=users["lead"])[1]



def test_the_command_trains_it_here(loop_project, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    loop_project.deid_tagger = {"kind": "ensemble", "params": {"member_params": {"flair": TINY_FLAIR}}}
    loop_project.save()
    out = io.StringIO()
    call_command("train_deid_model", project=loop_project.name, stdout=out)
    model = DeidModel.objects.get(project=loop_project)
    assert model.status == "done" and model.n_documents == 10
    assert out.getvalue().startswith(f"A: de-identification model #{model.pk} trained on 10 records in ")
    assert "entity F1" in out.getvalue() and "choose it" not in out.getvalue()
    DeidModel.objects.filter(pk=model.pk).update(status="running")
    with pytest.raises(CommandError, match="already running"):
        call_command("train_deid_model", project=loop_project.name)
    with pytest.raises(CommandError, match="no project named 'Z'"):
        call_command("train_deid_model", project="Z")


def test_the_types_a_model_leaks_are_listed_largest_share_first_from_what_its_recall_bias_conceals():
    counts = {"FECHAS": {"gold": 50, "leaked": 1}, "PROFESION": {"gold": 9, "leaked": 6},
              "INSTITUCION": {"gold": 40, "leaked": 4}, "PAIS": {"gold": 20, "leaked": 0},
              "HOSPITAL": {"gold": 100, "leaked": 10}}
    plain = DeidModel(metrics={"leaked_by_type": counts}, choices={})
    assert [(row["label"], row["leaked"]) for row in leaks_by_type(plain)] == [
        ("PROFESION", 6), ("HOSPITAL", 10), ("INSTITUCION", 4), ("FECHAS", 1)]  # a tie (0.1) by name
    concealed = {"leaked_by_type": {"PAIS": {"gold": 20, "leaked": 0}}}
    biased = DeidModel(metrics={"leaked_by_type": counts}, choices={"recall_bias": {"beta": 4, "metrics": concealed}})
    assert leaks_by_type(biased) == []  # with the bias nothing leaks
    assert leaks_by_type(DeidModel(metrics={"leakage": 0.1}, choices={})) is None  # evaluated before they were counted
