"""Saved models that are authenticated before they are read.

A trained tagger is a pickle, and unpickling runs whatever the file says: a file that anyone but the loop
wrote must never reach :func:`pickle.loads`. Every artifact therefore ends with an HMAC-SHA256 tag over its
payload, keyed by a secret the caller passes (per project, derived from the deployment's secret), and
:func:`read` checks the tag with :func:`hmac.compare_digest` before anything is unpickled; a file that fails
raises :class:`ArtifactRejected` and nothing of it is run.

Layout: ``payload (a pickle) ‖ MARKER ‖ tag (32 bytes)``. The tag comes last so that the payload is still a
plain pickle to tools that read trusted files directly. Files are created with mode 0600 under a fresh name
(``O_CREAT | O_EXCL``) and renamed over the target, so a reader never sees half a file.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
from pathlib import Path
from typing import Any

__all__ = ["ArtifactRejected", "read", "sign", "verified_payload", "write"]

MARKER = b"\x00deidloop-artifact-hmac-sha256\x00"
TAG_BYTES = hashlib.sha256().digest_size


class ArtifactRejected(Exception):
    """A model file that is not what the loop wrote with this key (changed, truncated, unsigned or signed with
    another key); it was not unpickled."""


def sign(payload: bytes, *, key: bytes) -> bytes:
    """The tag of ``payload`` under ``key``."""
    if not key:
        raise ValueError("an artifact key must not be empty")
    return hmac.new(key, MARKER + payload, hashlib.sha256).digest()


def write(path: str | Path, obj: Any, *, key: bytes) -> Path:
    """Pickle ``obj`` to ``path`` with its tag: a new file, mode 0600, in place at once (atomic rename)."""
    path = Path(path)
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    blob = payload + MARKER + sign(payload, key=key)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(blob)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


def verified_payload(blob: bytes, *, key: bytes, name: str = "the model file") -> bytes:
    """The payload of an artifact's bytes once its tag checks out; :class:`ArtifactRejected` otherwise."""
    if len(blob) < len(MARKER) + TAG_BYTES or blob[-TAG_BYTES - len(MARKER):-TAG_BYTES] != MARKER:
        raise ArtifactRejected(
            f"{name} carries no signature (it was not written by this version of the loop, or it is cut short); "
            "it was not loaded. The next retrain writes a signed one."
        )
    payload, tag = blob[:-TAG_BYTES - len(MARKER)], blob[-TAG_BYTES:]
    if not hmac.compare_digest(tag, sign(payload, key=key)):
        raise ArtifactRejected(
            f"{name} does not match its signature (it was changed after the loop wrote it, or belongs to another "
            "project or installation); it was not loaded. The next retrain writes a new one."
        )
    return payload


def read(path: str | Path, *, key: bytes) -> Any:
    """The object saved by :func:`write` at ``path``, unpickled only after its tag has been verified."""
    path = Path(path)
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        blob = file.read()
    return pickle.loads(verified_payload(blob, key=key, name=str(path)))
