"""The loop's pieces without a worker: when a retrain is asked for, who may work on it, what a failure
leaves behind, and what self-training, recall bias and measured costs change."""
from __future__ import annotations

import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotator.artifact_store import LocalStore
from annotator.models import Annotation, AuditEvent, Document, PoolScore, Ranking
from annotator.selectors import gold_documents, unlabelled_pool
from learning.core.pre_annotation import pre_annotations_many
from learning.core.recall_bias import stored_thresholds
from learning.selectors.models import current_tagger
from learning.services.completion import completer
from learning.services import jobs, retrain as services
from learning.selectors.measured_costs import ROI_MEASURED, project_strategy
from learning.models import ModelVersion, RetrainJob, SilverSentence
from tests.html_forms import form_values

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(loop_project):
    return loop_project


def _submit_gold(project, n: int, *, seconds: float = 0.0) -> None:
    """Mark ``n`` more pool documents as annotated (as the workbench would leave them)."""
    for document in Document.objects.filter(project=project, role="pool", status="pool").order_by("id")[:n]:
        Annotation.objects.create(document=document, spans=[], state="submitted", submitted_at=timezone.now(),
                                  active_seconds=seconds)
        Document.objects.filter(pk=document.pk).update(status="submitted")


def test_a_batch_request_waits_for_batch_size_new_submissions(project):
    first, created = jobs.request_retrain(project=project, reason="batch")
    assert created and first.submissions_at_request == 10  # the imported gold counts as submitted
    RetrainJob.objects.filter(pk=first.pk).update(status="done")
    _submit_gold(project, 2)
    assert jobs.request_retrain(project=project, reason="batch") == (None, False)
    _submit_gold(project, 1)
    second, created = jobs.request_retrain(project=project, reason="batch")
    assert created and second.submissions_at_request == 13


def test_never_two_active_retrains_and_a_lead_request_meanwhile_is_followed_up(project):
    job, created = jobs.request_retrain(project=project, reason="batch")
    _submit_gold(project, 5)
    again, created_again = jobs.request_retrain(project=project, reason="batch")
    assert again.pk == job.pk and not created_again and not RetrainJob.objects.get(pk=job.pk).follow_up
    lead, created_lead = jobs.request_retrain(project=project, reason="lead", force=True)
    assert lead.pk == job.pk and not created_lead and RetrainJob.objects.get(pk=job.pk).follow_up
    assert RetrainJob.objects.filter(project=project).count() == 1


def test_a_failed_job_s_batch_still_counts(project):
    job, _ = jobs.request_retrain(project=project, reason="batch")
    claimed = jobs.claim(job.pk)
    assert jobs.fail(job.pk, claimed.attempt, "boom")
    again, created = jobs.request_retrain(project=project, reason="batch")
    assert created and again.pk != job.pk


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_create_one_job(project):
    results, barrier = [], threading.Barrier(8)

    def ask():
        barrier.wait()
        try:
            results.append(jobs.request_retrain(project=project, reason="lead", force=True))
        finally:
            connection.close()

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(created for _, created in results) == 1
    assert len({job.pk for job, _ in results}) == 1
    assert RetrainJob.objects.filter(project=project).count() == 1


def test_a_claim_is_exclusive_until_its_process_dies_or_another_machines_lease_runs_out(project):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        RetrainJob.objects.filter(pk=job.pk).update(
            status="training", attempt=1, owner=f"{jobs.this_process().rpartition(':')[0]}:{child.pid}",
            lease_until=timezone.now() + timedelta(minutes=5),
        )
        assert jobs.claim(job.pk) is None and jobs.stalled_jobs() == []
        # Its lease ran out while it lives (a long fit in C code keeps the renewing thread from running):
        # still its attempt, on this machine.
        RetrainJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(minutes=1))
        assert jobs.claim(job.pk) is None and jobs.stalled_jobs() == []
    finally:
        child.kill()
        child.wait()
    assert jobs.stalled_jobs() == [job.pk]  # its process is gone
    taken = jobs.claim(job.pk)
    assert taken.attempt == 2 and taken.owner == jobs.this_process()
    RetrainJob.objects.filter(pk=job.pk).update(owner="elsewhere:1", lease_until=timezone.now() - timedelta(1))
    assert jobs.stalled_jobs() == [job.pk]  # another machine's process: its lease decides


def test_a_fit_holds_the_lease_as_long_as_a_fit_on_its_text_may_last_and_renewals_do_not_shorten_it(project):
    """A fit from zero in C code keeps the renewing thread from running: before it, the lease is taken for
    the whole fit, so that a worker of another machine does not take the live attempt over."""
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    job = jobs.claim(job.pk)
    expected = jobs.LEASE_SECONDS + 3 * jobs.FIT_LEASE_SECONDS_PER_MILLION_CHARACTERS

    def held() -> float:
        return (RetrainJob.objects.get(pk=job.pk).lease_until - timezone.now()).total_seconds()

    with jobs.fitting(job, characters=3_000_000):
        assert expected - 10 <= held() <= expected
        jobs._extend_lease(job, jobs.this_process())  # a renewal that did run meanwhile
        assert held() >= expected - 10
        # Seen from another machine the attempt is held; its own machine sees its process alive anyway.
        RetrainJob.objects.filter(pk=job.pk).update(owner="elsewhere:1")
        assert jobs.stalled_jobs() == [] and jobs.claim(job.pk) is None
        RetrainJob.objects.filter(pk=job.pk).update(owner=jobs.this_process())
    assert jobs.LEASE_SECONDS - 10 <= held() <= jobs.LEASE_SECONDS  # back to its usual length
    jobs._extend_lease(job, jobs.this_process())
    assert held() <= jobs.LEASE_SECONDS


def test_a_lost_workers_retrain_is_sent_again_only_to_a_job_no_attempt_holds(project):
    """A lost worker's unclaimed retrain message is sent again only while the job waits for an attempt: not
    when a live process holds it meanwhile (it would take its own job over and score it all again)."""
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    assert jobs.waits_for_an_attempt(job.pk)  # never claimed
    jobs.claim(job.pk)  # by this (live) process
    assert not jobs.waits_for_an_attempt(job.pk)
    RetrainJob.objects.filter(pk=job.pk).update(owner="", lease_until=timezone.now())  # its attempt ended
    assert jobs.waits_for_an_attempt(job.pk)
    RetrainJob.objects.filter(pk=job.pk).update(owner="elsewhere:1", lease_until=timezone.now() - timedelta(1))
    assert jobs.waits_for_an_attempt(job.pk)  # stalled: another machine's lease ran out
    RetrainJob.objects.filter(pk=job.pk).update(status="done")
    assert not jobs.waits_for_an_attempt(job.pk)


def test_a_failed_retrain_leaves_the_current_model_and_ranking(project, monkeypatch):
    first = services.train_and_rank(project=project)
    ranking = Ranking.objects.get(project=project, is_current=True)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device (disk full)")

    monkeypatch.setattr(LocalStore, "write", broken)
    with pytest.raises(OSError):
        services.train_and_rank(project=project)
    assert ModelVersion.objects.get(project=project, is_current=True).pk == first.pk
    assert Ranking.objects.get(project=project, is_current=True).pk == ranking.pk
    failed = RetrainJob.objects.get(project=project, status="failed")
    assert "disk full" in failed.error
    assert ModelVersion.objects.filter(project=project).count() == 1


def test_stages_repeated_or_from_a_stale_attempt_change_nothing(project):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    job = jobs.claim(job.pk)
    shards = services.train(job)
    job.refresh_from_db()
    assert not services.evaluated(job) and job.result["metrics"] == {}
    for shard in shards:
        services.score(job, shard)
    services.score(job, shards[0])  # a shard delivered twice
    assert PoolScore.objects.filter(ranking_id=job.ranking_id).count() == 25
    stale = RetrainJob.objects.get(pk=job.pk)
    stale.attempt += 1
    with pytest.raises(jobs.Superseded):  # an evaluation of another attempt
        services.evaluate(stale)
    assert services.publish(job.pk, job.attempt + 1) is None  # a message of another attempt
    # The evaluation's message was lost: publishing evaluates the model first.
    version = services.publish(job.pk, job.attempt)
    assert version.metrics["entity"]["f1"] >= 0 and services.evaluated(RetrainJob.objects.get(pk=job.pk))
    assert version.is_current and services.publish(job.pk, job.attempt) is None
    assert ModelVersion.objects.filter(project=project).count() == 1
    ranks = list(PoolScore.objects.filter(ranking_id=job.ranking_id).order_by("rank").values_list("rank", flat=True))
    assert ranks == list(range(1, 26))


def test_self_training_adds_silver_that_is_never_gold(project):
    project.self_training = True
    project.self_training_policy = {"max_pool_documents": 25, "iterations": 1}
    project.save()
    version = services.train_and_rank(project=project)
    silver = SilverSentence.objects.filter(project=project)
    assert version.silver_sentences == silver.count() > 0
    assert version.choices["self_training"]["silver_sentences"] == silver.count()
    assert all(row.document.status == "pool" and row.end > row.start for row in silver)
    # Silver is not an annotation: the gold standard (and every export built on it) is unchanged.
    assert len(gold_documents(project=project, role="pool")) == 10
    assert not Annotation.objects.filter(document__in=silver.values("document")).exists()


def test_recall_bias_makes_more_and_less_sure_suggestions(project):
    plain = services.train_and_rank(project=project)
    plain_spans = sum(len(s.pre_annotations["spans"]) for s in PoolScore.objects.filter(ranking__is_current=True,
                                                                                      ranking__project=project))
    project.recall_bias_beta = 40
    project.save()
    biased = services.train_and_rank(project=project)
    bias = biased.choices["recall_bias"]
    assert bias["beta"] == 40 and 0 < bias["tau_alt"] < 1 and "metrics" in bias
    assert bias["metrics"]["token"]["r"] >= plain.metrics["token"]["r"]
    scores = PoolScore.objects.filter(ranking__is_current=True, ranking__project=project)
    assert sum(len(s.pre_annotations["spans"]) for s in scores) >= plain_spans


def test_a_beta_per_type_tunes_a_pair_per_type_and_the_suggestions_use_them(project):
    project.recall_bias_beta = 4
    project.recall_bias_betas = {"FECHAS": 40, "NOMBRE_SUJETO_ASISTENCIA": 0}
    project.save()
    version = services.train_and_rank(project=project)
    bias = version.choices["recall_bias"]
    _, tagger = current_tagger(project)
    types = {label[2:] for label in tagger.labels_ if label != "O"}
    assert "FECHAS" in types and "NOMBRE_SUJETO_ASISTENCIA" in types
    # Every type the model knows gets a pair but the one whose β is 0; the β of each is the project's.
    assert set(bias["thresholds"]) == set(bias["betas"]) == types - {"NOMBRE_SUJETO_ASISTENCIA"}
    others = types - {"FECHAS", "NOMBRE_SUJETO_ASISTENCIA"}
    assert bias["betas"]["FECHAS"] == 40 and {bias["betas"][t] for t in others} <= {4}
    assert bias["beta"] == 4 and "per_type" in bias["metrics"]
    # The pool's suggestions are decoded with those pairs.
    scores = list(PoolScore.objects.filter(ranking__is_current=True, ranking__project=project).order_by("document_id"))
    ids, documents = unlabelled_pool(project=project, ids=[row.document_id for row in scores])
    thresholds = stored_thresholds(bias)
    expected = pre_annotations_many(tagger.tokens(documents), tagger.predict_marginals(documents),
                                    list(tagger.labels_), recall_bias=thresholds)
    # (the first records of the ranking are completed from their own text as well, ahead of their hand-out)
    complete = completer(project)
    expected = [complete(document.text, shown) if row.pre_annotations.get("completed") else shown
                for row, document, shown in zip(scores, documents, expected)]
    def spans(rows):
        return [[(s["start"], s["end"], s["label"]) for s in row["spans"]] for row in rows]

    assert spans(row.pre_annotations for row in scores) == spans(expected)
    # ... which show more than the model's own labels would.
    unbiased = pre_annotations_many(tagger.tokens(documents), tagger.predict_marginals(documents),
                                    list(tagger.labels_))
    assert sum(map(len, spans(expected))) > sum(map(len, spans(unbiased)))


def test_roi_with_measured_costs(project, users):
    project.strategy = ROI_MEASURED
    project.save()
    strategy, note = project_strategy(project)
    assert strategy.name == "ROI_2" and "fewer records" in note["why"]

    documents = Document.objects.filter(project=project, role="pool", status="pool").order_by("id")[:12]
    for i, document in enumerate(documents):
        n_tokens = 100 + 50 * i
        Document.objects.filter(pk=document.pk).update(n_tokens=n_tokens, status="submitted")
        Annotation.objects.create(document=document, annotator=users["annotator"], state="submitted",
                                  submitted_at=timezone.now(), fn_fixes=i % 3, fp_fixes=i % 2,
                                  active_seconds=0.2 * n_tokens + 8 * (i % 3) + 3 * (i % 2))
    strategy, note = project_strategy(project)
    assert strategy.name == "ROI (measured costs)" and strategy.kind == "roi"
    assert strategy.params["c_t"] == pytest.approx(0.2, abs=1e-6)
    assert strategy.params["nc_fn"] == pytest.approx(30 - 8, abs=1e-4)
    assert strategy.params["nc_fp"] == pytest.approx(30 - 3, abs=1e-4)
    version = services.train_and_rank(project=project)
    ranking = Ranking.objects.get(project=project, is_current=True)
    assert ranking.strategy == "ROI (measured costs)" and "12 timed records" in ranking.strategy_params["why"]
    assert version.choices["strategy"]["params"]["c_t"] == pytest.approx(0.2, abs=1e-6)


def test_the_loop_page_and_api_for_leads_only(project, users, client, api_as):
    services.train_and_rank(project=project)
    client.force_login(users["lead"])
    page = client.get(f"/projects/{project.pk}/loop/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "Current model" in body and "LCUB_6" in body and "Retrain now" in body
    client.force_login(users["annotator"])
    assert client.get(f"/projects/{project.pk}/loop/").status_code == 403
    client.force_login(users["outsider"])
    assert client.get(f"/projects/{project.pk}/loop/").status_code == 404

    state = api_as(users["lead"]).get(f"/api/projects/{project.pk}/loop/").json()
    assert state["model"]["documents"] == 10 and state["retrain"] is None
    # The model, its costs and fits per annotator are the leads': annotators are refused the state too.
    assert api_as(users["annotator"]).get(f"/api/projects/{project.pk}/loop/").status_code == 403
    assert api_as(users["annotator"]).post(f"/api/projects/{project.pk}/retrain/").status_code == 403


def test_settings_are_checked_recorded_and_used_by_the_next_retrain(project, users, client):
    client.force_login(users["lead"])
    url = f"/projects/{project.pk}/loop/"
    shown = form_values(client.get(url).content.decode(), "settings")
    assert shown["tagger-max_iterations"] == "50" and shown["strategy-theta"] == "0.6"
    # ELB_3 is chosen with the fields its choice brings (what the page fetches when the strategy changes).
    elb = form_values("<form class='settings'>" + client.get(
        f"/projects/{project.pk}/loop/parameters/", {"strategy": "ELB_3"}).content.decode() + "</form>", "settings")
    assert elb == {"strategy_parameters_of": "ELB_3", "strategy-rho": "0.1"}
    form = {**{k: v for k, v in shown.items() if not k.startswith("strategy-")}, **elb,
            "tagger-max_iterations": "30", "strategy": "ELB_3", "batch_size": "5",
            "eponyms": "Parkinson\n Alzheimer \n", "gazetteer-HOSPITAL": "Hospital La Paz\n\n",
            "adjudication": "majority", "awaiting_adjudication": "agreed", "control_rate": "5"}
    bad = client.post(url, {**form, "control_rate": "80"})
    assert bad.status_code == 400 and "less than or equal to 50" in bad.content.decode()
    bad = client.post(url, {**form, "strategy-rho": "-0.5"})
    assert bad.status_code == 400 and "ρ (rho) must be between 0 and 10" in bad.content.decode()
    bad = client.post(url, {**form, "tagger-max_iterations": "0"})
    assert bad.status_code == 400 and "Max iterations must be between 1 and 1,000" in bad.content.decode()
    bad = client.post(url, {**form, "gazetteer-HOSPITAL": "x" * 201})
    assert bad.status_code == 400 and "at most 200 are allowed" in bad.content.decode()
    project.refresh_from_db()
    assert project.strategy == "LCUB_6" and not AuditEvent.objects.filter(detail__has_key="settings").exists()

    assert client.post(url, form).status_code == 302
    project.refresh_from_db()
    assert project.strategy == "ELB_3" and project.batch_size == 5 and project.strategy_params == {}
    assert project.tagger == {"kind": "crf", "params": {"max_iterations": 30}}
    event = AuditEvent.objects.get(detail__has_key="settings")
    assert event.user == users["lead"] and event.detail["settings"]["strategy"] == ["LCUB_6", "ELB_3"]
    assert project.eponyms == ["Parkinson", "Alzheimer"] and project.gazetteers == {"HOSPITAL": ["Hospital La Paz"]}
    assert (project.adjudication, project.awaiting_adjudication, project.control_rate) == ("majority", "agreed", 0.05)
    history = client.get(f"/projects/{project.pk}/loop/").content.decode()
    assert "Changes to the settings" in history and "ELB_3" in history and "lea" in history
    version = services.train_and_rank(project=project)
    assert version.tagger_params == {"max_iterations": 30}
    assert Ranking.objects.get(project=project, is_current=True).strategy == "ELB_3"


def test_diverse_batches_spread_the_served_order_across_clusters(project):
    from learning.services.clustering import compute_clustering

    clustering = compute_clustering(project)
    project.diverse_batches = True
    project.save()
    services.train_and_rank(project=project)
    ranking = Ranking.objects.get(project=project, is_current=True)
    ordered = list(PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("document_id", "rank"))
    assert [rank for _, rank in ordered] == list(range(1, 26))
    clusters = [clustering.labels[str(document_id)] for document_id, _ in ordered]
    first_batch = clusters[:project.batch_size]
    assert len(set(first_batch)) == min(project.batch_size, len(set(clusters)))
