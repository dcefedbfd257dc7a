"""A project's de-identification model: the ensemble of the CRF and the BiLSTM-CRF
(``learning.core.taggers.ensemble``), trained by a worker on all the project's gold when a lead asks for it.

On MEDDOCAN (``bench/ensemble.py``) the ensemble leaks far fewer PHI tokens than the CRF at the same
precision, but the BiLSTM-CRF takes about 15 minutes to train on one CPU thread where the CRF takes one, so the
loop keeps ranking with its CRF and the ensemble is trained apart, for the final de-identification (a project
whose ``deid_tagger`` is ``{"kind": "ensemble"}`` de-identifies new text with its newest finished one,
``deid.services.deidentify``). It is trained and scored as the loop's model is (``learning.core.training``):
on the submitted pool gold, evaluated on the evaluation documents, its recall-bias thresholds tuned on them
for the project's β and its biased scores cross-fitted. A newer model replaces the older ones and their files.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any, Callable

from django.db import transaction
from django.utils import timezone

from annotator.models import AuditEvent, Document, Project
from annotator.selectors import gold_documents
from annotator.services.audit import record_event
from learning.core.taggers.ensemble import EnsembleTagger
from learning.core.training import CROSS_FIT, train_and_evaluate
from learning.models import DeidModel
from learning.selectors.loop import loop_recall_bias
from learning.services import jobs, model_store
from learning.services.retrain import recall_bias_summary

log = logging.getLogger(__name__)

#: A de-identification model queued or training for longer than this is taken for dead (its worker crashed),
#: so a lead may ask for a new one (the BiLSTM-CRF alone takes about 15 minutes on MEDDOCAN's 500 records).
STALE_AFTER = timedelta(hours=6)


class DeidModelError(Exception):
    """A de-identification model cannot be trained (no gold yet)."""


def deid_tagger(project: Project) -> tuple[str, dict[str, Any], Callable[[], Any]]:
    """The tagger a project's de-identification model trains (``learning.models.DeidModel``): the ensemble of
    the CRF — with the project's CRF parameters and gazetteers, as its loop trains it — and the BiLSTM-CRF, its
    parameters (``weights``, ``member_params`` by member) over those of ``project.deid_tagger["params"]``."""
    params = dict((project.deid_tagger or {}).get("params", {}))
    given = params.pop("member_params", {}) or {}
    crf = dict(project.tagger.get("params", {})) if project.tagger.get("kind", "crf") == "crf" else {}
    if project.gazetteers:
        crf["gazetteers"] = project.gazetteers
    members = {"crf": {**crf, **given.get("crf", {})}, "flair": dict(given.get("flair", {}))}
    weights = params.pop("weights", None)
    factory = partial(EnsembleTagger, members=tuple(members), member_params=members,
                      weights=tuple(weights) if weights else None, **params)
    return "ensemble", {"member_params": members, "weights": weights, **params}, factory


def request_deid_model(*, project: Project, user=None, request=None) -> tuple[DeidModel, bool]:
    """A queued de-identification model of ``project``, and whether it is new (False: one is queued or
    training already); a new one is audited as the user's edit of the project."""
    active = DeidModel.objects.filter(
        project=project, status__in=[DeidModel.Status.QUEUED, DeidModel.Status.RUNNING],
        created_at__gte=timezone.now() - STALE_AFTER,
    ).order_by("-created_at").first()
    if active is not None:
        return active, False
    model = DeidModel.objects.create(project=project, requested_by=user)
    record_event(user=user, action=AuditEvent.Action.EDIT, project=project, obj=project, request=request,
                 detail={"deid_model_requested": model.pk})
    return model, True


def run_deid_model(model_id: int, *, seed: int = 0) -> DeidModel | None:
    """Train a queued de-identification model; None when another process took it already (a repeated message).

    A failure is stored on the row (failed, with its message): the project keeps its previous model."""
    claimed = DeidModel.objects.filter(pk=model_id, status=DeidModel.Status.QUEUED).update(
        status=DeidModel.Status.RUNNING, started_at=timezone.now())
    if not claimed:
        return None
    row = DeidModel.objects.select_related("project").get(pk=model_id)
    try:
        _train(row, seed=seed)
    except Exception as error:  # noqa: BLE001 - every failure ends the row; the page shows the message
        jobs.drop_broken_connection()
        log.exception("de-identification model %s of project %s failed", model_id, row.project_id)
        message = str(error) if isinstance(error, DeidModelError) else "training failed on the server"
        DeidModel.objects.filter(pk=model_id).update(status=DeidModel.Status.FAILED, error=message,
                                                     finished_at=timezone.now())
    row.refresh_from_db()
    return row


def _train(row: DeidModel, *, seed: int) -> None:
    project = row.project
    gold = gold_documents(project=project, role=Document.Role.POOL)
    if not gold:
        raise DeidModelError("there is no submitted gold in the pool to learn from yet")
    evaluation = gold_documents(project=project, role=Document.Role.EVALUATION)
    kind, params, factory = deid_tagger(project)
    model = train_and_evaluate(gold, evaluation, tagger_factory=factory, seed=seed,
                               recall_bias_beta=loop_recall_bias(project), recall_bias_tuning=CROSS_FIT)
    jobs.drop_broken_connection()  # a database restarted during the fit must not cost the model
    artifact = model_store.save_deid_model(row, model.tagger)
    with transaction.atomic():
        DeidModel.objects.filter(pk=row.pk).update(
            status=DeidModel.Status.DONE, tagger_kind=kind, tagger_params=params,
            gold_document_ids=[d.name for d in gold], n_documents=len(gold), metrics=model.metrics,
            choices={"recall_bias": recall_bias_summary(project, model)}, artifact=artifact,
            train_seconds=model.train_seconds, error="", finished_at=timezone.now(),
        )
        older = DeidModel.objects.filter(project=project, created_at__lt=row.created_at).exclude(
            status__in=[DeidModel.Status.QUEUED, DeidModel.Status.RUNNING])
        for name in older.exclude(artifact="").values_list("artifact", flat=True):
            transaction.on_commit(partial(model_store.delete, name))
        older.delete()
