"""The loop's work, stage by stage: train a project's tagger; evaluate it, and score a piece of the pool
with it, side by side; publish the model and the ranking together.

Each stage reads what the previous one saved on the job (the trained model is a file, the scores are rows
of a staged ranking), so the stages can run in different worker processes — and a stage that is run again
after a crash finds its own earlier output and replaces it. Nothing the annotators see changes before
:func:`publish`, which switches model, ranking and silver sentences in one transaction: a failed or
interrupted retrain leaves the current model and ranking in place.

``train_and_rank`` runs all stages in this process (the command line and the first start use it);
``learning.tasks`` runs them on Celery workers, the pool scored in shards.

Saved models (``learning.services.model_store``) are signed with a key of their project and verified before
they are unpickled: a file changed on disk is refused, never run. A retrain whose previous model is refused
compares without it and records why; a job whose own model is refused fails, and the current model and
ranking stay in place.

A retrain of the live loop's CRF continues from the current model, or from the base that a cold refit beside
the loop left for it (``learning.services.cold_refit``); it says in its result when a cold fit is due.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any, Sequence

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotator.models import Document, Project
from annotator.selectors import (
    annotator_hours, gold_documents, scored_document_ids, submission_count, unlabelled_pool, unlabelled_pool_ids,
)
from annotator.services.imports import content_hash
from annotator.services.notify import notify_project
from annotator.services.ranking import activate_ranking, add_scores, stage_ranking
from corpus.span_json import read_span, write_span
from corpus.types import Document as CorpusDocument
from learning.core import artifacts
from learning.core.metrics import mcnemar_tokens
from learning.core.ordering import random_scores
from learning.core.params import defaults
from learning.core.pre_annotation import pre_annotations_many
from learning.core.recall_bias import stored_thresholds
from learning.core.self_training import POLICY_PARAMETERS
from learning.core.strategies import Strategy
from learning.core.training import (
    CROSS_FIT, CROSS_FIT_FOLDS, TrainedModel, evaluate_model, fit_model, tuned_recall_bias,
)
from learning.models import ModelVersion, RetrainJob, SilverSentence
from learning.selectors.loop import loop_recall_bias, loop_tagger
from learning.selectors.measured_costs import project_strategy
from learning.services import cold_refit, jobs, model_store
from learning.services.completion import complete_before_publishing, complete_first_records
from learning.services.model_store import load_model
from learning.services.ordering import ranking_order

log = logging.getLogger(__name__)

#: Pool documents per scoring task.
SHARD_DOCUMENTS = int(os.environ.get("DEIDLOOP_SHARD_DOCUMENTS", "250"))
#: A pool of at least this many full shards ends in shorter ones (``shards``).
SHORT_TAIL_FROM = 4


def shards(document_ids: Sequence[int], size: int | None = None) -> list[list[int]]:
    """``document_ids`` in order, cut into scoring tasks of ``size`` documents (default ``SHARD_DOCUMENTS``).

    Worker processes take the tasks as they come free, so the scoring ends when the last task taken ends,
    while the other processes wait: on average half a task. A pool of at least ``SHORT_TAIL_FROM`` full tasks
    therefore ends in four short ones, of the last documents that would have filled one full task and a part
    of another (between one and two tasks' worth, each short task a quarter of it): the processes end closer
    together, for two or three tasks more. A smaller pool keeps its tasks whole.
    """
    size = SHARD_DOCUMENTS if size is None else size
    ids = list(document_ids)
    whole = len(ids) // size
    if whole < SHORT_TAIL_FROM:
        return [ids[i:i + size] for i in range(0, len(ids), size)]
    cut = (whole - 1) * size  # what is left: one task's worth or more, less than two
    quarter = -(-(len(ids) - cut) // 4)
    return ([ids[i:i + size] for i in range(0, cut, size)]
            + [ids[i:i + quarter] for i in range(cut, len(ids), quarter)])


class NothingToLearn(Exception):
    """The project has no submitted pool gold yet."""


# Training -------------------------------------------------------------------------------------------------

def train(job: RetrainJob, *, seed: int = 0) -> list[list[int]]:
    """Fit and save the project's tagger; stage an empty ranking. Returns the shards to score.

    The model is evaluated by :func:`evaluate`, beside the scoring of the shards; only the recall bias's
    thresholds, which the scoring's suggestions need, are tuned here on the evaluation documents."""
    project = Project.objects.get(pk=job.project_id)
    gold = gold_documents(project=project, role=Document.Role.POOL)
    if not gold:
        raise NothingToLearn("there is no submitted gold in the pool to learn from yet")
    kind, params, factory = loop_tagger(project, seed=seed)
    jobs.notify(job, "training", f"Training the {kind.upper()} on {len(gold)} documents…")

    unlabelled, policy, continued = None, {}, "nothing"
    if project.self_training and len(gold) >= 2:
        unlabelled, policy = _self_training_inputs(project, seed)
    else:
        continued, previous = _tagger_to_continue(project, factory)
        if previous is not None:
            factory = lambda: previous  # noqa: E731 - fitted once, by fit_model
    beta = loop_recall_bias(project)
    with jobs.fitting(job, characters=sum(len(d.text) for d in (*gold, *(unlabelled or ())))):
        model = fit_model(
            gold, tagger_factory=factory, seed=seed, recall_bias_beta=beta, recall_bias_tuning=CROSS_FIT,
            unlabelled_docs=unlabelled, dev_fraction=policy.pop("dev_fraction", 0.2), self_training=policy,
        )
    # Fitting touches no table and may take minutes: a database restarted meanwhile has left this thread's
    # connection dead. Drop it now, so that the model just fitted is kept, instead of the first query after
    # the fit failing and the job training again from scratch as its next attempt.
    jobs.drop_broken_connection()
    tagger, silver, train_seconds = model.tagger, model.silver, model.train_seconds
    if beta is not None:
        # Tuned on the evaluation documents; the figures, cross-fitted, come with the evaluation.
        evaluation = gold_documents(project=project, role=Document.Role.EVALUATION)
        model.recall_bias = tuned_recall_bias(tagger, evaluation, beta) if evaluation else None
    self_training = _self_training_summary(model, unlabelled)

    strategy, strategy_note = project_strategy(project)
    artifact = model_store.save_job_model(job, tagger)
    model_store.keep(artifact, tagger, project_id=project.pk)  # this process scores with it as it is
    pool_ids = unlabelled_pool_ids(project=project)
    n_tokens = sum(len(tokens) for tokens in tagger.tokens(gold))  # the fit's own, not tokenized again
    with transaction.atomic():
        locked = RetrainJob.objects.select_for_update().get(pk=job.pk)
        if locked.attempt != job.attempt:
            model_store.delete(artifact)
            raise jobs.Superseded(job.pk)
        ranking = stage_ranking(project=project, strategy=strategy.name,
                                strategy_params={**strategy.params, **strategy_note})
        locked.result = {
            "metrics": {}, "evaluation": {"done": False, "recall_bias_beta": beta},
            "train_seconds": train_seconds, "labels": list(tagger.labels_),
            "n_documents": len(gold), "n_tokens": n_tokens,
            "annotator_hours": annotator_hours(project=project), "gold": [d.name for d in gold],
            "strategy": {"name": strategy.name, "kind": strategy.kind, "params": dict(strategy.params),
                         **strategy_note},
            "recall_bias": recall_bias_summary(project, model), "self_training": self_training,
            "silver": _silver_rows(silver), "tagger": {"kind": kind, "params": params}, "seed": seed,
            "warnings": [], "fit": _fit_summary(tagger, continued, len(gold)),
        }
        locked.artifact = str(artifact)
        locked.ranking_id = ranking.pk
        locked.pool_size = len(pool_ids)
        locked.status = RetrainJob.Status.SCORING
        locked.trained_at = timezone.now()
        parts = shards(pool_ids)
        locked.shards = len(parts)
        locked.save()
    job.refresh_from_db()
    jobs.notify(job, "scoring", f"Model trained in {train_seconds:.0f} s; scoring {len(pool_ids)} pool records…",
                done=0, total=len(pool_ids))
    return parts


# Evaluation -------------------------------------------------------------------------------------------------

def evaluated(job: RetrainJob) -> bool:
    """Has the job's model been evaluated (by :func:`evaluate`)? A job trained before evaluation became a
    stage of its own was evaluated with its training."""
    return bool((job.result or {}).get("evaluation", {"done": True}).get("done"))


def evaluate(job: RetrainJob) -> None:
    """Score the job's model on the project's evaluation documents — its metrics, the spans it predicts there
    (kept on the job, for the next model's comparison), McNemar's test against the current model and the
    recall bias's cross-fitted figures — and put them on the job's result. It runs beside the scoring of the
    pool (a task of the shards' chord): nothing the annotators see waits for it, and ``publish`` takes what it
    measured. Run again, it measures again and replaces what it put."""
    result = job.result
    project = Project.objects.get(pk=job.project_id)
    evaluation = gold_documents(project=project, role=Document.Role.EVALUATION)
    beta = (result.get("evaluation") or {}).get("recall_bias_beta")
    recall_bias = dict(result.get("recall_bias") or {})
    metrics: dict[str, Any] = {}
    spans: dict[str, list] = {}
    warnings: list[str] = []
    started = time.perf_counter()
    if evaluation:
        model = TrainedModel(tagger=load_model(job.artifact, project_id=job.project_id), train_documents=[],
                             dev_documents=[], train_seconds=0.0, recall_bias_tuning=CROSS_FIT)
        evaluate_model(model, evaluation, recall_bias_beta=beta if recall_bias else None, seed=result.get("seed", 0))
        metrics = dict(model.metrics)
        current = _current_model_spans(project, evaluation, warnings)
        if current is not None:
            current_pk, current_spans = current
            metrics["mcnemar_vs_previous"] = {
                "previous": current_pk, **mcnemar_tokens(evaluation, model.predicted, current_spans, model.eval_tokens)}
        if recall_bias and model.recall_bias_metrics is not None:
            recall_bias["metrics"] = model.recall_bias_metrics
        spans = {content_hash(d.text): [write_span(s) for s in p] for d, p in zip(evaluation, model.predicted)}
    jobs.drop_broken_connection()
    with transaction.atomic():
        locked = RetrainJob.objects.select_for_update().get(pk=job.pk)
        if locked.attempt != job.attempt or locked.status != RetrainJob.Status.SCORING:
            raise jobs.Superseded(job.pk)
        locked.result = {
            **locked.result, "metrics": metrics, "recall_bias": recall_bias,
            "warnings": [*locked.result.get("warnings", ()), *warnings],
            "evaluation": {"done": True, "recall_bias_beta": beta, "documents": len(evaluation),
                           "seconds": round(time.perf_counter() - started, 3)},
        }
        locked.evaluation_spans = spans
        locked.save(update_fields=["result", "evaluation_spans"])
    f1 = metrics.get("entity", {}).get("f1")
    if f1 is not None:
        jobs.notify(job, "evaluated", f"Entity F1 of the new model on {len(evaluation)} evaluation records: {f1:.3f}",
                    f1=f1, documents=len(evaluation))


def _current_model_spans(project: Project, evaluation, warnings: list[str]):
    """``(model id, spans per evaluation document)`` of the project's current model, for McNemar's test
    against the new one; None when there is no current model to compare with.

    A retrain keeps the spans its model predicted on the evaluation documents (``RetrainJob.evaluation_spans``,
    by text; a model saved before that keeps them itself, as ``evaluation_spans_``), so only documents added to
    the evaluation set since are predicted again, by the current model, read for that alone. A current model
    whose file fails verification is not loaded: the retrain goes on without the comparison and says why in
    ``warnings`` (kept on the job's result)."""
    current = ModelVersion.objects.filter(project=project, is_current=True).first()
    if current is None or not model_store.exists(current.artifact):
        return None
    kept = RetrainJob.objects.filter(model_version=current).values_list("evaluation_spans", flat=True).first()
    remembered = {key: [read_span(s) for s in spans] for key, spans in (kept or {}).items()}
    keys = [content_hash(d.text) for d in evaluation]
    missing = [i for i, key in enumerate(keys) if key not in remembered]
    if missing:
        try:
            tagger = load_model(current.artifact, project_id=project.pk)
            older = getattr(tagger, "evaluation_spans_", None) or {}
            remembered.update((key, list(older[key])) for key in keys if key in older)
            missing = [i for i, key in enumerate(keys) if key not in remembered]
            predicted = tagger.predict([evaluation[i] for i in missing]) if missing else []
        except artifacts.ArtifactRejected as error:
            log.error("model %s of project %s was refused and not loaded: %s", current.pk, project.pk, error)
            warnings.append(f"The previous model (#{current.pk}) was not compared with: {error}")
            return None
        except Exception as error:  # noqa: BLE001 - an unreadable old model only loses the comparison
            log.warning("could not compare with model %s: %s", current.pk, error)
            return None
        remembered.update((keys[i], p) for i, p in zip(missing, predicted))
    return current.pk, [remembered[key] for key in keys]


def _tagger_to_continue(project: Project, factory) -> tuple[str, Any | None]:
    """What the retrain continues from, when the tagger the project asks for starts warm (``warm_start``):
    the base a cold refit left for it (``"base"``), else a copy of the project's current model of its own
    (``model_store.to_continue``), when it is of the same kind and settings (``"current"``); ``("nothing",
    None)`` otherwise, and the fit starts from zero."""
    fresh = factory()
    if not getattr(fresh, "warm_start", False):
        return "nothing", None
    base = cold_refit.take_base(project.pk, fresh)
    if base is not None:
        return "base", base
    current = ModelVersion.objects.filter(project=project, is_current=True).first()
    if current is None or not model_store.exists(current.artifact):
        return "nothing", None
    try:
        previous = model_store.to_continue(current.artifact, project_id=project.pk)
    except Exception as error:  # noqa: BLE001 - a model that cannot be read is not continued from
        log.warning("model %s of project %s is not continued from: %s", current.pk, project.pk, error)
        return "nothing", None
    if not cold_refit.same_settings(previous, fresh):
        return "nothing", None
    return "current", cold_refit.placed_like(previous, fresh)


def recall_bias_summary(project: Project, model) -> dict[str, Any]:
    """What a model keeps of its recall bias (``{}`` without one): the project's β, the thresholds tuned on
    the evaluation documents and the cross-fitted scores of the suggestions decoded with them."""
    if model.recall_bias is None:
        return {}
    summary = {"beta": project.recall_bias_beta, **model.recall_bias.to_json(),
               "tuned_on": "evaluation", "reported": f"cross-fitted over {CROSS_FIT_FOLDS} folds at most"}
    if model.recall_bias_metrics is not None:
        summary["metrics"] = model.recall_bias_metrics
    return summary


def _fit_summary(tagger: Any, continued: str, n_documents: int) -> dict[str, Any]:
    """How the model was fitted (cold or warm, from what, in how many iterations and, warm, how many passes of
    the objective over the documents, how many of them went on to its gradient, how many curvature steps of
    the fit before it it started from and whether its first pass was prepared while the worker was idle) and
    whether its refit policy asks for a cold fit beside the loop now."""
    due = getattr(tagger, "cold_fit_due", None)
    warm = getattr(tagger, "fit_kind_", "cold") == "warm"
    return {"kind": "warm" if warm else "cold", "iterations": getattr(tagger, "fit_iterations_", None),
            "evaluations": getattr(tagger, "fit_evaluations_", None),
            "gradients": getattr(tagger, "fit_gradients_", None),
            "carried_steps": getattr(tagger, "fit_carried_steps_", None),
            "prepared": getattr(tagger, "fit_prepared_", None),
            "continued_from": continued if warm else "nothing",
            "warm_fits_since_cold": getattr(tagger, "warm_fits_", 0),
            "cold_fit_due": bool(due is not None and getattr(tagger, "cold_refit", "inline") == "background"
                                 and due(n_documents))}


def unscored_shards(job: RetrainJob) -> list[list[int]]:
    """The pool documents a resumed job still has to score, in shards."""
    done = scored_document_ids(ranking_id=job.ranking_id)
    todo = [i for i in unlabelled_pool_ids(project=job.project) if i not in done]
    return shards(todo)


def _self_training_inputs(project: Project, seed: int) -> tuple[list[CorpusDocument], dict[str, Any]]:
    """A random sample of the pool to self-train from (ALGORITHMS.md §2), and the project's policy as
    arguments of ``learning.core.training.fit_model`` (``dev_fraction``) and of ``self_train``."""
    policy = {**defaults(POLICY_PARAMETERS), **(project.self_training_policy or {})}
    limit = int(policy["max_pool_documents"])
    ids, pool = unlabelled_pool(project=project)
    if len(pool) > limit:
        keep = sorted(np.random.default_rng(seed).choice(len(pool), size=limit, replace=False).tolist())
        ids, pool = [ids[i] for i in keep], [pool[i] for i in keep]
    unlabelled = [CorpusDocument(document.text, (), str(document_id)) for document_id, document in zip(ids, pool)]
    return unlabelled, {
        "dev_fraction": float(policy["dev_fraction"]),
        "selection": bool(policy["selection"]),
        "target_precision": float(policy["target_precision"]),
        "target_recall": float(policy["target_recall"]),
        "max_iterations": int(policy["iterations"]),
    }


def _self_training_summary(model, unlabelled) -> dict[str, Any]:
    outcome = model.self_training
    if outcome is None:
        return {}
    return {"pool_documents": len(unlabelled), "dev_documents": len(model.dev_documents),
            "silver_sentences": len(outcome.silver), "stopped": outcome.stopped,
            "best_iteration": outcome.best_iteration, "history": outcome.history}


def _silver_rows(silver: Sequence[CorpusDocument]) -> list[list[Any]]:
    """Silver sentences as [document id, start, end, spans] in the offsets of their pool document."""
    rows = []
    for sentence in silver:
        offset, document_id = int(sentence.meta["offset"]), int(sentence.meta["source"])
        rows.append([document_id, offset, offset + len(sentence.text),
                     [write_span(s, shift=offset) for s in sentence.spans]])
    return rows


# Scoring ----------------------------------------------------------------------------------------------------

def score(job: RetrainJob, document_ids: Sequence[int]) -> int:
    """Score the given pool documents with the job's model and store them in its staged ranking.

    Documents taken by an annotator since the job started are skipped. Returns how many were stored.
    """
    result = job.result
    tagger = load_model(job.artifact, project_id=job.project_id)
    labels = list(result["labels"])
    strategy = Strategy(result["strategy"]["name"], result["strategy"]["kind"], result["strategy"]["params"])
    thresholds = stored_thresholds(result.get("recall_bias"))
    ids, documents = unlabelled_pool(project=job.project, ids=list(document_ids))
    if not ids:
        return 0
    marginals = tagger.predict_marginals(documents)
    jobs.drop_broken_connection()  # as after a fit: a restart during the prediction must not cost the shard
    if strategy.kind == "random":
        scores = random_scores(job.pk, ids)
    else:
        scores = strategy.score_many(marginals, labels.index("O")).tolist()
    shown = pre_annotations_many(tagger.tokens(documents), marginals, labels, recall_bias=thresholds)
    entries = [(document_id, float(value), suggestions) for document_id, value, suggestions in zip(ids, scores, shown)]
    return add_scores(ranking_id=job.ranking_id, entries=entries)


# Publishing -------------------------------------------------------------------------------------------------

def publish(job_id: int, attempt: int) -> ModelVersion | None:
    """Make the job's model current and its ranking the one served, in one transaction; end the job.

    Returns None when the attempt is stale or the job already ended (a repeated message). A job whose model
    is not evaluated yet (its evaluation is a task of the chord whose body publishes: it only happens when
    that task's message was lost) is evaluated first, here.
    """
    pending = jobs.current(job_id, attempt, RetrainJob.Status.SCORING)
    if pending is not None and not evaluated(pending):
        log.warning("retrain job %s attempt %s: its model was not evaluated yet; evaluating it before publishing",
                    job_id, attempt)
        evaluate(pending)
    with transaction.atomic():
        job = RetrainJob.objects.select_for_update().filter(
            pk=job_id, attempt=attempt, status=RetrainJob.Status.SCORING
        ).first()
        if job is None:
            return None
        result = job.result
        scoring_seconds = (timezone.now() - job.trained_at).total_seconds() if job.trained_at else None
        ModelVersion.objects.filter(project_id=job.project_id, is_current=True).update(is_current=False)
        version = ModelVersion.objects.create(
            project_id=job.project_id, tagger_kind=result["tagger"]["kind"],
            tagger_params=result["tagger"]["params"], status=ModelVersion.Status.READY, is_current=True,
            gold_document_ids=result["gold"], silver_sentences=len(result["silver"]),
            n_documents=result["n_documents"], n_tokens=result["n_tokens"],
            annotator_hours=result["annotator_hours"], metrics=result["metrics"], artifact=job.artifact,
            train_seconds=result["train_seconds"], scoring_seconds=scoring_seconds, pool_size=job.pool_size,
            choices={key: result[key] for key in ("strategy", "recall_bias", "self_training", "seed")},
        )
        SilverSentence.objects.filter(project_id=job.project_id).delete()
        still_in_pool = set(Document.objects.filter(
            pk__in={row[0] for row in result["silver"]}, status=Document.Status.POOL
        ).values_list("pk", flat=True))
        SilverSentence.objects.bulk_create(
            [SilverSentence(project_id=job.project_id, document_id=document_id, model_version=version,
                            start=start, end=end, spans=spans)
             for document_id, start, end, spans in result["silver"] if document_id in still_in_pool],
            batch_size=2000,
        )
        # By score; when the project asks for diverse batches, each batch spread across stylometric clusters.
        project = Project.objects.get(pk=job.project_id)
        order = ranking_order(project, job.ranking_id)
        complete_before_publishing(project=project, ranking_id=job.ranking_id, order=order)
        activate_ranking(ranking_id=job.ranking_id, model_version_id=version.pk, order=order)
        job.status = RetrainJob.Status.DONE
        job.model_version = version
        job.finished_at = timezone.now()
        job.owner = ""
        job.save(update_fields=["status", "model_version", "finished_at", "owner"])
    # Annotators hear of the ranking as soon as it is served; what follows only prepares what comes later.
    f1 = result["metrics"].get("entity", {}).get("f1")
    notify_project(
        project_id=job.project_id, kind="ranking_ready",
        text=f"A new model is ready ({version.n_documents} documents"
        + (f", entity F1 {f1:.3f}" if f1 is not None else "") + "); the next record comes from its ranking.",
        data={"job": job.pk, "stage": "done", "model_version": version.pk},
    )
    model_store.prune(job.project_id)
    complete_first_records(project_id=job.project_id, ranking_id=job.ranking_id)
    _score_clusters(job.project_id)
    return version


def _score_clusters(project_id: int) -> None:
    """The new model's scores on the project's stylometric clusters, stored for the clusters page (which
    never loads a model itself). A failure only leaves the page without scores."""
    from learning.services.clustering import store_cluster_scores  # clustering imports this module

    try:
        store_cluster_scores(project=Project.objects.get(pk=project_id))
    except Exception:  # noqa: BLE001 - the model is published; the clusters page says the scores are missing
        log.exception("could not score the clusters of project %s with its new model", project_id)


# All in this process ---------------------------------------------------------------------------------------

def run_here(job: RetrainJob, *, seed: int = 0) -> ModelVersion | None:
    """Claim ``job`` and run every stage in this process (the pool scored as one piece)."""
    claimed = jobs.claim(job.pk)
    if claimed is None:
        return None
    try:
        with jobs.lease(claimed):
            train(claimed, seed=seed)
            claimed.refresh_from_db()
            evaluate(claimed)
            score(claimed, unlabelled_pool_ids(project=claimed.project))
            return publish(claimed.pk, claimed.attempt)
    except Exception as error:
        jobs.fail(claimed.pk, claimed.attempt, describe(error))
        if isinstance(error, NothingToLearn):
            return None
        raise


def train_and_rank(*, project: Project, seed: int = 0, user=None) -> ModelVersion | None:
    """Retrain ``project`` now, in this process; None when there is no gold yet or a retrain is under way."""
    if not submission_count(project=project):
        return None
    job, created = jobs.request_retrain(project=project, reason=RetrainJob.Reason.COMMAND, user=user, force=True)
    if not created:
        return None
    return run_here(job, seed=seed)


def describe(error: BaseException) -> str:
    return str(error) if isinstance(error, NothingToLearn) else f"{type(error).__name__}: {error}"
