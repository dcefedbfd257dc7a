"""The learning dashboard through Django's test client on the embedded PostgreSQL: who may see it, that its
figures are the stored ones, and starting a simulation (refused with a clear message, or queued and then
shown once it has run)."""
from __future__ import annotations

import json
import re
from datetime import timedelta
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator.services.imports import import_documents
from corpus.synthetic import generate_notes
from learning.core.simulation import DOCS_TO_TARGETS
from learning.selectors.dashboard import mcnemar_reading
from learning.models import ModelVersion, SimulationRun
from learning.services.simulations import run_simulation

pytestmark = pytest.mark.django_db

TYPES = ["NOMBRE_SUJETO_ASISTENCIA", "FECHAS", "HOSPITAL"]


def _scores(p: float, r: float) -> dict:
    return {"p": p, "r": r, "f1": 2 * p * r / (p + r)}


def _metrics(step: int, mcnemar: dict | None = None) -> dict:
    """An evaluation result shaped like learning.core.metrics.evaluate's, better with every step."""
    metrics = {
        "entity": _scores(0.70 + 0.05 * step, 0.60 + 0.07 * step),
        "entity_binary": _scores(0.75 + 0.05 * step, 0.65 + 0.07 * step),
        "token": _scores(0.80 + 0.04 * step, 0.72 + 0.06 * step),
        "token_type": _scores(0.78 + 0.04 * step, 0.70 + 0.06 * step),
        "leakage": 0.28 - 0.06 * step,
        "per_type": {label: {**_scores(0.5 + 0.1 * step + 0.05 * i, 0.4 + 0.1 * step + 0.04 * i), "support": 10 + i}
                     for i, label in enumerate(TYPES)},
        "leaked_by_type": {label: {"gold": 40 + i, "leaked": 6 - 2 * step + i} for i, label in enumerate(TYPES)},
        "eval_tokens": 4000,
        "counts": {"tp": 300, "pred": 350, "gold": 360, "tp_binary": 320, "token_tp": 800, "token_tp_type": 790,
                   "token_pred": 850, "token_gold": 880},
    }
    if mcnemar:
        metrics["mcnemar_vs_previous"] = mcnemar
    return metrics


@pytest.fixture
def project(projects):
    """Project A with 10 gold pool notes, 5 evaluation notes and three model versions (#3 current)."""
    project = projects["A"]
    notes = generate_notes(15, seed=3)
    import_documents(project=project, documents=notes[:10], annotated=True)
    import_documents(project=project, documents=notes[10:], annotated=True, evaluation=True)
    created = timezone.now() - timedelta(hours=3)
    versions = []
    for step in range(3):
        previous = versions[-1].pk if versions else None
        mcnemar = None if previous is None else {
            "previous": previous, "statistic": 9.5 - 3 * step, "pvalue": [1.0, 0.002, 0.0123][step],
            "both": 3900, "a_only": 30 - 5 * step, "b_only": 4 + step, "neither": 60}
        version = ModelVersion.objects.create(
            project=project, tagger_kind="crf", status=ModelVersion.Status.READY, is_current=False,
            gold_document_ids=[n.name for n in notes[: 4 + 3 * step]], silver_sentences=2 * step,
            n_documents=4 + 3 * step, n_tokens=1500 + 1100 * step, annotator_hours=0.25 * step,
            metrics=_metrics(step, mcnemar), train_seconds=1.5 + step, scoring_seconds=0.5, pool_size=40 - 3 * step,
            choices={"strategy": {"name": "LCUB_6", "kind": "lcub", "params": {"theta": 0.6}},
                     "recall_bias": {}, "self_training": {}, "seed": 0},
        )
        ModelVersion.objects.filter(pk=version.pk).update(created_at=created + timedelta(minutes=20 * step))
        versions.append(version)
    ModelVersion.objects.filter(pk=versions[-1].pk).update(is_current=True)
    return project


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _chart_data(response) -> dict:
    match = re.search(r'<script id="dashboard-data" type="application/json">(.*?)</script>', response.content.decode())
    assert match, "the dashboard hands its chart data to the page"
    return json.loads(match.group(1))


def _text(response) -> str:
    """The page's text with tags removed and whitespace collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_pages_are_for_the_projects_leads_only(project, projects, users):
    version = ModelVersion.objects.get(project=project, is_current=True)
    run = SimulationRun.objects.create(project=project, strategies=["random"], batch_sizes=[2], initial=3,
                                       iterations=1, runs=1)
    pages = [
        reverse("learning:dashboard", args=[project.pk]),
        reverse("learning:model-version", args=[project.pk, version.pk]),
        reverse("learning:simulation", args=[project.pk, run.pk]),
    ]
    lead, annotator, outsider = (_client(users[k]) for k in ("lead", "annotator", "outsider"))
    for url in pages:
        assert lead.get(url, HTTP_HX_REQUEST="true").status_code == 200, url
        assert annotator.get(url).status_code == 403, url
        assert outsider.get(url).status_code == 404, url
        assert Client().get(url).status_code == 302, url  # to the login page
    start = reverse("learning:simulation-start", args=[project.pk])
    form = {"strategies": ["random"], "batch_sizes": "2", "initial": "3", "iterations": "1", "runs": "1"}
    assert annotator.post(start, form).status_code == 403
    assert outsider.post(start, form).status_code == 404
    assert SimulationRun.objects.count() == 1  # refused before anything was stored
    # Another project's model or simulation is not found through this project.
    other = projects["B"]
    foreign_version = ModelVersion.objects.create(project=other, tagger_kind="crf", status="ready")
    foreign_run = SimulationRun.objects.create(project=other, strategies=["random"], batch_sizes=[2])
    admin = _client(users["admin"])
    assert admin.get(reverse("learning:model-version", args=[other.pk, foreign_version.pk])).status_code == 200
    assert admin.get(reverse("learning:model-version", args=[project.pk, foreign_version.pk])).status_code == 404
    assert admin.get(reverse("learning:simulation", args=[project.pk, foreign_run.pk]),
                     HTTP_HX_REQUEST="true").status_code == 404
    # Without htmx the simulation's address shows it on the dashboard.
    response = lead.get(pages[2])
    assert response.status_code == 302
    assert response["Location"] == f"{pages[0]}?simulation={run.pk}#simulation"


def test_dashboard_figures_are_the_model_versions_metrics(project, users):
    response = _client(users["lead"]).get(reverse("learning:dashboard", args=[project.pk]))
    assert response.status_code == 200
    data = _chart_data(response)
    versions = list(ModelVersion.objects.filter(project=project).order_by("created_at"))
    assert [p["id"] for p in data["points"]] == [v.pk for v in versions]
    for point, version in zip(data["points"], versions):
        m = version.metrics
        assert point["values"] == {
            "entity_f1": m["entity"]["f1"], "entity_p": m["entity"]["p"], "entity_r": m["entity"]["r"],
            "token_f1": m["token"]["f1"], "token_p": m["token"]["p"], "token_r": m["token"]["r"],
            "leakage": m["leakage"],
        }
        assert (point["n_documents"], point["n_tokens"], point["annotator_hours"]) == (
            version.n_documents, version.n_tokens, version.annotator_hours)
        assert (point["gold_documents"], point["silver_sentences"]) == (len(version.gold_document_ids),
                                                                         version.silver_sentences)
        assert point["per_type"]["FECHAS"] == m["per_type"]["FECHAS"]
        assert point["url"] == reverse("learning:model-version", args=[project.pk, version.pk])
    current = versions[-1]
    assert data["current"] == current.pk and [p["is_current"] for p in data["points"]] == [False, False, True]
    # Types in the project's label order (MEDDOCAN lists NOMBRE_SUJETO_ASISTENCIA before FECHAS).
    assert data["types"] == [label for label in project.labels if label in TYPES]
    assert [m["key"] for m in data["metrics"]] == ["entity_f1", "entity_p", "entity_r", "token_f1", "token_p",
                                                   "token_r", "leakage"]
    assert data["simulations"] == [] and data["overlay"] == ""

    html = response.content.decode()
    entity = current.metrics["entity"]
    assert f'data-figure="entity_f1">{entity["f1"]:.3f}<' in html
    assert f'data-figure="entity_p">{entity["p"]:.3f}<' in html
    assert f'data-figure="token_f1">{current.metrics["token"]["f1"]:.3f}<' in html
    assert f'data-figure="leakage">{100 * current.metrics["leakage"]:.2f} %<' in html
    rows = re.findall(r'<tr data-version="(\d+)"', html)
    assert rows == [str(v.pk) for v in reversed(versions)]  # newest first
    # The current model against #2: p = 0.0123 < 0.05 with 20 tokens right only now and 6 only before.
    text = _text(response)
    assert (f"Model #{current.pk} against model #{versions[1].pk}: the new model is significantly better than the "
            "previous one at p < 0.05 (p = 0.0123, χ² = 3.50). 20 evaluation tokens are right only with the new "
            "model, 6 only with the previous one.") in text


def test_a_project_without_models_gets_a_dashboard_that_says_so(projects, users):
    project = projects["A"]
    response = _client(users["lead"]).get(reverse("learning:dashboard", args=[project.pk]))
    assert response.status_code == 200
    assert "No model has been trained yet" in _text(response)
    assert "No simulation yet." in _text(response)
    assert 'id="curve-chart"' not in response.content.decode()
    data = _chart_data(response)
    assert (data["points"], data["current"], data["simulations"], data["overlay"]) == ([], None, [], "")
    # The form offers the published protocol's settings, with Random, LCUB_6 and ROI_2 ticked.
    html = response.content.decode()
    assert re.findall(r'<input type="checkbox" name="strategies" value="([^"]+)"[^>]*checked', html) == [
        "random", "LCUB_6", "ROI_2"]
    assert 'name="batch_sizes" value="5, 10"' in html and 'name="iterations" value="10"' in html


def test_mcnemar_is_read_out_in_plain_words(project):
    version = ModelVersion.objects.get(project=project, is_current=True)
    first = ModelVersion.objects.filter(project=project).order_by("created_at").first()
    assert mcnemar_reading(first) is None  # nothing to compare the first model with

    def reading(pvalue, a_only, b_only):
        version.metrics["mcnemar_vs_previous"].update(pvalue=pvalue, a_only=a_only, b_only=b_only)
        return mcnemar_reading(version)

    assert reading(0.01, 12, 3)["verdict"] == "better"
    worse = reading(0.00001, 2, 30)
    assert worse["verdict"] == "worse" and "significantly worse than the previous one" in worse["text"]
    assert worse["p_text"] == "p < 0.0001"
    same = reading(0.05, 12, 3)  # not below the level
    assert same["verdict"] == "indistinguishable"
    assert "the new model is not distinguishable from the previous one at p < 0.05 (p = 0.0500" in same["text"]


def test_model_version_page_shows_its_scores_training_set_and_test(project, users):
    versions = list(ModelVersion.objects.filter(project=project).order_by("created_at"))
    version = versions[1]
    response = _client(users["lead"]).get(reverse("learning:model-version", args=[project.pk, version.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    m = version.metrics
    for level in ("entity", "entity_binary", "token", "token_type"):
        row = re.search(rf'<tr data-level="{level}">(.*?)</tr>', html, re.S).group(1)
        assert re.findall(r'class="num">(?:<b>)?([0-9.]+)', row) == [f"{m[level][k]:.3f}" for k in ("p", "r", "f1")]
    fechas = re.search(r'<tr data-type="FECHAS">(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r'class="num">(?:<b>)?([0-9.]+)', fechas) == [
        f"{m['per_type']['FECHAS'][k]:.3f}" for k in ("p", "r", "f1")] + [str(m["per_type"]["FECHAS"]["support"])]
    assert re.findall(r'<tr data-type="([A-Z_]+)"', html) == [label for label in project.labels if label in TYPES]
    text = _text(response)
    assert f"Gold documents {len(version.gold_document_ids)} Silver sentences 2 machine-labelled" in text
    assert "Documents 7 Tokens 2600 Annotator-hours 0.25" in text
    assert "Training 2.5 s Scoring the pool 0.5 s (37 records)" in text
    assert "point 2 of 3" in text
    # Against model #1: p = 0.002, with 25 tokens right only now and 5 only before: significantly better.
    assert "the new model is significantly better than the previous one at p < 0.05 (p = 0.0020" in text
    cells = re.findall(r"<td>(\d+)</td>", re.search(r'id="mcnemar-table">(.*?)</table>', html, re.S).group(1))
    assert cells == ["3900", "25", "5", "60"]
    assert reverse("learning:model-version", args=[project.pk, versions[0].pk]) in html
    assert reverse("learning:model-version", args=[project.pk, versions[2].pk]) in html


def test_with_a_recall_bias_the_per_type_table_shows_the_precision_and_recall_it_implies(project, users):
    version = ModelVersion.objects.filter(project=project).order_by("created_at").last()
    client = _client(users["lead"])
    url = reverse("learning:model-version", args=[project.pk, version.pk])
    assert "Precision with the recall bias" not in client.get(url).content.decode()  # no bias: no columns
    biased = {"per_type": {"FECHAS": {**_scores(0.61, 0.97), "support": 10}},
              "leaked_by_type": {"FECHAS": {"gold": 41, "leaked": 1}}}
    version.choices = {**version.choices, "recall_bias": {"beta": 4, "tau_main": 0.992, "tau_alt": 0.005,
                                                          "metrics": {**_metrics(0), **biased}}}
    version.save()
    html = client.get(url).content.decode()
    assert "Precision with the recall bias" in html and "cross-fitted on the evaluation documents" in html
    fechas = re.search(r'<tr data-type="FECHAS">(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r'class="num biased">([0-9.—]+)', fechas) == ["0.610", "0.970"]
    # The type's leaked tokens, of its gold tokens, by the model (the last version: step 2) and its suggestions.
    assert re.findall(r'data-col="(leaked|biased-leaked)">([^<]+)<', fechas) == [("leaked", "3 / 41"),
                                                                                 ("biased-leaked", "1 / 41")]
    # A type the biased evaluation has no score for shows a dash.
    other = re.search(rf'<tr data-type="{TYPES[0]}">(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r'class="num biased">([0-9.—]+)', other) == ["—", "—"]
    assert re.findall(r'data-col="biased-leaked">([^<]+)<', other) == ["—"]
    assert "tokens in the evaluation documents, those the model leaves as not PHI" in html


def test_with_a_beta_per_type_the_per_type_table_shows_each_type_s_beta_and_thresholds(project, users):
    version = ModelVersion.objects.filter(project=project).order_by("created_at").last()
    version.choices = {**version.choices, "recall_bias": {
        "beta": 4, "betas": {"FECHAS": 20.0, TYPES[0]: 4.0},
        "thresholds": {"FECHAS": [0.9, 0.0001], TYPES[0]: [0.992, 0.005]},
        "metrics": {**_metrics(0), "per_type": {"FECHAS": {**_scores(0.55, 0.99), "support": 10}}}}}
    version.save()
    html = _client(users["lead"]).get(reverse("learning:model-version", args=[project.pk, version.pk])).content.decode()
    assert "F4, with a β of its own for some types: thresholds for 2 PHI types" in html
    fechas = re.search(r'<tr data-type="FECHAS">(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r'class="num biased"[^>]*>([^<]+)<', fechas) == ["F20", "0.9 / 0.0001", "0.550", "0.990",
                                                                      "7 / 41"]
    first = re.search(rf'<tr data-type="{TYPES[0]}">(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r'class="num biased"[^>]*>([^<]+)<', first) == ["F4", "0.992 / 0.005", "—", "—", "6 / 40"]
    # A type with no thresholds of its own keeps the model's labels.
    others = [t for t in re.findall(r'<tr data-type="([^"]+)">', html) if t not in ("FECHAS", TYPES[0])]
    for kind in others:
        row = re.search(rf'<tr data-type="{kind}">(.*?)</tr>', html, re.S).group(1)
        assert re.findall(r'class="num biased"[^>]*>([^<]+)<', row)[0] == "off"


@pytest.mark.parametrize("form, message", [
    ({"batch_sizes": "5", "initial": "3", "iterations": "2", "runs": "1"}, "choose at least one strategy"),
    ({"strategies": ["random"], "batch_sizes": "five", "initial": "3", "iterations": "2", "runs": "1"},
     "&#x27;five&#x27; is not a whole number; write sizes like 5, 10"),
    ({"strategies": ["random"], "batch_sizes": "0, 5", "initial": "3", "iterations": "2", "runs": "1"},
     "each batch size must be between 1 and 200"),
    ({"strategies": ["random", "nonsense"], "batch_sizes": "5", "initial": "3", "iterations": "2", "runs": "1"},
     "Select a valid choice. nonsense is not one of the available choices."),
    ({"strategies": ["random", "LCUB_6", "ROI_2"], "batch_sizes": "1, 2, 3", "initial": "3", "iterations": "50",
      "runs": "3"}, "this asks for 1377 models to be trained; at most 1000"),
    ({"strategies": ["random"], "batch_sizes": "5", "initial": "0", "iterations": "2", "runs": "1"},
     "Ensure this value is greater than or equal to 1."),
    # Checked against the project's data by the service: 10 annotated pool documents are not more than 10.
    ({"strategies": ["random", "LCUB_6"], "batch_sizes": "2", "initial": "10", "iterations": "2", "runs": "1"},
     "the project has 10 annotated pool documents; a simulation starting from 10 needs more than that"),
])
def test_a_bad_simulation_request_creates_nothing_and_says_why(project, users, form, message):
    response = _client(users["lead"]).post(reverse("learning:simulation-start", args=[project.pk]), form)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert SimulationRun.objects.count() == 0
    # The page is the dashboard again, with what was typed kept.
    assert _chart_data(response)["points"]
    if "batch_sizes" in form:
        assert f'value="{form["batch_sizes"]}"' in response.content.decode()


def test_a_simulation_without_evaluation_documents_is_refused(projects, users):
    project = projects["A"]
    import_documents(project=project, documents=generate_notes(6, seed=1), annotated=True)
    form = {"strategies": ["random"], "batch_sizes": "2", "initial": "2", "iterations": "1", "runs": "1"}
    response = _client(users["lead"]).post(reverse("learning:simulation-start", args=[project.pk]), form)
    assert response.status_code == 400
    assert "the project has no annotated evaluation documents to measure the curves on" in response.content.decode()
    assert SimulationRun.objects.count() == 0


def test_a_valid_simulation_is_queued_followed_and_shown_when_done(project, users, django_capture_on_commit_callbacks):
    project.tagger = {"kind": "crf", "params": {"max_iterations": 10}}  # a quick CRF: the curves' shape is not tested
    project.save()
    client = _client(users["lead"])
    form = {"strategies": ["random", "LCUB_6"], "batch_sizes": "3, 2", "initial": "3", "iterations": "2",
            "runs": "2", "seed": "7"}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("learning:simulation-start", args=[project.pk]), form)
    assert len(callbacks) == 1  # the task is sent once the run is committed
    run = SimulationRun.objects.get()
    dashboard = reverse("learning:dashboard", args=[project.pk])
    assert response.status_code == 302 and response["Location"] == f"{dashboard}?simulation={run.pk}#simulation"
    assert (run.status, run.strategies, run.batch_sizes, run.initial, run.iterations, run.runs, run.seed) == (
        "queued", ["random", "LCUB_6"], [2, 3], 3, 2, 2, 7)
    assert run.requested_by == users["lead"]

    fragment_url = reverse("learning:simulation", args=[project.pk, run.pk])
    queued = client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 2s"' in queued and "waiting for a worker" in queued
    SimulationRun.objects.filter(pk=run.pk).update(status="running", progress={"done": 6, "total": 24,
                                                                             "text": "batch 2: random run 1"})
    running = client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    assert '<progress max="100" value="25">' in running and "6 of 24 models" in running

    SimulationRun.objects.filter(pk=run.pk).update(status="queued")
    run = run_simulation(run.pk)
    assert run.status == "done"
    done = client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in done  # polling stops
    overlay = json.loads(re.search(r'<script id="simulation-data" type="application/json">(.*?)</script>',
                                   done).group(1))
    assert [b["key"] for b in overlay["batches"]] == [f"{run.pk}:2", f"{run.pk}:3"]
    for batch in overlay["batches"]:
        result = run.results[str(batch["batch"])]["strategies"]
        assert [s["name"] for s in batch["strategies"]] == ["random", "LCUB_6"]  # as asked for
        for strategy in batch["strategies"]:
            curve = result[strategy["name"]]
            assert strategy["docs"] == curve["docs"]
            assert strategy["values"]["entity_f1"] == curve["f1_mean"]
            assert strategy["sd"]["entity_f1"] == curve["f1_sd"]
            assert strategy["values"]["entity_r"] == curve["recall_mean"]
    # The table of documents to reach each F1: one row per strategy and batch size, and the live curve's.
    rows = re.findall(r'<tr data-strategy="([^"]+)" data-batch="(\d+)">(.*?)</tr>', done, re.S)
    assert [(s, int(b)) for s, b, _ in rows] == [("random", 2), ("LCUB_6", 2), ("random", 3), ("LCUB_6", 3)]
    for strategy, batch, cells in rows:
        curve = run.results[batch]["strategies"][strategy]
        shown = re.findall(r'data-target="\d">(.*?)</td>', cells)
        expected = [curve["docs_to"][f"{t:g}"] for t in DOCS_TO_TARGETS]
        assert [None if "not reached" in cell else int(cell) for cell in shown] == expected
        assert f"{curve['aulc']:.3f}" in cells
    assert 'data-strategy="live"' in done

    page = client.get(dashboard)
    data = _chart_data(page)
    assert data["overlay"] == f"{run.pk}:2"
    assert [s["id"] for s in data["simulations"]] == [run.pk]
    # While a newer simulation waits, the page follows it and keeps drawing the finished one's curves.
    newer = SimulationRun.objects.create(project=project, strategies=["random"], batch_sizes=[2], initial=3)
    page = client.get(dashboard)
    shown = f'id="simulation-run" class="card dash-sim" data-run="{newer.pk}" data-status="queued"'
    assert shown in page.content.decode()
    assert _chart_data(page)["overlay"] == f"{run.pk}:2"


def test_a_simulation_fits_the_crf_the_live_loop_fits_with_the_projects_gazetteers(projects, monkeypatch):
    from learning.selectors.loop import loop_tagger
    from learning.services import simulations

    project = projects["A"]
    project.gazetteers = {"HOSPITAL": ["Hospital La Paz"]}
    project.save()
    notes = generate_notes(10, seed=4)
    import_documents(project=project, documents=notes[:7], annotated=True)
    import_documents(project=project, documents=notes[7:], annotated=True, evaluation=True)
    run = SimulationRun.objects.create(project=project, strategies=["random"], batch_sizes=[2], initial=3,
                                       iterations=1, runs=1, tagger=dict(project.tagger))
    fitted = []
    monkeypatch.setattr(simulations, "simulate",
                        lambda *args, tagger_factory, **kwargs: fitted.append(tagger_factory()) or {})
    assert run_simulation(run.pk).status == "done"
    live = loop_tagger(project)[2]()
    assert fitted[0].get_params() == live.get_params()
    assert fitted[0].gazetteers == project.gazetteers and fitted[0].vocabulary_scope == str(project.pk)
