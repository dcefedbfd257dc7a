"""Where trained models live: written signed, read only once verified, deleted with their model version.

Two kinds of file, both signed with their project's key (:func:`artifact_key`) by ``learning.core.artifacts``:

- a retrain job's model, one file per attempt (``job-N-A.pickle``), which becomes a model version's artifact
  when the job publishes;
- a project's *base*: a model fitted from zero beside the loop (``learning.services.cold_refit``), waiting for
  the next retrain to continue from it (``project-N-base-TOKEN.pickle``).

Saved models are pickles: a file changed on disk fails verification and is refused, never unpickled.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import OrderedDict
from pathlib import Path
from typing import Any

from django.conf import settings

from learning.core import artifacts
from learning.models import ModelVersion

__all__ = [
    "KEEP_ARTIFACTS", "artifact_key", "base_models", "delete", "exists", "load_model", "prune", "read",
    "save_base", "save_job_model",
]

#: Saved models kept per project (the current one and the ones before it, for comparisons).
KEEP_ARTIFACTS = 3


def artifact_key(project_id: int) -> bytes:
    """The key that signs a project's saved models: derived from the deployment's SECRET_KEY, one per project,
    so a model file of one project is refused as another's."""
    return hmac.new(settings.SECRET_KEY.encode(), f"model-artifact:{project_id}".encode(), hashlib.sha256).digest()


def _folder() -> Path:
    folder = Path(settings.DATA_DIR) / "models"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def save_job_model(job: Any, tagger: Any) -> str:
    """Write a retrain job's trained tagger, signed (mode 0600; atomically: a reader never sees half)."""
    # One file per attempt: an attempt that was taken over must not overwrite its successor's model.
    path = _folder() / f"job-{job.pk}-{job.attempt}.pickle"
    return str(artifacts.write(path, tagger, key=artifact_key(job.project_id)))


def save_base(project_id: int, tagger: Any) -> str:
    """Write a model fitted from zero for the project's next retrain to continue from."""
    path = _folder() / f"project-{project_id}-base-{secrets.token_hex(6)}.pickle"
    return str(artifacts.write(path, tagger, key=artifact_key(project_id)))


def base_models(project_id: int) -> list[str]:
    """The project's waiting bases, newest first."""
    found = _folder().glob(f"project-{project_id}-base-*.pickle")
    return [str(path) for path in sorted(found, key=lambda path: path.stat().st_mtime_ns, reverse=True)]


def exists(artifact: str) -> bool:
    return bool(artifact) and Path(artifact).exists()


def read(artifact: str, *, project_id: int) -> Any:
    """A saved tagger of ``project_id``, unpickled only once its signature checks out (raises
    ``learning.core.artifacts.ArtifactRejected`` otherwise); a fresh copy, which the caller may change."""
    return artifacts.read(artifact, key=artifact_key(project_id))


_TAGGERS: OrderedDict[tuple[str, int], Any] = OrderedDict()


def load_model(artifact: str, *, project_id: int) -> Any:
    """As :func:`read`, kept in memory for the next shard of the same job (two at most per process): not to
    be changed."""
    cached = (artifact, project_id)
    if cached not in _TAGGERS:
        _TAGGERS[cached] = read(artifact, project_id=project_id)
        while len(_TAGGERS) > 2:
            _TAGGERS.popitem(last=False)
    _TAGGERS.move_to_end(cached)
    return _TAGGERS[cached]


def delete(artifact: str) -> None:
    if artifact:
        Path(artifact).unlink(missing_ok=True)


def prune(project_id: int) -> None:
    """Delete the files of older model versions; their metrics stay (they are the learning curve)."""
    old = ModelVersion.objects.filter(project_id=project_id).exclude(artifact="").order_by("-created_at", "-pk")
    for version in old[KEEP_ARTIFACTS:]:
        delete(version.artifact)
        ModelVersion.objects.filter(pk=version.pk).update(artifact="")
