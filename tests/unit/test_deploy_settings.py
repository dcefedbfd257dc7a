"""The production settings pass Django's deployment checks, and no template carries inline script (the
Content-Security-Policy allows scripts only from our static files)."""
from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_FOLDERS = [ROOT / "templates", *ROOT.glob("*/templates")]
PRODUCTION = {
    "DEIDLOOP_ENV": "production",
    "DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "deidloop.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://deidloop.example.org",
    # Settings only: the check opens no connection to them.
    "DATABASE_URL": "postgres://deidloop:deidloop@127.0.0.1:9/deidloop",
    "REDIS_URL": "redis://127.0.0.1:9/0",
}


def _manage(*args: str, environment: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **environment, "DEIDLOOP_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DEIDLOOP_VAR", None)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_check_deploy_passes_with_the_production_settings(tmp_path):
    result = _manage("check", "--deploy", "--fail-level", "WARNING", environment=PRODUCTION, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout + result.stderr


def test_check_deploy_fails_without_them(tmp_path):
    """The check is not vacuous: the development settings (plain HTTP) fail it."""
    development = {**PRODUCTION, "DEIDLOOP_ENV": "development"}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", environment=development, tmp_path=tmp_path)
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr, warning


def _templates() -> list[Path]:
    return sorted(path for folder in TEMPLATE_FOLDERS for path in folder.rglob("*.html"))


SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.I | re.S)
# An event handler attribute (onclick=, onload=...) or htmx's hx-on, both run inline script.
HANDLER = re.compile(r"<[^>]*\s(on[a-z]+|hx-on[:\w-]*|data-hx-on[:\w-]*)\s*=", re.I)


def test_templates_are_found():
    names = {path.name for path in _templates()}
    assert {"base.html", "login.html", "workbench.html"} <= names


@pytest.mark.parametrize("path", _templates(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_template_has_inline_script(path):
    text = path.read_text()
    for attributes, body in SCRIPT.findall(text):
        # A json_script element is data, not code; anything else must be an empty element with a src.
        assert body.strip() == "" and "src=" in attributes, f"inline script in {path.name}: {body.strip()[:80]}"
    handler = HANDLER.search(text)
    assert handler is None, f"inline event handler {handler.group(1)}= in {path.name}"
    assert "javascript:" not in text.lower(), f"a javascript: URL in {path.name}"


def test_the_inline_script_check_finds_inline_script():
    assert SCRIPT.search('<script>alert(1)</script>')
    assert HANDLER.search('<button type="button" onclick="go()">')
    assert HANDLER.search('<form hx-on::after-request="this.reset()">')
    assert not HANDLER.search('<a href="/" data-one="x">')
