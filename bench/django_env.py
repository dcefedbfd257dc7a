"""Set up Django for a benchmark on a scratch database of the embedded PostgreSQL (dropped and recreated)."""
from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup_scratch_database(name: str = "deidloop_bench") -> None:
    import psycopg

    from config.embedded import ensure_services

    # Stop on exit whatever this benchmark had to start; services already running are left alone.
    atexit.register(ensure_services().stop)
    url = os.environ["DATABASE_URL"]
    base, _ = url.rsplit("/", 1)
    with psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = f"{base}/{name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
