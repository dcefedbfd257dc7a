"""The import rules of ARCHITECTURE.md, checked on the source: every arrow between our packages points down.

    corpus            pure: types, tokenizer, BIO, span JSON, formats, synthetic notes
    learning.core     pure: taggers, strategies, ordering, metrics...   may import corpus
    deid.core         pure: concealment, release planner                may import corpus, learning.core
    annotator         Django app                                         may import corpus
    learning          Django app                                         may import annotator, corpus
    deid              Django app                                         may import annotator, corpus,
                                                                         learning.core, learning.selectors

``config`` (settings, URLs, ASGI, Celery) sits on top and may import anything; nothing imports it.
A module of an ``api`` package never imports a view: both call services and selectors.
Only ``annotator.services.ranking`` writes the ranking tables.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("annotator", "learning", "deid", "corpus", "config")
#: Frameworks a pure package must not import.
DJANGO_WORLD = ("django", "rest_framework", "drf_spectacular", "channels", "channels_redis", "celery",
                "django_htmx", "daphne", "uvicorn")

# package -> (packages of ours it may import, whether it may import the Django world)
RULES: dict[str, tuple[tuple[str, ...], bool]] = {
    "corpus": (("corpus",), False),
    "learning.core": (("corpus", "learning.core"), False),
    "deid.core": (("corpus", "learning.core", "deid.core"), False),
    "annotator": (("annotator", "corpus"), True),
    "learning": (("learning", "annotator", "corpus"), True),
    "deid": (("deid", "annotator", "corpus", "learning.core", "learning.selectors"), True),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[Path]:
    return sorted(
        path for package in ("annotator", "learning", "deid", "corpus") for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    )


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import in the file, function-level ones included."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module in OURS:  # ``from learning import tasks`` imports the module learning.tasks
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, module))
    return found


def _rule_for(module: str) -> tuple[str, tuple[tuple[str, ...], bool]]:
    owner = max((name for name in RULES if module == name or module.startswith(name + ".")), key=len)
    return owner, RULES[owner]


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _is_page_view(module: str) -> bool:
    segments = module.split(".")
    return "views" in segments and "api" not in segments


def _violations() -> list[str]:
    problems = []
    for path in _sources():
        module = _module_name(path)
        owner, (allowed, django) = _rule_for(module)
        for line, imported in _imports(path):
            top = imported.split(".")[0]
            where = f"{path.relative_to(ROOT)}:{line} imports {imported}"
            if top in OURS and not _within(imported, allowed):
                problems.append(f"{where}, but {owner} may import only {', '.join(allowed)}")
            if not django and top in DJANGO_WORLD:
                problems.append(f"{where}, but {owner} is pure (no Django, Celery or DRF)")
            if top in OURS and "api" in module.split(".") and _is_page_view(imported):
                problems.append(f"{where}: an API module calls services and selectors, never a view")
    return problems


def test_every_arrow_points_down():
    assert _violations() == []


def test_the_rules_catch_an_upward_import(tmp_path, monkeypatch):
    """The checker itself: an annotator module importing learning, and a pure one importing Django."""
    fake_root = tmp_path
    (fake_root / "annotator").mkdir()
    (fake_root / "annotator" / "bad.py").write_text("from learning.models import ModelVersion\n")
    (fake_root / "corpus").mkdir()
    (fake_root / "corpus" / "impure.py").write_text("def f():\n    from django.db import models\n")
    (fake_root / "learning" / "api").mkdir(parents=True)
    (fake_root / "learning" / "api" / "loop.py").write_text("from learning.views import loop\n")
    (fake_root / "deid").mkdir()
    (fake_root / "deid" / "ok.py").write_text("from learning.selectors.people import record_cost\n")
    (fake_root / "deid" / "bad.py").write_text("from learning import models\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", fake_root)
    problems = _violations()
    assert len(problems) == 4, problems
    assert any("annotator/bad.py:1 imports learning.models" in p for p in problems)
    assert any("corpus/impure.py:2 imports django.db" in p and "pure" in p for p in problems)
    assert any("learning/api/loop.py:1" in p and "never a view" in p for p in problems)
    assert any("deid/bad.py:1 imports learning.models" in p for p in problems)


_RANKING_WRITE = re.compile(
    r"\b(PoolScore|Ranking)\.objects\b[^\n]*\.(update|delete|create|bulk_create|get_or_create|update_or_create)\("
    r"|\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+\{?(annotator_poolscore|annotator_ranking|PoolScore\._meta|Ranking\._meta)",
    re.IGNORECASE,
)


@pytest.mark.parametrize("package", ["annotator", "learning", "deid", "corpus", "config"])
def test_only_the_ranking_service_writes_the_ranking_tables(package):
    writers = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / package).rglob("*.py")) if "migrations" not in path.parts
        and path.relative_to(ROOT).as_posix() != "annotator/services/ranking.py"
        for number, line in enumerate(path.read_text().splitlines(), start=1) if _RANKING_WRITE.search(line)
    ]
    assert writers == []
