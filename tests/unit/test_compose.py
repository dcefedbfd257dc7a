"""docker-compose.yml and the Dockerfile: the scale-out deployment is wired the way the settings expect."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from config.launcher import web_command, worker_command

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("web", "worker")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


@pytest.fixture(scope="module")
def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def _env_file(path: Path) -> dict[str, str]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def _environment(service: dict) -> dict[str, str]:
    """The service's variables: its env_file(s), then its own environment over them (as compose reads them)."""
    files = service.get("env_file", [])
    merged: dict[str, str] = {}
    for name in [files] if isinstance(files, str) else files:
        merged.update(_env_file(ROOT / name))
    environment = service.get("environment", {})
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    return {**merged, **{key: str(value) for key, value in environment.items()}}


def _command(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else " ".join(command.split())


def _healthcheck(service: dict) -> str:
    test = service["healthcheck"]["test"]
    return " ".join(test) if isinstance(test, list) else test


def _instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    logical = re.sub(r"\\\n", " ", dockerfile)
    result = []
    for line in logical.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, arguments = line.partition(" ")
            result.append((keyword.upper(), " ".join(arguments.split())))
    return result


def test_the_four_services_exist(services):
    assert {"db", "redis", "web", "worker"} <= set(services)


def test_postgres_service(services):
    db = services["db"]
    assert db["image"].split(":") == ["postgres", "16"]
    environment = _environment(db)
    assert {"POSTGRES_DB", "POSTGRES_USER", "POSTGRES_PASSWORD"} <= set(environment)
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in db["volumes"])
    assert "pg_isready" in _healthcheck(db)


def test_redis_service(services):
    redis = services["redis"]
    assert redis["image"].split(":") == ["redis", "7"]
    assert "redis-cli" in _healthcheck(redis) and "ping" in _healthcheck(redis)


def test_web_and_worker_run_one_image_built_from_the_dockerfile(services):
    images = set()
    for name in APP_SERVICES:
        build = services[name]["build"]
        build = {"context": build} if isinstance(build, str) else build
        assert (ROOT / build["context"]).resolve() == ROOT
        assert build.get("dockerfile", "Dockerfile") == "Dockerfile"
        images.add(services[name].get("image"))
    assert len(images) == 1 and None not in images
    assert (ROOT / "Dockerfile").is_file()


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_services_read_their_settings_from_the_environment(services, name):
    environment = _environment(services[name])
    required = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "DEIDLOOP_DATA_DIR"}
    assert required <= set(environment)
    assert environment["DEBUG"] == "0"
    # The secret comes from whoever runs compose, never from a file in the repository.
    assert environment["SECRET_KEY"].startswith("${SECRET_KEY")
    assert "SECRET_KEY" not in _env_file(ROOT / "deploy" / "hosts.env")


def test_the_hosts_share_nothing_but_postgres_and_redis(services):
    """Every app service reads deploy/hosts.env, keeps its artifacts in PostgreSQL, and no volume of the web
    server is mounted by a worker: a worker scaled out, or started on another machine, needs no shared disk."""
    for name in APP_SERVICES:
        assert services[name]["env_file"] == "deploy/hosts.env"
        assert _environment(services[name])["DEIDLOOP_ARTIFACT_STORE"] == "postgres"
    data_dir = _environment(services["web"])["DEIDLOOP_DATA_DIR"]
    assert any(str(volume).endswith(f":{data_dir}") for volume in services["web"]["volumes"])
    web_volumes = {str(volume).split(":", 1)[0] for volume in services["web"]["volumes"]}
    for name in ("worker",):
        assert not web_volumes & {str(volume).split(":", 1)[0] for volume in services[name].get("volumes", [])}


@pytest.mark.parametrize("name", APP_SERVICES)
def test_urls_point_at_the_compose_services_with_their_credentials(services, name):
    environment = _environment(services[name])
    database = urlsplit(environment["DATABASE_URL"])
    postgres = _environment(services["db"])
    assert database.scheme in {"postgres", "postgresql"}
    assert (database.hostname, database.port or 5432) == ("db", 5432)
    assert (database.username, database.password, database.path.lstrip("/")) == (
        postgres["POSTGRES_USER"], postgres["POSTGRES_PASSWORD"], postgres["POSTGRES_DB"])
    redis = urlsplit(environment["REDIS_URL"])
    assert redis.scheme == "redis"
    assert (redis.hostname, redis.port or 6379) == ("redis", 6379)


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_services_wait_for_healthy_database_and_redis(services, name):
    depends_on = services[name]["depends_on"]
    assert depends_on["db"]["condition"] == "service_healthy"
    assert depends_on["redis"]["condition"] == "service_healthy"
    assert "healthcheck" in services["db"] and "healthcheck" in services["redis"]


def test_web_migrates_then_serves_uvicorn_on_port_8000_behind_the_proxy(services):
    web = services["web"]
    command = _command(web)
    assert "manage.py migrate" in command
    # The launcher's web processes (DEIDLOOP_WEB_WORKERS, one per core by default) on one socket.
    assert "exec python -m config.launcher serve" in command
    assert command.index("manage.py migrate") < command.index("config.launcher serve")
    environment = _environment(web)
    assert (environment["DEIDLOOP_HOST"], environment["DEIDLOOP_PORT"]) == ("0.0.0.0", "8000")
    assert environment["DEIDLOOP_WEB_WORKERS"].startswith("${DEIDLOOP_WEB_WORKERS")
    assert [str(port) for port in web["expose"]] == ["8000"]
    # It trusts the proxy's forwarding headers for the client's address, as ``up`` on 127.0.0.1 does not.
    assert web_command(7, proxy_headers=True)[1:] == ["-m", "config.webserver", "--fd", "7", "--proxy-headers"]
    assert "--proxy-headers" not in web_command(7)


def test_postgres_is_sized_for_a_small_host(services):
    options = dict(option.split("=", 1) for option in shlex.split(_command(services["db"]))[2::2])
    assert set(options) == {"max_connections", "shared_buffers", "effective_cache_size", "work_mem",
                            "maintenance_work_mem"}
    assert options["max_connections"] == "${DEIDLOOP_PG_MAX_CONNECTIONS:-100}"
    assert options["shared_buffers"] == "${DEIDLOOP_PG_SHARED_BUFFERS:-256MB}"


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_services_run_the_production_settings(services, name):
    environment = _environment(services[name])
    assert environment["DEIDLOOP_ENV"] == "production"
    assert environment["CSRF_TRUSTED_ORIGINS"].startswith("${CSRF_TRUSTED_ORIGINS:-https://")


def test_only_the_reverse_proxy_publishes_ports(services):
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}
    assert sorted(str(port) for port in services["proxy"]["ports"]) == ["443:443", "80:80"]


def test_the_proxy_terminates_tls_and_limits_bodies_to_the_upload_limit(services):
    proxy = services["proxy"]
    assert proxy["image"].split(":")[0] == "caddy"
    mounted = {str(volume).split(":")[1]: str(volume).split(":")[0] for volume in proxy["volumes"]}
    caddyfile_path = ROOT / mounted["/etc/caddy/Caddyfile"]
    caddyfile = caddyfile_path.read_text()
    assert re.search(r"^\s*tls \S+", caddyfile, re.M)
    assert re.search(r"^\s*reverse_proxy web:8000\s*$", caddyfile, re.M)
    size = re.search(r"^\s*max_size (\d+)MiB\s*$", caddyfile, re.M)
    assert size, "no request body limit in the Caddyfile"
    upload_limit = 200 * 1024 * 1024  # DEIDLOOP_MAX_UPLOAD_BYTES' default in config/settings.py
    assert upload_limit <= int(size.group(1)) * 1024 * 1024 <= upload_limit + 2 * 1024 * 1024


def test_worker_can_be_scaled(services):
    worker = services["worker"]
    assert "container_name" not in worker
    assert "ports" not in worker
    assert shlex.split(_command(worker))[:4] == ["celery", "-A", "config", "worker"]
    assert "--concurrency 1" in _command(worker)


def test_the_worker_runs_the_launchers_worker_options(services):
    """A broker connection with one channel, as ``./deidloop up``'s worker has: the worker survives a Redis
    restart (see CELERY_WORKER_ENABLE_REMOTE_CONTROL in config/settings.py)."""
    compose_options = set(shlex.split(_command(services["worker"])))
    assert {"--without-gossip", "--without-mingle"} <= compose_options & set(worker_command())
    assert "--beat" not in compose_options | set(worker_command())  # every worker runs the watchdog itself


def test_named_volumes_are_declared(compose, services):
    declared = set(compose.get("volumes") or {})
    for service in services.values():
        for volume in service.get("volumes", []):
            source = str(volume).split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in declared, source


def test_dockerfile_installs_cpu_torch_first_then_the_constrained_lock(dockerfile):
    instructions = _instructions(dockerfile)
    bases = [arguments.split()[0] for keyword, arguments in instructions if keyword == "FROM"]
    assert bases[-1] == "python:3.11-slim"
    runs = [arguments for keyword, arguments in instructions if keyword == "RUN"]
    installs = [step.strip() for run in runs for step in run.split("&&") if "pip install" in step]
    torch_step = next(i for i, step in enumerate(installs) if "requirements/torch.txt" in step.split("-c")[0])
    lock_step = next(i for i, step in enumerate(installs) if "-r requirements/lock.txt" in step)
    assert torch_step < lock_step
    assert "--index-url https://download.pytorch.org/whl/cpu" in installs[torch_step]
    assert "-c requirements/torch.txt" in installs[lock_step]


def test_files_the_dockerfile_names_exist(dockerfile):
    referenced = set(re.findall(r"requirements/[\w.\-]+\.txt", dockerfile))
    assert {"requirements/torch.txt", "requirements/lock.txt"} <= referenced
    for keyword, arguments in _instructions(dockerfile):
        if keyword == "COPY" and "--from=" not in arguments:
            *sources, _destination = arguments.split()
            referenced.update(source for source in sources if source != ".")
    missing = sorted(path for path in referenced if not (ROOT / path).exists())
    assert not missing, f"the Dockerfile names files that are not in the repository: {missing}"


def test_dockerignore_keeps_local_state_out_of_the_build_context():
    patterns = {line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")}
    assert {".venv", "var", ".git", "node_modules"} <= patterns
    assert any("__pycache__" in pattern for pattern in patterns)
