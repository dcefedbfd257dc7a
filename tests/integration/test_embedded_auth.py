"""The embedded services ask for passwords (config.embedded): PostgreSQL with SCRAM, Redis with requirepass;
the passwords are generated once into 0600 files of the data folder; a cluster made with ``trust`` by an
earlier version is made to require the password at its next start; as root, nothing is given away through a
symbolic link. Each test starts real servers on a private data folder of its own, never the services of var/.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import psycopg
import pytest
import redis

from config import embedded
from config.embedded import (
    DATABASE_USER, EmbeddedPostgres, EmbeddedRedis, EmbeddedServiceError, ServiceUsers, ensure_secret,
    ensure_services, stored_secret,
)

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="ownership is only given away when running as root")


@pytest.fixture
def data_folder(monkeypatch):
    """A private data folder (under /tmp, reachable by PostgreSQL's unprivileged user when run as root) with
    its own derived ports; every server started on it is stopped afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="deidloop-auth-", dir="/tmp"))
    folder.chmod(0o755)
    monkeypatch.setenv("DEIDLOOP_VAR", str(folder))
    for name in ("DEIDLOOP_PG_PORT", "DEIDLOOP_REDIS_PORT", "DATABASE_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    yield folder
    for service in (EmbeddedRedis, EmbeddedPostgres):
        try:
            service.default().stop()
        except EmbeddedServiceError:  # a test planted a link where a password file goes: nothing was started
            pass
    shutil.rmtree(folder, ignore_errors=True)


def psql(postgres: EmbeddedPostgres, password: str | None) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(
        [str(postgres.bin_dir / "psql"), "-w", "-h", "127.0.0.1", "-p", str(postgres.port), "-U", DATABASE_USER,
         "-d", "deidloop", "-tAc", "SELECT 41 + 1"],
        capture_output=True, text=True, env=env, timeout=60,
    )


def connect_without_password(port: int):
    return psycopg.connect(host="127.0.0.1", port=port, user=DATABASE_USER, dbname="deidloop", password="")


def test_postgres_refuses_a_connection_without_the_password(data_folder):
    postgres = EmbeddedPostgres.default()
    assert postgres.start() is True

    password = (data_folder / "postgres.password").read_text().strip()
    assert postgres.password == password and len(password) >= 40
    assert postgres.url == f"postgres://deidloop:{password}@127.0.0.1:{postgres.port}/deidloop"
    refused = psql(postgres, None)
    assert refused.returncode != 0 and "no password supplied" in refused.stderr
    wrong = psql(postgres, "not-the-password")
    assert wrong.returncode != 0 and "password authentication failed" in wrong.stderr
    accepted = psql(postgres, password)
    assert (accepted.returncode, accepted.stdout.strip()) == (0, "42")
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        connect_without_password(postgres.port)
    with psycopg.connect(postgres.url) as connection:
        assert connection.execute("SELECT current_user").fetchone() == (DATABASE_USER,)
        methods = connection.execute("SELECT DISTINCT auth_method FROM pg_hba_file_rules").fetchall()
        assert methods == [("scram-sha-256",)]
        stored = connection.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [DATABASE_USER])
        assert stored.fetchone()[0].startswith("SCRAM-SHA-256$")


def test_redis_refuses_a_client_without_the_password(data_folder):
    server = EmbeddedRedis.default()
    assert server.start() is True

    password = (data_folder / "redis.password").read_text().strip()
    assert server.url == f"redis://:{password}@127.0.0.1:{server.port}/0"
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=server.port).ping()
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=server.port, password="not-the-password").ping()
    client = redis.Redis.from_url(server.url)
    assert client.ping() is True and client.config_get("requirepass") == {"requirepass": password}
    # Not on any command line (``ps`` shows those to every user).
    commands = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert password not in commands


def test_running_services_are_reused_with_the_stored_passwords(data_folder):
    first = ensure_services()
    try:
        urls = os.environ["DATABASE_URL"], os.environ["REDIS_URL"]
        assert first.postgres.password in urls[0] and first.redis.password in urls[1]
        # Another process (``./deidloop manage`` beside an ``up``) finds them running and uses the same passwords.
        os.environ.pop("DATABASE_URL")
        os.environ.pop("REDIS_URL")
        postgres, server = EmbeddedPostgres.default(), EmbeddedRedis.default()
        assert postgres.start() is False and server.start() is False
        assert (postgres.url, server.url) == urls
        with psycopg.connect(postgres.url) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
        assert redis.Redis.from_url(server.url).ping() is True
    finally:
        first.stop()
    assert not EmbeddedPostgres.default().is_running() and not EmbeddedRedis.default().is_running()


def test_a_cluster_made_with_trust_requires_the_password_after_its_next_start(data_folder):
    postgres = EmbeddedPostgres.default()
    # As an earlier version made it: trust, no password, no password file.
    postgres._prepare_ownership()
    made = postgres._run_as_service([
        postgres._bin("initdb"), "-D", str(postgres._pgdata), "-U", DATABASE_USER, "--auth=trust",
        "--encoding=UTF8", "--locale=C.UTF-8",
    ])
    assert made.returncode == 0, made.stderr
    assert postgres.trusts_connections() and stored_secret("postgres") is None

    assert postgres.start() is True

    password = stored_secret("postgres")
    assert password is not None and postgres.password == password
    assert not postgres.trusts_connections()
    rules = [line.split() for line in postgres._hba.read_text().splitlines() if line.strip() and line[0] != "#"]
    assert len(rules) == 6 and {rule[-1] for rule in rules} == {"scram-sha-256"}
    hba = postgres._hba.stat()
    assert stat.S_IMODE(hba.st_mode) == 0o600 and hba.st_uid == postgres._pgdata.stat().st_uid
    assert psql(postgres, None).returncode != 0
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        connect_without_password(postgres.port)
    assert psql(postgres, password).stdout.strip() == "42"

    # The next start finds nothing left to change and keeps the password.
    postgres.stop()
    again = EmbeddedPostgres.default()
    assert again.start() is True and stored_secret("postgres") == password
    assert psql(again, password).stdout.strip() == "42" and psql(again, None).returncode != 0


def test_password_files_are_made_once_0600_and_never_through_a_link(data_folder):
    old_umask = os.umask(0)  # even with nothing masked, the file is 0600 from its creation
    try:
        value, generated = ensure_secret("postgres")
    finally:
        os.umask(old_umask)
    path = data_folder / "postgres.password"
    before = path.stat()
    assert generated and stat.S_IMODE(before.st_mode) == 0o600 and path.read_text() == value + "\n"
    assert ensure_secret("postgres") == (value, False)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)

    # A link planted where a password file goes is neither followed nor written through.
    target = data_folder / "elsewhere"
    target.write_text("untouched")
    (data_folder / "redis.password").symlink_to(target)
    with pytest.raises(EmbeddedServiceError, match="symbolic link"):
        ensure_secret("redis")
    assert target.read_text() == "untouched"

    # A password file others may read is refused, not used.
    path.chmod(0o644)
    with pytest.raises(EmbeddedServiceError, match="0600"):
        stored_secret("postgres")


@as_root
def test_a_data_folder_that_is_a_link_is_refused_and_its_target_keeps_its_owner(data_folder):
    target = Path(tempfile.mkdtemp(prefix="deidloop-target-", dir="/tmp"))
    try:
        (target / "file").write_text("root's")
        (data_folder / "postgres").symlink_to(target)
        with pytest.raises(EmbeddedServiceError, match="symbolic link"):
            EmbeddedPostgres.default().start()
        assert (target.stat().st_uid, (target / "file").stat().st_uid) == (0, 0)
    finally:
        shutil.rmtree(target)


@as_root
def test_giving_the_data_folder_to_the_service_user_never_follows_a_link(data_folder):
    outside = Path(tempfile.mkdtemp(prefix="deidloop-outside-", dir="/tmp"))
    try:
        (outside / "secret").write_text("root's")
        postgres = EmbeddedPostgres.default()
        postgres.data_dir.mkdir()
        (postgres.data_dir / "inner").mkdir()
        (postgres.data_dir / "inner" / "link-to-file").symlink_to(outside / "secret")
        (postgres.data_dir / "link-to-folder").symlink_to(outside)

        postgres._prepare_ownership()

        account = embedded._service_account()
        assert account.pw_uid != 0
        for path in (postgres.data_dir, postgres.data_dir / "inner", postgres.data_dir / "inner" / "link-to-file",
                     postgres.data_dir / "link-to-folder"):
            assert path.lstat().st_uid == account.pw_uid, path  # the links themselves
        assert (outside.stat().st_uid, (outside / "secret").stat().st_uid) == (0, 0)  # not what they point to
    finally:
        shutil.rmtree(outside)


def test_bookkeeping_files_are_never_opened_through_a_link(data_folder):
    target = data_folder / "target"
    target.write_text("untouched")
    users = ServiceUsers(data_folder / "services")
    users.users.mkdir(parents=True)
    (users.folder / "lock").symlink_to(target)
    with pytest.raises(EmbeddedServiceError, match="symbolic link"):
        with users.locked():
            pass
    (users.folder / "lock").unlink()
    (users.folder / "postgres.started").symlink_to(target)
    with pytest.raises(EmbeddedServiceError, match="symbolic link"):
        users.record_start("postgres")
    assert target.read_text() == "untouched"


def test_a_restart_uses_the_password_of_the_folder_the_service_was_described_with(data_folder, monkeypatch):
    """A process that describes the services of one data folder and restarts them later, when its environment
    names another folder (or none), keeps the first folder's passwords: it neither makes new ones elsewhere
    nor gives the running cluster a password its clients do not have."""
    postgres, redis_server = EmbeddedPostgres.default(), EmbeddedRedis.default()
    assert postgres.start() is True and redis_server.start() is True
    password = postgres.password
    elsewhere = Path(tempfile.mkdtemp(prefix="deidloop-elsewhere-", dir="/tmp"))
    try:
        monkeypatch.setenv("DEIDLOOP_VAR", str(elsewhere))
        postgres.stop()
        redis_server.stop()
        assert postgres.start() is True and redis_server.start() is True
        assert not list(elsewhere.glob("*.password"))
        assert postgres.password == password == (data_folder / "postgres.password").read_text().strip()
        accepted = psql(postgres, password)
        assert (accepted.returncode, accepted.stdout.strip()) == (0, "42")
        client = redis.Redis(host="127.0.0.1", port=redis_server.port,
                             password=(data_folder / "redis.password").read_text().strip())
        assert client.ping() is True
    finally:
        monkeypatch.setenv("DEIDLOOP_VAR", str(data_folder))
        shutil.rmtree(elsewhere, ignore_errors=True)
