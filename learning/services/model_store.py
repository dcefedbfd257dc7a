"""Where trained models live: written signed, read only once verified, deleted with their model version.

Three kinds of model, all signed with their project's key (:func:`artifact_key`) by ``learning.core.artifacts``:

- a retrain job's model, one per attempt (``models/job-N-A.pickle``), which becomes a model version's artifact
  when the job publishes;
- a project's *base*: a model fitted from zero beside the loop (``learning.services.cold_refit``), waiting for
  the next retrain to continue from it (``models/project-N-base-TOKEN.pickle``);
- a project's de-identification model (``learning.services.deid_model``: ``models/project-N-deid-M.pickle``).

They are kept in the deployment's artifact store (``annotator.artifact_store``: files under ``DATA_DIR``, or
PostgreSQL for workers on several hosts), under the names above, which model versions and jobs record. Saved
models are pickles: bytes changed where they are kept fail verification and are refused, never unpickled.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import OrderedDict
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings

from annotator.artifact_store import get_store
from learning.core import artifacts
from learning.models import ModelVersion

__all__ = [
    "KEEP_ARTIFACTS", "artifact_key", "base_models", "delete", "exists", "keep", "load_model", "prepare_next_fit",
    "prune", "read", "save_base", "save_deid_model", "save_job_model", "to_continue",
]

#: Saved models kept per project (the current one and the ones before it, for comparisons).
KEEP_ARTIFACTS = 3


def artifact_key(project_id: int) -> bytes:
    """The key that signs a project's saved models: derived from the deployment's SECRET_KEY, one per project,
    so a model file of one project is refused as another's."""
    return hmac.new(settings.SECRET_KEY.encode(), f"model-artifact:{project_id}".encode(), hashlib.sha256).digest()


def save_job_model(job: Any, tagger: Any) -> str:
    """Store a retrain job's trained tagger, signed; its name."""
    # One per attempt: an attempt that was taken over must not overwrite its successor's model.
    return _save(f"models/job-{job.pk}-{job.attempt}.pickle", tagger, job.project_id)


def save_base(project_id: int, tagger: Any) -> str:
    """Store a model fitted from zero for the project's next retrain to continue from; its name."""
    return _save(f"{_base_prefix(project_id)}{secrets.token_hex(6)}.pickle", tagger, project_id)


def save_deid_model(model: Any, tagger: Any) -> str:
    """Store a de-identification model's trained tagger, signed; its name."""
    return _save(f"models/project-{model.project_id}-deid-{model.pk}.pickle", tagger, model.project_id)


def _save(name: str, tagger: Any, project_id: int) -> str:
    get_store().write(name, artifacts.seal(tagger, key=artifact_key(project_id)))
    return name


def _base_prefix(project_id: int) -> str:
    return f"models/project-{project_id}-base-"


def base_models(project_id: int) -> list[str]:
    """The project's waiting bases, newest first."""
    return get_store().names(_base_prefix(project_id))


def _name(artifact: str) -> str:
    """The store's name of a recorded artifact (older versions recorded the path of the file in
    ``DATA_DIR/models``)."""
    return f"models/{PurePosixPath(artifact).name}" if artifact.startswith("/") else artifact


def exists(artifact: str) -> bool:
    return bool(artifact) and get_store().exists(_name(artifact))


def read(artifact: str, *, project_id: int) -> Any:
    """A saved tagger of ``project_id``, unpickled only once its signature checks out (raises
    ``learning.core.artifacts.ArtifactRejected`` otherwise); a fresh copy, which the caller may change."""
    return artifacts.unseal(get_store().read(_name(artifact)), key=artifact_key(project_id), name=artifact)


_TAGGERS: OrderedDict[tuple[str, int], Any] = OrderedDict()


def load_model(artifact: str, *, project_id: int) -> Any:
    """As :func:`read`, kept in memory for the next shard of the same job (two at most per process): not to
    be changed."""
    cached = (artifact, project_id)
    if cached not in _TAGGERS:
        keep(artifact, read(artifact, project_id=project_id), project_id=project_id)
    _TAGGERS.move_to_end(cached)
    return _TAGGERS[cached]


def keep(artifact: str, tagger: Any, *, project_id: int) -> None:
    """Hold ``tagger``, just saved as ``artifact``, for :func:`load_model` in this process: the process that
    trained a model scores with it without reading it back (and with the tables its evaluation built)."""
    _TAGGERS[(artifact, project_id)] = tagger
    _TAGGERS.move_to_end((artifact, project_id))
    while len(_TAGGERS) > 2:
        _TAGGERS.popitem(last=False)


def prepare_next_fit() -> bool:
    """For a process with nothing else to do: the newest model :func:`keep` holds here prepares the next fit
    that continues from it (``prepare_next_fit`` of the tagger, when it has one: the CRF's first pass of a warm
    fit, :meth:`learning.core.taggers.crf.CRFTagger.prepare_next_fit`), on one thread: this process is idle,
    but the worker's other processes may still be finishing a retrain. Returns whether it prepared anything;
    a model read from the store (fitted elsewhere) has nothing to prepare from."""
    kept = list(_TAGGERS.values())  # one call: a task of this process's may change them meanwhile
    if not kept:
        return False
    prepare = getattr(kept[-1], "prepare_next_fit", None)
    return bool(prepare is not None and prepare(threads=1))


def to_continue(artifact: str, *, project_id: int) -> Any:
    """A saved tagger of ``project_id`` to fit further (a copy the caller may change): made from the one
    :func:`load_model` keeps when this process holds it and the tagger can be copied so
    (``copy_to_continue``), which spares reading and unpickling it again; otherwise :func:`read`."""
    kept = _TAGGERS.get((artifact, project_id))
    copy = getattr(kept, "copy_to_continue", None)
    return copy() if copy is not None else read(artifact, project_id=project_id)


def delete(artifact: str) -> None:
    if artifact:
        get_store().delete(_name(artifact))


def prune(project_id: int) -> None:
    """Delete the files of older model versions; their metrics stay (they are the learning curve)."""
    old = ModelVersion.objects.filter(project_id=project_id).exclude(artifact="").order_by("-created_at", "-pk")
    for version in old[KEEP_ARTIFACTS:]:
        delete(version.artifact)
        ModelVersion.objects.filter(pk=version.pk).update(artifact="")
