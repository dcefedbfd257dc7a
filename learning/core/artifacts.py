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
import pickle
from pathlib import Path
from typing import Any

from corpus.private_files import read_private, write_private

__all__ = ["ArtifactRejected", "read", "seal", "sign", "unseal", "verified_payload", "write"]

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


def seal(obj: Any, *, key: bytes) -> bytes:
    """``obj`` pickled, with its tag: the bytes of an artifact, wherever they are kept."""
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return payload + MARKER + sign(payload, key=key)


def unseal(blob: bytes, *, key: bytes, name: str = "the model file") -> Any:
    """The object sealed in ``blob``, unpickled only once its tag checks out (:class:`ArtifactRejected`
    otherwise)."""
    return pickle.loads(verified_payload(blob, key=key, name=name))


def write(path: str | Path, obj: Any, *, key: bytes) -> Path:
    """Pickle ``obj`` to ``path`` with its tag: a new file, mode 0600, in place at once (atomic rename)."""
    return write_private(path, seal(obj, key=key))


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
    return unseal(read_private(path), key=key, name=str(path))
