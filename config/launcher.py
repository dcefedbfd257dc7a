"""Entry point behind ``./deidloop``: runs the application, the tests or manage.py on the embedded services.

    python -m config.launcher up             PostgreSQL + Redis + a Celery worker + uvicorn on :8000
                                             (DEIDLOOP_WEB_WORKERS processes on one socket, default one
                                             per core: config.sizing)
    python -m config.launcher serve          only the web processes, on DEIDLOOP_HOST:DEIDLOOP_PORT, for
                                             services run elsewhere (docker-compose.yml's web service)
    python -m config.launcher test [ARGS]    pytest ARGS against the embedded PostgreSQL and Redis
    python -m config.launcher screenshots    the user guide's pictures (docs/img/) taken again by the browser tests
    python -m config.launcher manage ARGS    manage.py ARGS (starts the database when it is not running and
                                             the command needs it)

Every process that uses the embedded services counts itself (and its children) among their users; the last
one to leave stops them (config.embedded.ServiceUsers), so ``manage`` never stops a server ``up`` is using.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

from config import sizing
from config.embedded import ROOT, EmbeddedServiceError, Services, ensure_services, export_urls, secret_path
from config.i18n import compile_catalogues

HOST = os.environ.get("DEIDLOOP_HOST", "127.0.0.1")
PORT = int(os.environ.get("DEIDLOOP_PORT", "8000"))
# In one web process Django's request handling shares one interpreter lock (threads: config/asgi.py), so
# it uses about one core; one process per core, all accepting on one listening socket, use them all.
WEB_WORKERS = sizing.web_workers()


def say(message: str) -> None:
    print(f"deidloop: {message}", flush=True)


#: manage.py commands that open no database connection (nor Redis): ``manage`` runs them without starting
#: the embedded services. ``check`` touches the database only when asked to (``--database``).
COMMANDS_WITHOUT_DATABASE = frozenset(
    {"help", "version", "check", "diffsettings", "evaluate", "simulate", "collectstatic", "findstatic"}
)


def needs_database(args: list[str]) -> bool:
    """Does ``manage.py ARGS`` open a database connection?"""
    if not args or args[0].startswith("-") or "--help" in args or "-h" in args:
        return False  # Django's help or version, or a command's --help: printed before anything connects
    command = args[0]
    if command == "check":
        return any(arg == "--database" or arg.startswith("--database=") for arg in args)
    return command not in COMMANDS_WITHOUT_DATABASE


def _manage(*args: str, services: Services | None = None, check: bool = True) -> int:
    """Run ``manage.py ARGS`` and wait for it; with ``services``, it counts among their users while it runs."""
    with subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args]) as process:
        if services is not None:
            services.add_user(process.pid)
        try:
            returncode = process.wait()
        except BaseException:  # Ctrl-C: it got the signal too; let it go before we leave the services
            process.kill()
            raise
    if check and returncode:
        raise subprocess.CalledProcessError(returncode, process.args)
    return returncode


def _terminate(processes: list[subprocess.Popen], *, grace: float = 20.0) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_group(process)  # with what it started: a worker's pool processes must not outlive it
            process.wait()


WORKER_RESTARTS_PER_MINUTE = 3


def worker_command() -> list[str]:
    """The command line of the Celery worker: up to ``DEIDLOOP_WORKER_PROCESSES`` pool processes, as few as
    ``DEIDLOOP_WORKER_IDLE_PROCESSES`` once it has been idle ``DEIDLOOP_WORKER_IDLE_SECONDS`` (Celery's
    autoscaler, ``learning.services.workers.IdleAutoscaler``), so that an idle worker gives back what its
    retrains held. No beat: the worker's heartbeat thread runs the loop's watchdog, which resumes a retrain
    whose worker died, once a minute (``learning.services.workers.Heartbeat``).

    Without gossip and mingle (and, in the settings, remote control) the worker's broker connection has one
    channel, so that a Redis restart leaves the worker running (see CELERY_WORKER_ENABLE_REMOTE_CONTROL)."""
    return [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info",
            "--autoscale", f"{sizing.worker_processes()},{sizing.worker_idle_processes()}",
            "--without-gossip", "--without-mingle"]


def _start_worker() -> subprocess.Popen:
    return subprocess.Popen(worker_command(), cwd=ROOT, start_new_session=True)


def _kill_group(process: subprocess.Popen) -> None:
    """Kill what is left of a dead process's group (pool processes orphaned by a killed worker)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _listening_socket(host: str, port: int) -> socket.socket:
    """The web port, opened here and inherited by every web process (config.webserver ``--fd``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host.strip("[]"), port))
    except OSError as error:
        listener.close()
        raise EmbeddedServiceError(
            f"cannot listen on {host}:{port} ({error.strerror}); set DEIDLOOP_PORT to a free port."
        ) from None
    listener.listen(1024)
    listener.set_inheritable(True)
    return listener


def web_command(fd: int, *, proxy_headers: bool = False) -> list[str]:
    """The command line of one web process (uvicorn: config.webserver) accepting on the inherited listening
    socket ``fd``; ``proxy_headers``: the client's address is the one a reverse proxy forwards, else the
    connection's own."""
    return [sys.executable, "-m", "config.webserver", "--fd", str(fd), *(["--proxy-headers"] if proxy_headers else [])]


def start_web(listener: socket.socket, *, proxy_headers: bool = False) -> list[subprocess.Popen]:
    """``WEB_WORKERS`` web processes accepting on ``listener``, each in a process group of its own."""
    command = web_command(listener.fileno(), proxy_headers=proxy_headers)
    return [subprocess.Popen(command, cwd=ROOT, start_new_session=True, pass_fds=(listener.fileno(),))
            for _ in range(WEB_WORKERS)]


def settings_data_dir():
    from config.embedded import var_dir

    return var_dir()


def up() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    services = ensure_services()
    processes: list[subprocess.Popen] = []
    stopping = False

    def request_stop(signum, frame):  # noqa: ARG001 - signal handler signature
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        _manage("migrate", "--no-input", "-v", "0", services=services)
        _manage("collectstatic", "--no-input", "-v", "0")
        _manage("bootstrap", services=services)
        # A project with gold but no model yet (the demo on first run) gets its first retrain queued: the
        # worker trains it while the site already serves (the project's pages say so).
        _manage("retrain", "--all", "--if-no-model", "--queue", services=services)
        # Children get their own process group so that a Ctrl-C in the terminal reaches only us;
        # we stop them in order ourselves.
        worker = _start_worker()
        services.add_user(worker.pid)
        processes.append(worker)
        restarts: list[float] = []
        listener = _listening_socket(HOST, PORT)
        try:
            for web in start_web(listener):
                services.add_user(web.pid)
                processes.append(web)
        finally:
            # The web processes hold the port now; once they stop, it is free again.
            listener.close()
        say(f"serving on http://{HOST}:{PORT}/ ({WEB_WORKERS} web processes) — log in with an account from "
            f"{settings_data_dir() / 'credentials.txt'}; Ctrl-C stops everything")
        while not stopping:
            for index, process in enumerate(processes):
                if process.poll() is None:
                    continue
                restarts = [moment for moment in restarts if moment > time.monotonic() - 60]
                if process is worker and len(restarts) < WORKER_RESTARTS_PER_MINUTE:
                    # A crashed or killed worker is replaced; the new one resumes the retrain it was on.
                    say(f"the worker exited with {process.returncode}; starting a new one")
                    _kill_group(process)
                    worker = processes[index] = _start_worker()
                    services.add_user(worker.pid)
                    restarts.append(time.monotonic())
                    continue
                say(f"{process.args[2]} exited with {process.returncode}; stopping")
                stopping = True
            time.sleep(0.5)
        return 0
    finally:
        say("stopping")
        _terminate(list(reversed(processes)))
        services.stop()
        say("stopped")


def serve() -> int:
    """Only the web processes, on one socket, until SIGTERM (or one of them exits): for a deployment whose
    database, Redis and workers run as services of their own (docker-compose.yml, behind its proxy, whose
    forwarded client address the processes trust)."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: stop.set())
    listener = _listening_socket(HOST, PORT)
    try:
        processes = start_web(listener, proxy_headers=True)
    finally:
        listener.close()
    say(f"serving on {HOST}:{PORT} ({WEB_WORKERS} web processes)")
    try:
        while all(process.poll() is None for process in processes) and not stop.wait(0.5):
            pass
    finally:
        _terminate(processes)
    return 0 if stop.is_set() else 1


def test(args: list[str]) -> int:
    # The pytest plugin tests/embedded_services.py starts (and afterwards stops) the embedded services.
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT).returncode


#: The browser tests that take the user guide's screenshots when DEIDLOOP_SCREENSHOTS=1 (tests/browser/guide_images.py).
GUIDE_SCREENSHOT_TESTS = "tests/browser/test_guide_screenshots.py"


def screenshots(args: list[str]) -> int:
    """Write every picture of docs/guide.md again (docs/img/NAME.png), from the pages as they are now."""
    if not Path("/usr/bin/chromium").exists():
        say("the screenshots need /usr/bin/chromium (apt-get install chromium)")
        return 1
    env = {**os.environ, "DEIDLOOP_SCREENSHOTS": "1"}
    pytest = [sys.executable, "-m", "pytest", GUIDE_SCREENSHOT_TESTS, "-p", "no:cacheprovider", *args]
    return subprocess.run(pytest, cwd=ROOT, env=env).returncode


#: Commands that look at or change the migrations themselves: ``manage`` does not migrate before them.
MIGRATION_COMMANDS = frozenset({"migrate", "makemigrations", "showmigrations", "sqlmigrate", "squashmigrations",
                                "dbshell"})


def manage(args: list[str]) -> int:
    if not needs_database(args):
        export_urls()
        return _manage(*args, check=False)
    services = ensure_services()
    try:
        # A fresh checkout's database has no tables until something migrates it: an import before the first
        # ``up`` must work as well (migrating an up-to-date database only checks).
        if args[0] not in MIGRATION_COMMANDS:
            _manage("migrate", "--no-input", "-v", "0", services=services)
        return _manage(*args, services=services, check=False)
    finally:
        services.stop()  # stops them only when no other process (an ``up``, another command) uses them


def services_only() -> int:
    """Start the embedded services and leave them running (for development): no user stops them then."""
    services = ensure_services(keep_running=True)
    # The URLs without their passwords (a terminal's output ends up in logs); the passwords are in their files.
    for name, service in (("DATABASE_URL", services.postgres), ("REDIS_URL", services.redis)):
        if service is not None and service.password:
            url = os.environ[name].replace(quote(service.password, safe=""), "PASSWORD")
            say(f"{name}={url} (PASSWORD: the contents of {secret_path(service)})")
        else:
            say(f"{name}={os.environ[name]}")
    return 0


def main(argv: list[str]) -> int:
    command, args = (argv[0], argv[1:]) if argv else ("up", [])
    compile_catalogues()  # the Spanish interface: .mo files are built here, never committed
    try:
        if command == "up":
            return up()
        if command == "serve":
            return serve()
        if command == "test":
            return test(args)
        if command == "manage":
            return manage(args)
        if command == "screenshots":
            return screenshots(args)
        if command == "services":
            return services_only()
    except EmbeddedServiceError as error:
        say(str(error))
        return 1
    say(f"unknown command {command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
