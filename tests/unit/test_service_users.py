"""Sharing the embedded services (config.embedded.ServiceUsers, Services.stop) and which ``manage`` commands
start them (config.launcher.needs_database), without starting any server."""
from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from config.embedded import ServiceUsers, Services
from config.launcher import needs_database


class FakeService:
    def __init__(self) -> None:
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1


@pytest.fixture
def users(tmp_path) -> ServiceUsers:
    return ServiceUsers(tmp_path / "services")


@pytest.fixture
def sleeper():
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def _start_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]


def test_live_users_are_counted_and_dead_ones_forgotten(users, sleeper):
    host = socket.gethostname()
    finished = subprocess.Popen(["true"])
    finished.wait()
    with users.locked():
        users.join(os.getpid())
        users.join(sleeper.pid)
        users.join(finished.pid)  # already gone: never counted
        # A dead user's entry (SIGKILL leaves it behind) and a reused pid's (same pid, another start time).
        (users.users / f"{host}-{finished.pid}-{_start_of(os.getpid())}").touch()
        (users.users / f"{host}-{sleeper.pid}-1").touch()
        assert sorted(users.alive()) == sorted([os.getpid(), sleeper.pid])
        assert sorted(path.name for path in users.users.iterdir()) == sorted(
            [f"{host}-{os.getpid()}-{_start_of(os.getpid())}", f"{host}-{sleeper.pid}-{_start_of(sleeper.pid)}"])
        users.leave(sleeper.pid)
        assert users.alive() == [os.getpid()]


def test_a_process_of_another_host_counts_as_live(users):
    with users.locked():
        (users.users / "some-other-machine-123-456").touch()
        assert users.alive() == [-1]


def test_a_zombie_is_no_user(users):
    zombie = subprocess.Popen(["true"])
    try:
        with users.locked():
            users.join(zombie.pid)
            # ``true`` exits at once and stays a zombie until waited for.
            for _ in range(200):
                if Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
                    break
                subprocess.run(["sleep", "0.01"])
            assert users.alive() == []
    finally:
        zombie.wait()


def _services(users: ServiceUsers, pid: int) -> Services:
    return Services(postgres=FakeService(), redis=FakeService(), users=users, pid=pid)


def test_only_the_last_user_stops_and_only_what_a_user_started(users, sleeper):
    with users.locked():
        users.record_start("postgres")  # Redis was running before any user came: it stays
        users.join(os.getpid())
        users.join(sleeper.pid)
    mine, theirs = _services(users, os.getpid()), _services(users, sleeper.pid)
    mine.stop()
    assert (mine.postgres.stopped, mine.redis.stopped) == (0, 0)  # the other process still uses them
    mine.stop()  # leaving twice is leaving once
    sleeper.kill()
    sleeper.wait()
    theirs.users = None  # it was killed: it never leaves
    last = _services(users, os.getpid())
    with users.locked():
        users.join(os.getpid())
    last.stop()
    assert (last.postgres.stopped, last.redis.stopped) == (1, 0)
    assert not users.started_by_a_user("postgres") and users.alive() == []


def test_a_child_keeps_the_services_when_its_parent_dies_first(users, sleeper):
    parent = subprocess.Popen(["sleep", "60"])
    with users.locked():
        users.record_start("postgres")
        users.join(parent.pid)
    Services(users=users, pid=parent.pid).add_user(sleeper.pid)
    parent.kill()
    parent.wait()
    newcomer = _services(users, os.getpid())
    with users.locked():
        users.join(os.getpid())
    newcomer.stop()
    assert newcomer.postgres.stopped == 0  # the orphaned child still uses them
    assert users.alive() == [sleeper.pid]


@pytest.mark.parametrize(("args", "expected"), [
    ([], False), (["help"], False), (["--help"], False), (["-h"], False), (["--version"], False),
    (["help", "import_corpus"], False), (["import_corpus", "--help"], False),
    (["evaluate", "--train", "a", "--eval", "b"], False), (["simulate", "--out", "r.json"], False),
    (["check"], False), (["check", "--deploy"], False), (["check", "--database", "default"], True),
    (["check", "--database=default"], True), (["collectstatic", "--no-input"], False),
    (["migrate"], True), (["import_corpus", "--project", "P", "x"], True), (["shell"], True),
    (["showmigrations"], True), (["retrain", "--all"], True),
])
def test_which_commands_need_the_database(args, expected):
    assert needs_database(args) is expected


def test_a_stray_file_is_no_user(users):
    with users.locked():
        (users.users / "notes.txt").touch()
        assert users.alive() == [] and list(users.users.iterdir()) == []
