"""Training a project's tagger on its gold, measuring it, and ranking the pool with it.

The work happens outside any transaction (training takes a while); the results are written at the end
in one transaction, so a failed or interrupted run leaves the current model and ranking in place.
"""
from __future__ import annotations

import logging
import pickle
import time

import numpy as np

from django.conf import settings
from django.db import transaction

from annotator.models import Document, Project
from annotator.selectors import gold_documents, unlabelled_pool
from annotator.services.notify import notify_project
from annotator.services.ranking import publish_ranking
from learning.core.metrics import evaluate
from learning.core.pre_annotation import pre_annotations
from learning.core.registry import make_tagger
from learning.core.strategies import get_strategy
from learning.core.text import tokenize
from learning.models import ModelVersion

log = logging.getLogger(__name__)


def train_and_rank(*, project: Project, seed: int = 0) -> ModelVersion | None:
    """Fit the project's tagger on all submitted pool gold, evaluate it, rank the unlabelled pool.

    Returns the new current model version, or None when there is no gold to learn from yet.
    """
    train = gold_documents(project=project, role=Document.Role.POOL)
    if not train:
        return None
    evaluation = gold_documents(project=project, role=Document.Role.EVALUATION)
    kind, params = project.tagger.get("kind", "crf"), dict(project.tagger.get("params", {}))
    version = ModelVersion.objects.create(
        project=project, tagger_kind=kind, tagger_params=params, n_documents=len(train),
        n_tokens=sum(len(tokenize(document.text)) for document in train),
    )
    try:
        started = time.perf_counter()
        tagger = make_tagger(kind, seed=seed, **params).fit(train)
        train_seconds = time.perf_counter() - started
        metrics = evaluate(evaluation, tagger.predict(evaluation)) if evaluation else {}

        ids, pool = unlabelled_pool(project=project)
        marginals = tagger.predict_marginals(pool)
        labels = list(tagger.labels_)
        strategy = get_strategy(project.strategy, **project.strategy_params)
        if strategy.kind == "random":
            scores = np.random.default_rng(seed).random(len(pool))
        else:
            scores = strategy.score_many(marginals, labels.index("O")) if pool else []
        entries = [
            (document_id, float(score), pre_annotations(tokenize(document.text), marginal, labels))
            for document_id, document, marginal, score in zip(ids, pool, marginals, scores)
        ]
        artifact = settings.DATA_DIR / "models" / f"{version.pk}.pickle"
        artifact.parent.mkdir(parents=True, exist_ok=True)
        artifact.write_bytes(pickle.dumps(tagger))
    except Exception as error:
        ModelVersion.objects.filter(pk=version.pk).update(status=ModelVersion.Status.FAILED, error=repr(error))
        raise

    with transaction.atomic():
        ModelVersion.objects.filter(project=project, is_current=True).update(is_current=False)
        ModelVersion.objects.filter(pk=version.pk).update(
            status=ModelVersion.Status.READY, is_current=True, metrics=metrics, train_seconds=train_seconds,
            artifact=str(artifact), gold_document_ids=[document.name for document in train],
        )
        publish_ranking(
            project=project, model_version_id=version.pk, strategy=strategy.name,
            strategy_params=dict(strategy.params), entries=entries,
        )
    version.refresh_from_db()
    f1 = metrics.get("entity", {}).get("f1")
    notify_project(
        project_id=project.pk, kind="ranking_ready",
        text=f"A new model is ready ({len(train)} documents" + (f", entity F1 {f1:.3f}" if f1 is not None else "")
        + "); the next record comes from its ranking.",
    )
    return version
