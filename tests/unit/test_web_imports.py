"""A web process imports what serving needs, not the numerical libraries the worker computes with: scipy and
Faker add about 45 MiB to each web process (bench/memory.py), and are imported where clusters, learning
curves, cost fits and surrogates are computed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import config.asgi
from django.urls import get_resolver
get_resolver().url_patterns  # every view module, as the first request imports them
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in {"scipy", "faker", "sklearn",
      "sklearn_crfsuite", "pycrfsuite", "torch", "flair"})))
"""


def test_the_web_application_and_its_views_import_no_scipy_faker_or_model_libraries(tmp_path):
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEIDLOOP_VAR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environment, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
