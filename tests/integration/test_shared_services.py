"""One data folder's embedded PostgreSQL and Redis are shared by every ``./deidloop`` process using them:
``manage`` never stops them under a running ``up`` (whoever started them), commands that need no database
start nothing, and a user killed with SIGKILL neither keeps them up for ever nor lets them be stopped under
a process that still uses them.

Each test runs the launcher in subprocesses on a private data folder (``DEIDLOOP_VAR``), as ``test_up`` does.
"""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from corpus.formats import write_corpus
from corpus.types import Document, Span
from tests.integration.launcher_process import (
    environment, free_port, kill_leftovers, log_in, log_tail, postgres_home, postgres_running, private_data_folder,
    redis_running, remove_data_folder, run_launcher, start_launcher, stop, wait_for_page, wait_until,
)

SERVING_SECONDS = 300


def _brat_corpora(folder: Path) -> tuple[Path, Path]:
    names, cities = ["Juan", "Ana", "Luis", "Eva"], ["Madrid", "Lugo", "Soria"]

    def documents(n: int, offset: int) -> list[Document]:
        result = []
        for i in range(n):
            name, city = names[(i + offset) % len(names)], cities[(i + offset) % len(cities)]
            text, at = f"{name} vive en {city}.", len(name) + len(" vive en ")
            spans = (Span(0, len(name), "NAME"), Span(at, at + len(city), "LOC"))
            result.append(Document(text, spans, f"doc{offset}_{i}"))
        return result

    train, evaluation = folder / "train", folder / "eval"
    write_corpus(documents(8, 0), train, "brat")
    write_corpus(documents(4, 1), evaluation, "brat")
    return train, evaluation


def _evaluate(env: dict, train: Path, evaluation: Path) -> dict:
    result = run_launcher(["manage", "evaluate", "--train", str(train), "--eval", str(evaluation),
                           "--format", "brat", "--tagger", "unigram"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _waiting_command(data: Path) -> tuple[list[str], Path, Path]:
    """``manage shell -c``: a database command that connects, says so, and runs until released."""
    ready, release = data / "command-ready", data / "command-release"
    code = (
        "import pathlib, time\n"
        "from django.db import connection\n"
        "connection.ensure_connection()\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        f"while not pathlib.Path({str(release)!r}).exists():\n"
        "    time.sleep(0.2)\n"
    )
    return ["manage", "shell", "-c", code], ready, release


def _users(data: Path) -> list[str]:
    folder = data / "services" / "users"
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


def _site_serves(base: str, data: Path) -> requests.Session:
    """The login page, a login and an API call that reads the database all answer."""
    assert requests.get(f"{base}/login/", timeout=30).status_code == 200
    session = log_in(base, data, "admin")
    projects = session.get(f"{base}/api/projects/", timeout=30)
    assert projects.status_code == 200, projects.text[:2000]
    return session


@pytest.mark.slow
def test_manage_never_stops_the_services_under_a_running_up(tmp_path):
    """The reported sequence: a command starts the services, ``up`` starts meanwhile and reuses them, the
    command ends — and used to stop PostgreSQL and Redis under the running site."""
    data = private_data_folder("shared-test")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(data, port)
    command_log, up_log = data.parent / f"{data.name}-command.log", data.parent / f"{data.name}.log"
    args, ready, release = _waiting_command(data)
    command = start_launcher(args, env, command_log)
    up = None
    try:
        wait_until(lambda: ready.exists() or command.poll() is not None, seconds=SERVING_SECONDS,
                   what="the database command did not connect", log=command_log)
        assert command.poll() is None, log_tail(command_log)
        assert postgres_running(data) and redis_running(data)

        up = start_launcher(["up"], env, up_log)
        wait_for_page(f"{base}/login/", seconds=SERVING_SECONDS, process=up, log=up_log)
        _site_serves(base, data)

        release.touch()  # the command that started the services ends while up uses them
        assert command.wait(timeout=120) == 0, log_tail(command_log)
        _site_serves(base, data)
        assert postgres_running(data) and redis_running(data), log_tail(command_log)

        # Two more commands while up runs: one that needs no database, one that writes to it.
        train, evaluation = _brat_corpora(tmp_path)
        assert _evaluate(env, train, evaluation)["entity"]["f1"] == 1.0
        texts = tmp_path / "texts"
        texts.mkdir()
        (texts / "nota.txt").write_text("Paciente Juan, de Lugo.")
        imported = run_launcher(["manage", "import_corpus", "--project", "Shared", "--format", "txt", str(texts)], env)
        assert imported.returncode == 0, imported.stdout + imported.stderr
        assert up.poll() is None, log_tail(up_log)
        session = _site_serves(base, data)
        names = [project["name"] for project in session.get(f"{base}/api/projects/").json()["results"]]
        assert "Shared" in names  # the command wrote to the very database the site serves

        # up is the last user now: stopping it stops the services, whoever started them.
        output = stop(up, up_log)
        assert up.returncode == 0, output[-6000:]
        assert not postgres_running(data) and not redis_running(data)
        assert _users(data) == []
    finally:
        for process in (command, up):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        kill_leftovers(data)
        remove_data_folder(data)
        for log in (command_log, up_log):
            if log.exists():  # shown by pytest when the test failed
                print(f"--- {log.name}\n{log_tail(log, 8000)}")
                log.unlink()


@pytest.mark.slow
def test_commands_without_a_database_start_nothing_and_a_killed_user_holds_nothing(tmp_path):
    data = private_data_folder("shared-test")
    env = environment(data, free_port())
    command_log = data.parent / f"{data.name}-command.log"
    command = None
    try:
        # Nothing is running: evaluate (and check) run without a database, and start none.
        train, evaluation = _brat_corpora(tmp_path)
        assert _evaluate(env, train, evaluation)["train_docs"] == 8
        check = run_launcher(["manage", "check"], env)
        assert check.returncode == 0, check.stdout + check.stderr
        assert not postgres_home(data).exists() and not (data / "redis").exists()

        # A database command starts the services; its launcher is killed (SIGKILL) while manage.py goes on.
        args, ready, release = _waiting_command(data)
        command = start_launcher(args, env, command_log)
        wait_until(lambda: ready.exists() or command.poll() is not None, seconds=SERVING_SECONDS,
                   what="the database command did not connect", log=command_log)
        command.send_signal(signal.SIGKILL)
        command.wait()
        # Another command comes and goes: the orphaned manage.py still uses the services, so they stay.
        listed = run_launcher(["manage", "showmigrations", "annotator"], env)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert postgres_running(data) and redis_running(data)

        # Once it is gone too, the killed launcher's leftover entry keeps nothing running: the next user to
        # leave is the last one, and stops what a user started.
        release.touch()
        wait_until(lambda: not [name for name in _users(data) if _alive(name)], seconds=60,
                   what="the orphaned manage.py did not end")
        listed = run_launcher(["manage", "showmigrations", "annotator"], env)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert not postgres_running(data) and not redis_running(data)
        assert _users(data) == []
    finally:
        if command is not None and command.poll() is None:
            command.kill()
            command.wait()
        kill_leftovers(data)
        remove_data_folder(data)
        if command_log.exists():
            print(f"--- {command_log.name}\n{log_tail(command_log, 8000)}")
            command_log.unlink()


def _alive(user: str) -> bool:
    """Is the process of a user entry (HOST-PID-START) still running?"""
    pid = int(user.rsplit("-", 2)[1])
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.slow
def test_an_import_into_a_fresh_data_folder_migrates_the_new_database_first(tmp_path):
    """The peers' sequence on a fresh checkout: ``manage import_corpus`` before any ``up`` (which used to fail
    with 'relation "annotator_project" does not exist'); ``manage`` migrates before a database command."""
    data = private_data_folder("shared-test")
    env = environment(data, free_port())
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "nota.txt").write_text("Paciente Juan, de Lugo.")
    try:
        imported = run_launcher(["manage", "import_corpus", "--project", "Fresh", "--format", "txt", str(texts)], env)
        assert imported.returncode == 0, imported.stdout + imported.stderr
        counted = run_launcher(["manage", "shell", "-c", "from annotator.models import Document; "
                                "print(Document.objects.filter(project__name='Fresh').count())"], env)
        assert counted.returncode == 0 and counted.stdout.strip().splitlines()[-1] == "1", counted.stderr
        assert not postgres_running(data) and not redis_running(data)  # the commands stopped what they started
    finally:
        kill_leftovers(data)
        remove_data_folder(data)
