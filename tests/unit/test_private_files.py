"""Secret files made once (``corpus.private_files.write_once``): processes started together on a new data
folder all read one whole secret — the web processes of ``serve`` once answered a 500 when one of them read
the secret key while another was still writing it."""
from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.private_files import write_once

ROOT = Path(__file__).resolve().parents[2]


def _race(path: str, value: str, barrier, results) -> None:
    barrier.wait()
    made = write_once(Path(path), value.encode())
    results.put((made, Path(path).read_text()))


def test_processes_racing_on_a_new_file_all_read_the_one_whole_secret(tmp_path):
    context = multiprocessing.get_context("fork")
    for round_ in range(10):
        path = tmp_path / f"secret-{round_}"
        barrier, results = context.Barrier(6), context.Queue()
        values = [f"value-{round_}-{k}-" + "x" * 4000 for k in range(6)]
        processes = [context.Process(target=_race, args=(str(path), value, barrier, results)) for value in values]
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=30) for _ in processes]
        for process in processes:
            process.join(timeout=30)
        assert sum(made for made, _ in outcomes) == 1
        [written] = [text for made, text in outcomes if made]
        assert written in values and all(text == written for _, text in outcomes)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"secret-{k}" for k in range(10)]  # no partial file left


def test_an_existing_file_or_link_is_never_overwritten_nor_followed(tmp_path):
    kept = tmp_path / "kept"
    kept.write_text("first")
    assert write_once(kept, b"second") is False and kept.read_text() == "first"
    target = tmp_path / "elsewhere"
    link = tmp_path / "link"
    link.symlink_to(target)
    assert write_once(link, b"secret") is False
    assert not target.exists() and link.is_symlink()


def _secret_key_in_a_new_process(var: Path) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if key not in ("SECRET_KEY", "DEIDLOOP_DATA_DIR")}
    env.update(DEIDLOOP_VAR=str(var), DJANGO_SETTINGS_MODULE="config.settings")
    return subprocess.Popen([sys.executable, "-c", "from django.conf import settings; print(settings.SECRET_KEY)"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_web_processes_started_together_on_a_new_data_folder_share_one_secret_key(tmp_path):
    processes = [_secret_key_in_a_new_process(tmp_path / "var") for _ in range(4)]
    keys = {process.communicate(timeout=120)[0].strip() for process in processes}
    assert all(process.returncode == 0 for process in processes)
    assert len(keys) == 1 and len(keys.pop()) >= 50


def test_an_empty_secret_key_file_is_refused_with_a_clear_message(tmp_path):
    var = tmp_path / "var"
    var.mkdir()
    (var / "secret_key").write_text("")
    process = _secret_key_in_a_new_process(var)
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0
    assert "secret_key is empty; remove it to have a new secret key generated" in err


@pytest.fixture(autouse=True)
def _no_stray_processes():
    yield
    for child in multiprocessing.active_children():
        child.kill()
