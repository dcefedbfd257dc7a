"""bench/model_cache.py: a cached model is trained again when the code it pickles changes."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.unit.core.test_crf import synthetic_docs

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def model_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    spec = importlib.util.spec_from_file_location("bench_model_cache", BENCH / "model_cache.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_cached_model_is_reused_until_the_code_it_pickles_changes(model_cache, monkeypatch):
    docs = synthetic_docs(10, seed=5)
    path, seconds = model_cache.cached_crf(docs, max_iterations=5)
    assert seconds is not None and path.exists()
    assert model_cache.cached_crf(docs, max_iterations=5) == (path, None)
    assert model_cache.load(path).predict(docs) == model_cache.CRFTagger(max_iterations=5).fit(docs).predict(docs)
    assert len(model_cache.code_digest()) == 40 and all(m in sys.modules for m in model_cache.PICKLED_MODULES)
    monkeypatch.setattr(model_cache, "code_digest", lambda: "other code")
    again, seconds = model_cache.cached_crf(docs, max_iterations=5)
    assert again != path and seconds is not None
