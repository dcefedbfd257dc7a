"""Cold refits beside the loop, never in its way.

A retrain continues from the current model for a few iterations (``warm_start``), which takes seconds; so
that the model never drifts far from what a fit from zero would give, the tagger's refit policy asks for a
cold fit every so often (``CRFTagger.cold_fit_due``). Fitting hundreds of records from zero takes a minute or
more, and a retrain that did it would hold the next record's ranking that long. The live loop's CRF therefore
refits in the background (``cold_refit="background"``): the retrain stays warm and asks for a *base* — a
tagger of the same settings fitted from zero on the gold of that moment — and the next retrain continues
from the base instead of the current model, fitting warm on whatever gold arrived meanwhile.

The fit runs in a process of its own (``manage.py fit_base``), started by a worker task that returns at once
(:func:`start`): it never holds one of the worker's pool processes, which score the loop's shards, and it runs
at a low CPU priority (nice :data:`BACKGROUND_NICENESS`), so that it yields to the loop's own work. It belongs
to the worker's process group, so it ends with the worker.

At most one base is fitted per project at a time (a PostgreSQL advisory lock, checked before a process is
started and taken by the process), and none while one is waiting to be used; a base is used once. A base that
fails verification, or whose settings are no longer the project's, is deleted unused.
"""
from __future__ import annotations

import logging
import shlex
import subprocess
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from django.conf import settings
from django.db import connection

from annotator.models import Document, Project
from annotator.selectors import gold_documents
from learning.selectors.loop import loop_tagger
from learning.services import jobs, model_store

log = logging.getLogger(__name__)

__all__ = [
    "BACKGROUND_NICENESS", "PLACE_PARAMETERS", "POLICY_PARAMETERS", "fit_base", "placed_like", "same_settings", "start",
    "take_base",
]

#: How much a background fit yields the CPU to the loop's retrains and scoring (its process's nice value).
BACKGROUND_NICENESS = 10

#: What a saved tagger takes from the fresh one it stands for: where its features are kept and read, which
#: changes nothing of its model (a model saved before features had a scope goes on with its project's).
PLACE_PARAMETERS = ("feature_cache", "vocabulary_scope")
#: ... and how it is fitted again (the refit policy), which is not part of what it models either: a saved tagger
#: goes on under the policy of the project's tagger now, so that a changed default (fewer warm iterations, say)
#: applies at the next retrain instead of making it fit from zero.
POLICY_PARAMETERS = ("warm_iterations", "refit_every", "refit_growth", "cold_refit")

#: The first key of the advisory lock that one refit of a project holds (the second is the project's id).
_LOCK_CLASS = 0x6465_6964  # 'deid'


def start(project_id: int) -> bool:
    """Start a process that fits the project's base (``manage.py fit_base``), unless a base is waiting or a
    refit of the project is under way; returns at once, whether one was started."""
    if model_store.base_models(project_id) or _refit_under_way(project_id):
        return False
    # A shell that starts the fit in the background and exits: the fit is nobody's child to wait for (no
    # zombie in the worker), and stays in the worker's process group.
    command = shlex.join([
        "nice", "-n", str(BACKGROUND_NICENESS), sys.executable, str(settings.BASE_DIR / "manage.py"), "fit_base",
        "--project", str(int(project_id)),
    ])
    subprocess.run(["sh", "-c", f"{command} &"], check=True, cwd=settings.BASE_DIR, stdin=subprocess.DEVNULL)
    log.info("project %s: fitting a base model from zero in the background", project_id)
    return True


def fit_base(project_id: int, *, seed: int = 0) -> str | None:
    """Fit the project's tagger from zero on its pool gold and keep it as the base of the next retrain (in
    this process: :func:`start` runs it in one of its own).

    Returns the base's artifact, or None when there is nothing to do: another refit of the project is under
    way, a base is already waiting, the project's tagger does not refit in the background, or it has no gold.
    """
    with _project_lock(project_id) as held:
        if not held or model_store.base_models(project_id):
            return None
        project = Project.objects.get(pk=project_id)
        _kind, _params, factory = loop_tagger(project, seed=seed)
        if getattr(factory(), "cold_refit", None) != "background":
            return None
        gold = gold_documents(project=project, role=Document.Role.POOL)
        if not gold:
            return None
        tagger = factory().fit(gold)
        jobs.drop_broken_connection()  # a database restarted during the fit: the next query reconnects
        if model_store.base_models(project_id):  # the lock went with a restart, and another refit won
            return None
        artifact = model_store.save_base(project_id, tagger)
    log.info("project %s: base model fitted from zero on %s documents", project_id, len(gold))
    return artifact


def take_base(project_id: int, fresh: Any) -> Any | None:
    """The project's waiting base, verified and of the same settings as ``fresh`` (a new tagger of the
    project's), removed from the store: each base starts one retrain. None when there is none to use."""
    waiting = model_store.base_models(project_id)
    for artifact in waiting[1:]:  # only the newest counts
        model_store.delete(artifact)
    if not waiting:
        return None
    try:
        base = model_store.read(waiting[0], project_id=project_id)
    except Exception as error:  # noqa: BLE001 - a base that cannot be read is dropped; the loop goes on
        log.warning("the base model of project %s is not used: %s", project_id, error)
        base = None
    finally:
        model_store.delete(waiting[0])
    if base is None or not same_settings(base, fresh):
        return None
    return placed_like(base, fresh)


def same_settings(saved: Any, fresh: Any) -> bool:
    """Whether a saved tagger was made with the settings of ``fresh`` (where features live and the refit policy
    aside)."""
    try:
        return type(saved) is type(fresh) and _settings(saved) == _settings(fresh)
    except AttributeError:  # saved by a version whose tagger had other parameters
        return False


def placed_like(saved: Any, fresh: Any) -> Any:
    """``saved``, its features kept and read where ``fresh``'s are (:data:`PLACE_PARAMETERS`), refitted under
    ``fresh``'s policy (:data:`POLICY_PARAMETERS`)."""
    for name in (*PLACE_PARAMETERS, *POLICY_PARAMETERS):
        if hasattr(fresh, name):
            setattr(saved, name, getattr(fresh, name))
    return saved


def _settings(tagger: Any) -> dict[str, Any]:
    return {name: value for name, value in tagger.get_params().items()
            if name not in PLACE_PARAMETERS and name not in POLICY_PARAMETERS}


def _refit_under_way(project_id: int) -> bool:
    """Whether some process holds the project's refit lock now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
                       "AND classid = %s AND objid = %s AND objsubid = 2)", [_LOCK_CLASS, project_id])
        return bool(cursor.fetchone()[0])


@contextmanager
def _project_lock(project_id: int) -> Iterator[bool]:
    """Whether this process holds the project's refit lock, for the block's duration (released when the
    block ends, or when the connection dies with the process)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_LOCK_CLASS, project_id])
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_LOCK_CLASS, project_id])
            except jobs.TRANSIENT_DB_ERRORS:  # the database restarted meanwhile: the lock went with it
                jobs.drop_broken_connection()
