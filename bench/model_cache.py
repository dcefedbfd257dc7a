"""A CRF trained once on MEDDOCAN train and kept for the next benchmark run (bench/crf_marginals.py,
bench/scoring.py).

A cached model is named by the tagger's settings, its training texts and the source of the modules whose classes
it pickles (:data:`PICKLED_MODULES`): a change to any of them trains it again, so that a run never measures, or
fails on, a model saved by other code.

A cached model is a pickle, and unpickling runs code: it is written with ``learning.core.artifacts`` (an
HMAC tag checked before anything is unpickled) under a key of this user's, in a folder only this user can
enter (``$XDG_CACHE_HOME/deidloop-bench``, mode 0700), never in the shared temporary folder where another
account could plant a file under the expected name.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import stat
import time
from pathlib import Path

from learning.core import artifacts
from learning.core.features import FEATURES_VERSION
from learning.core.taggers.crf import CRFTagger


def folder() -> Path:
    """The cache folder, created 0700; refused when it is not this user's alone."""
    path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deidloop-bench"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{path} must be a folder of this user's that nobody else can open (mode 0700)")
    return path


def key() -> bytes:
    """This user's key for the cached models (made at first use, mode 0600)."""
    path = folder() / "key"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(descriptor, "wb") as file:
        file.write(os.urandom(32))
    return path.read_bytes()


#: The modules whose classes (and their pickled state) a cached model holds.
PICKLED_MODULES = ("learning.core.taggers.crf", "learning.core.taggers.crf_lbfgs", "learning.core.lexicon",
                   "learning.core.features")


def code_digest() -> str:
    """The sha1 of the source of :data:`PICKLED_MODULES`."""
    digest = hashlib.sha1()
    for name in PICKLED_MODULES:
        digest.update(Path(importlib.import_module(name).__file__).read_bytes())
    return digest.hexdigest()


def cached_crf(train, **params) -> tuple[Path, float | None]:
    """The path of a CRF (default parameters, but ``params``) trained on ``train``, and the seconds its
    training took now (None when an earlier run left it)."""
    fresh = CRFTagger(**params)
    settings = repr(sorted((name, value) for name, value in fresh.get_params().items() if name != "feature_cache"))
    digest = hashlib.sha1((code_digest() + settings + "".join(d.text for d in train)).encode()).hexdigest()[:12]
    path = folder() / f"crf-{FEATURES_VERSION}-{digest}.model"
    if path.exists():
        return path, None
    began = time.perf_counter()
    tagger = fresh.fit(train)
    seconds = time.perf_counter() - began
    artifacts.write(path, tagger, key=key())
    return path, seconds


def load(path: Path) -> CRFTagger:
    """A cached model, unpickled once its tag checks out."""
    return artifacts.read(path, key=key())


def loads(blob: bytes, *, name: str) -> CRFTagger:
    """:func:`load` of bytes already read (to time the unpickling alone)."""
    import pickle

    return pickle.loads(artifacts.verified_payload(blob, key=key(), name=name))
