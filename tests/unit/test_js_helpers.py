"""The browser code's pure helpers (static/js/spans.js), tested with Node's built-in runner (tests/js/)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not on PATH: the JavaScript tests in tests/js/ need Node 20+")
def test_the_javascript_tests_pass_under_node():
    files = sorted((ROOT / "tests" / "js").glob("*.test.js"))
    assert files, "tests/js/ holds no *.test.js file"
    # The files, not the folder: Node 20 searches a folder given to --test, but Node 21 and later take it
    # for a module to load and fail.
    result = subprocess.run([NODE, "--test", "--test-reporter=tap", *map(str, files)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    report = result.stdout + result.stderr
    summary = {key: int(value) for key, value in re.findall(r"^# (tests|pass|fail) (\d+)$", result.stdout, re.M)}
    assert result.returncode == 0, report[-6000:]
    assert summary.get("fail") == 0 and summary.get("tests", 0) > 0, report[-6000:]
    assert summary["pass"] == summary["tests"], report[-6000:]
