"""Simulations on a project's own annotated documents: what Random and the other strategies would have
reached with the same gold, so a lead can compare the live curve with them (ALGORITHMS.md §1, §5)."""
from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from annotator.models import Document, Project
from annotator.selectors import gold_documents
from annotator.services.notify import notify_project
from learning.core.registry import live_params, tagger_factory
from learning.core.simulation import simulate
from learning.core.strategies import get_strategy
from learning.models import SimulationRun
from learning.selectors.loop import project_settings

#: Progress is written and announced at most this often.
PROGRESS_SECONDS = 1.0


class SimulationError(ValueError):
    """A simulation cannot run as asked; the message says why."""


def request_simulation(
    *, project: Project, user, strategies: list[str], batch_sizes: list[int], initial: int, iterations: int,
    runs: int, seed: int = 0,
) -> SimulationRun:
    """Check the request against the project's data and store it (queued)."""
    if not strategies:
        raise SimulationError("choose at least one strategy")
    for name in strategies:
        get_strategy(name)  # raises UnknownStrategyError (a ValueError) with the accepted names
    if not batch_sizes or any(size < 1 for size in batch_sizes):
        raise SimulationError("batch sizes must be positive whole numbers")
    if initial < 1 or iterations < 1 or runs < 1:
        raise SimulationError("initial documents, iterations and runs must each be at least 1")
    n_gold = len(gold_documents(project=project, role=Document.Role.POOL))
    if n_gold <= initial:
        raise SimulationError(f"the project has {n_gold} annotated pool documents; a simulation starting from "
                              f"{initial} needs more than that")
    if not gold_documents(project=project, role=Document.Role.EVALUATION):
        raise SimulationError("the project has no annotated evaluation documents to measure the curves on")
    return SimulationRun.objects.create(
        project=project, requested_by=user if getattr(user, "pk", None) else None, strategies=list(strategies),
        batch_sizes=sorted(set(batch_sizes)), initial=initial, iterations=iterations, runs=runs, seed=seed,
        tagger=dict(project.tagger), progress={"done": 0, "total": 0, "text": "queued"},
    )


def run_simulation(run_id: int) -> SimulationRun | None:
    """Run a queued simulation (None if another process took it or it already ended)."""
    with transaction.atomic():
        claimed = SimulationRun.objects.filter(pk=run_id, status=SimulationRun.Status.QUEUED).update(
            status=SimulationRun.Status.RUNNING, started_at=timezone.now()
        )
    if not claimed:
        return None
    run = SimulationRun.objects.select_related("project").get(pk=run_id)
    try:
        train = gold_documents(project=run.project, role=Document.Role.POOL)
        evaluation = gold_documents(project=run.project, role=Document.Role.EVALUATION)
        kind = run.tagger.get("kind", "crf")
        factory = tagger_factory(kind, seed=run.seed, **live_params(kind, run.tagger.get("params", {})),
                                 **project_settings(run.project, kind))
        results: dict[str, dict] = {}
        sizes = list(run.batch_sizes)
        last = [0.0]

        def progress(index: int, event: dict) -> None:
            now = time.monotonic()
            total = event["total"] * len(sizes)
            done = event["done"] + index * event["total"]
            if now - last[0] < PROGRESS_SECONDS and done < total:
                return
            last[0] = now
            text = (f"batch {sizes[index]}: {event['strategy']} run {event['run'] + 1}, {event['docs']} documents, "
                    f"F1 {event['f1']:.3f}")
            SimulationRun.objects.filter(pk=run.pk).update(progress={"done": done, "total": total, "text": text})
            notify_project(project_id=run.project_id, kind="simulation_progress", text=text,
                           data={"simulation": run.pk, "done": done, "total": total})

        for index, batch in enumerate(sizes):
            results[str(batch)] = simulate(
                train, evaluation, tagger_factory=factory, strategies=run.strategies, batch=batch,
                initial=run.initial, iterations=run.iterations, runs=run.runs, seed=run.seed,
                progress=lambda event, index=index: progress(index, event),
            )
    except Exception as error:
        SimulationRun.objects.filter(pk=run.pk).update(
            status=SimulationRun.Status.FAILED, error=f"{type(error).__name__}: {error}", finished_at=timezone.now()
        )
        notify_project(project_id=run.project_id, kind="simulation_progress", text=f"The simulation failed: {error}",
                       data={"simulation": run.pk, "stage": "failed"})
        raise
    SimulationRun.objects.filter(pk=run.pk).update(
        status=SimulationRun.Status.DONE, results=results, finished_at=timezone.now(),
        progress={"done": 1, "total": 1, "text": "done"},
    )
    notify_project(project_id=run.project_id, kind="simulation_done", text="The simulation has finished.",
                   data={"simulation": run.pk, "stage": "done"})
    run.refresh_from_db()
    return run
