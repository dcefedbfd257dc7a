"""Training a project's tagger on its gold and ranking its pool, then handing out the top-ranked record
with the model's suggestions."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connections

from annotator.models import Document, PoolScore, Ranking
from annotator.selectors import gold_documents
from annotator.services.imports import content_hash, import_documents
from annotator.services.queue import next_record
from corpus.span_json import write_span
from corpus.synthetic import generate_notes
from learning.core.metrics import mcnemar_tokens
from learning.models import ModelVersion, RetrainJob
from learning.services.model_store import load_model
from learning.services.retrain import train_and_rank

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(projects):
    project = projects["A"]
    notes = generate_notes(40, seed=7)
    import_documents(project=project, documents=notes[:15], annotated=True)
    import_documents(project=project, documents=notes[15:20], annotated=True, evaluation=True)
    import_documents(project=project, documents=notes[20:], annotated=False)
    return project, {note.name: note for note in notes[20:]}


def test_no_gold_means_no_model(projects):
    assert train_and_rank(project=projects["B"]) is None
    assert not ModelVersion.objects.exists()


def test_train_and_rank_then_hand_out_the_top_record_with_suggestions(seeded, users):
    project, pool_notes = seeded
    version = train_and_rank(project=project)
    assert version.is_current and version.status == "ready" and version.n_documents == 15
    assert version.metrics["entity"]["f1"] > 0.6  # 15 synthetic notes are enough for a usable CRF
    ranking = Ranking.objects.get(project=project, is_current=True)
    assert ranking.model_version_id == version.pk and ranking.strategy == "LCUB_6"
    scores = list(PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("score", flat=True))
    assert len(scores) == 20 and scores == sorted(scores, reverse=True)

    handout = next_record(project=project, user=users["annotator"])
    top = PoolScore.objects.get(ranking=ranking, rank=1)
    assert handout.assignment.document_id == top.document_id
    suggestions = handout.annotation.suggested
    assert suggestions and all(0 < span["confidence"] <= 1 for span in suggestions)
    gold = pool_notes[handout.assignment.document.external_id]
    found = {(s["start"], s["end"], s["label"]) for s in suggestions}
    truth = {(s.start, s.end, s.label) for s in gold.spans}
    assert len(found & truth) / len(truth) > 0.5  # most suggestions are the real PHI


def test_a_second_model_replaces_the_first_and_the_command_skips_projects_with_one(seeded, users):
    project, _ = seeded
    first = train_and_rank(project=project)
    call_command("retrain", all=True, if_no_model=True)
    assert ModelVersion.objects.count() == 1
    call_command("retrain", project=project.name)
    assert ModelVersion.objects.count() == 2
    assert list(ModelVersion.objects.filter(is_current=True).values_list("pk", flat=True)) != [first.pk]
    assert Ranking.objects.filter(project=project, is_current=True).count() == 1


def test_a_retrain_continues_from_the_current_model_unless_the_settings_changed(seeded):
    project, _ = seeded
    first = train_and_rank(project=project)
    notes = generate_notes(45, seed=8)[40:]
    import_documents(project=project, documents=notes, annotated=True)
    second = train_and_rank(project=project)
    fits = [RetrainJob.objects.get(model_version=v).result["fit"] for v in (first, second)]
    assert [f["kind"] for f in fits] == ["cold", "warm"]
    assert 1 <= fits[1]["iterations"] <= 5 and fits[1]["warm_fits_since_cold"] == 1
    assert second.n_documents == 20 and second.metrics["entity"]["f1"] > 0.6

    project.tagger = {"kind": "crf", "params": {"c2": 0.2}}  # new settings: nothing to continue from
    project.save(update_fields=["tagger"])
    third = train_and_rank(project=project)
    assert RetrainJob.objects.get(model_version=third).result["fit"]["kind"] == "cold"


def test_the_comparison_with_the_current_model_uses_the_spans_it_kept_and_predicts_only_new_evaluation(seeded):
    project, _ = seeded
    first = train_and_rank(project=project)
    before = gold_documents(project=project, role=Document.Role.EVALUATION)
    kept = RetrainJob.objects.get(model_version=first).evaluation_spans
    assert kept == {content_hash(d.text): [write_span(s) for s in spans]  # the job keeps its model's spans
                    for d, spans in zip(before, second_model_spans(first, before))}
    import_documents(project=project, documents=generate_notes(43, seed=9)[40:], annotated=True, evaluation=True)
    evaluation = gold_documents(project=project, role=Document.Role.EVALUATION)
    expected = load_model(first.artifact, project_id=project.pk).predict(evaluation)  # the test as it was run

    second = train_and_rank(project=project)

    test = second.metrics["mcnemar_vs_previous"]
    assert RetrainJob.objects.get(model_version=second).result["fit"]["continued_from"] == "current"
    assert test == {"previous": first.pk,
                    **mcnemar_tokens(evaluation, second_model_spans(second, evaluation), expected)}
    assert len(RetrainJob.objects.get(model_version=second).evaluation_spans) == 8


def test_a_current_model_without_kept_spans_is_run_on_the_evaluation_documents(seeded):
    project, _ = seeded
    first = train_and_rank(project=project)
    RetrainJob.objects.filter(model_version=first).update(evaluation_spans={})  # as a model saved before they were
    evaluation = gold_documents(project=project, role=Document.Role.EVALUATION)
    expected = load_model(first.artifact, project_id=project.pk).predict(evaluation)

    second = train_and_rank(project=project)

    assert second.metrics["mcnemar_vs_previous"] == {
        "previous": first.pk, **mcnemar_tokens(evaluation, second_model_spans(second, evaluation), expected)}


def second_model_spans(version, evaluation):
    return load_model(version.artifact, project_id=version.project_id).predict(evaluation)


def test_a_cold_fit_due_is_fitted_beside_the_loop_and_the_next_retrain_continues_from_it(seeded):
    from learning import tasks
    from learning.services import cold_refit, model_store

    project, _ = seeded
    project.tagger = {"kind": "crf", "params": {"refit_every": 1}}
    project.save(update_fields=["tagger"])
    notes = generate_notes(50, seed=8)[40:]
    first = train_and_rank(project=project)
    import_documents(project=project, documents=notes[:3], annotated=True)
    second = train_and_rank(project=project)
    fit = RetrainJob.objects.get(model_version=second).result["fit"]
    # The retrain stayed warm although its policy asks for a cold fit after one warm fit: it says so instead.
    assert (fit["kind"], fit["continued_from"], fit["cold_fit_due"]) == ("warm", "current", True)
    assert fit["evaluations"] >= fit["iterations"] + 1 >= 2  # a warm fit's passes over the gold, for the figures
    assert fit["gradients"] == fit["iterations"]  # at the start and at each step kept but the last
    first_fit = RetrainJob.objects.get(model_version=first).result["fit"]
    assert first_fit["cold_fit_due"] is False  # crfsuite's own fit: its passes are not counted
    assert first_fit["evaluations"] is None and first_fit["gradients"] is None and first_fit["carried_steps"] is None

    base = cold_refit.fit_base(project.pk)
    assert model_store.base_models(project.pk) == [base]
    assert model_store.read(base, project_id=project.pk).fit_kind_ == "cold"
    # A base waiting: nothing more is fitted, nor a process started to fit one.
    assert cold_refit.fit_base(project.pk) is None and tasks.refit(project.pk) == "nothing to do"
    assert model_store.base_models(project.pk) == [base]

    import_documents(project=project, documents=notes[3:6], annotated=True)
    third = train_and_rank(project=project)
    fit = RetrainJob.objects.get(model_version=third).result["fit"]
    assert (fit["kind"], fit["continued_from"], fit["warm_fits_since_cold"]) == ("warm", "base", 1)
    assert third.n_documents == 21 and third.metrics["entity"]["f1"] > 0.6
    assert model_store.base_models(project.pk) == []  # a base starts one retrain


def test_a_base_changed_where_it_is_kept_or_of_other_settings_is_dropped_unused(seeded):
    from annotator.artifact_store import get_store
    from learning.services import cold_refit, model_store

    project, _ = seeded
    project.tagger = {"kind": "crf", "params": {"refit_every": 1}}
    project.save(update_fields=["tagger"])
    notes = generate_notes(50, seed=8)[40:]
    train_and_rank(project=project)
    # A base left by a refit: tampered with, it is refused and the retrain continues from the current model.
    model_store.save_base(project.pk, "not a tagger")
    [base] = model_store.base_models(project.pk)
    store = get_store()
    store.write(base, b"X" + store.read(base)[1:])
    import_documents(project=project, documents=notes[:3], annotated=True)
    version = train_and_rank(project=project)
    assert RetrainJob.objects.get(model_version=version).result["fit"]["continued_from"] == "current"
    assert model_store.base_models(project.pk) == []

    assert cold_refit.fit_base(project.pk) is not None
    project.tagger = {"kind": "crf", "params": {"refit_every": 1, "c2": 0.2}}  # settings changed meanwhile
    project.save(update_fields=["tagger"])
    import_documents(project=project, documents=notes[3:6], annotated=True)
    version = train_and_rank(project=project)
    assert RetrainJob.objects.get(model_version=version).result["fit"]["kind"] == "cold"
    assert model_store.base_models(project.pk) == []


def test_no_refit_starts_while_another_process_holds_the_projects_refit_lock(seeded):
    from learning.services import cold_refit, model_store

    project, _ = seeded
    project.tagger = {"kind": "crf", "params": {"refit_every": 1}}
    project.save(update_fields=["tagger"])
    train_and_rank(project=project)
    other = connections.create_connection("default")  # another process's session
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [cold_refit._LOCK_CLASS, project.pk])
            assert cursor.fetchone()[0]
        assert cold_refit._refit_under_way(project.pk)
        assert cold_refit.start(project.pk) is False and cold_refit.fit_base(project.pk) is None
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [cold_refit._LOCK_CLASS, project.pk])
    finally:
        other.close()
    assert not cold_refit._refit_under_way(project.pk) and model_store.base_models(project.pk) == []


def test_a_model_saved_before_features_had_a_scope_is_still_continued_from(seeded):
    from annotator.artifact_store import get_store
    from learning.core import artifacts
    from learning.services.model_store import artifact_key

    project, _ = seeded
    first = train_and_rank(project=project)
    older = load_model(first.artifact, project_id=project.pk)
    older = artifacts.unseal(artifacts.seal(older, key=b"k"), key=b"k")  # a copy of its own
    del older.__dict__["vocabulary_scope"]  # as pickled by the version before
    get_store().write(first.artifact, artifacts.seal(older, key=artifact_key(project.pk)))

    second = train_and_rank(project=project)
    fit = RetrainJob.objects.get(model_version=second).result["fit"]
    assert (fit["kind"], fit["continued_from"]) == ("warm", "current")
    assert load_model(second.artifact, project_id=project.pk).vocabulary_scope == str(project.pk)


def test_a_model_saved_under_another_refit_policy_is_continued_from_under_the_projects(seeded):
    from annotator.artifact_store import get_store
    from learning.core import artifacts
    from learning.core.taggers.crf import CRFTagger
    from learning.services.model_store import artifact_key

    project, _ = seeded
    first = train_and_rank(project=project)
    older = load_model(first.artifact, project_id=project.pk)
    older = artifacts.unseal(artifacts.seal(older, key=b"k"), key=b"k")  # a copy of its own
    older.warm_iterations, older.refit_every = 9, 3  # as saved by a version with other defaults
    get_store().write(first.artifact, artifacts.seal(older, key=artifact_key(project.pk)))

    second = train_and_rank(project=project)
    fit = RetrainJob.objects.get(model_version=second).result["fit"]
    assert (fit["kind"], fit["continued_from"]) == ("warm", "current")  # not refitted from zero
    model = load_model(second.artifact, project_id=project.pk)
    assert (model.warm_iterations, model.refit_every) == (CRFTagger().warm_iterations, CRFTagger().refit_every)
    assert fit["iterations"] <= model.warm_iterations


def test_a_retrain_continues_from_a_copy_of_the_model_this_process_holds_and_scores_with_the_one_it_trained(
        seeded, monkeypatch):
    import numpy as np

    from learning.services import model_store

    project, _ = seeded
    first = train_and_rank(project=project)
    kept = load_model(first.artifact, project_id=project.pk)  # what this process's scoring holds
    attributes, state, transition, lexicon = (kept.attributes_, kept.state_weights_.copy(),
                                              kept.transition_weights_.copy(), kept.lexicon_)
    original, reads = model_store.read, []

    def counted(artifact, **kwargs):
        reads.append(artifact)
        return original(artifact, **kwargs)

    monkeypatch.setattr(model_store, "read", counted)
    import_documents(project=project, documents=generate_notes(48, seed=11)[40:], annotated=True)

    second = train_and_rank(project=project)
    assert RetrainJob.objects.get(model_version=second).result["fit"]["continued_from"] == "current"
    assert first.artifact not in reads  # not read again: copied from the one in memory
    assert second.artifact not in reads  # scored with the model as trained, not read back
    new = load_model(second.artifact, project_id=project.pk)
    assert not np.array_equal(new.transition_weights_, transition)  # the fit moved the weights
    assert kept.attributes_ is attributes and kept.lexicon_ is lexicon
    assert np.array_equal(kept.state_weights_, state) and np.array_equal(kept.transition_weights_, transition)


def test_a_retrain_after_the_process_prepared_the_next_fit_passes_over_the_new_gold_only(seeded, monkeypatch):
    from learning.core.taggers import crf
    from learning.services import model_store

    project, _ = seeded
    notes = generate_notes(50, seed=8)[40:]
    train_and_rank(project=project)  # cold (crfsuite)
    import_documents(project=project, documents=notes[:2], annotated=True)
    warm = train_and_rank(project=project)
    assert RetrainJob.objects.get(model_version=warm).result["fit"]["prepared"] is False  # nothing prepared
    # While idle, the process prepares the next fit from the model it trained last (only from that one).
    assert model_store.prepare_next_fit() and not model_store.prepare_next_fit()
    import_documents(project=project, documents=notes[2:3], annotated=True)
    # The gold lexicon marks several of these small synthetic notes anew: let them all be passed over again.
    monkeypatch.setattr(crf, "KNOWN_START_MAX_SHARE", 1.0)
    prepared = train_and_rank(project=project)
    fit = RetrainJob.objects.get(model_version=prepared).result["fit"]
    assert (fit["kind"], fit["continued_from"], fit["prepared"]) == ("warm", "current", True)
    assert fit["evaluations"] >= fit["iterations"] and fit["gradients"] == fit["iterations"] - 1
    assert prepared.n_documents == 18 and prepared.metrics["entity"]["f1"] > 0.6
