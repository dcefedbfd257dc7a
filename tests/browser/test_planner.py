"""People and costs, and the release planner, in a real browser on a seeded project: the charts render, the
figures shown are the database's, and the plan shown is what ``plan()`` makes of the same inputs."""
from __future__ import annotations

import statistics
import threading

import pytest

from django.db import connections, transaction

from annotator.models import Annotation, Document
from annotator.selectors import cost_records, gold_documents
from deid.release_planner import AttackerParameters, PublisherParameters, fit_learning_curve, plan
from learning.costs import cost_fits
from learning.models import ModelVersion
from tests.browser.conftest import CHROMIUM, PASSWORD, SCREENSHOTS, log_in, screenshot
from tests.seeding import seed_dashboard_project

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

HOURLY_RATE = 40.0  # the page's default


def expected_plan(project, *, value_per_identifier: float = 5.0):
    """The plan worked out here from the database, the way the page says it works it out."""
    versions = ModelVersion.objects.filter(project=project, status="ready").order_by("created_at")
    sizes = [v.n_documents for v in versions]
    records = cost_records(project=project)
    fit = cost_fits(project=project)["overall"]
    seconds = fit.predict(statistics.mean(r["document__n_tokens"] for r in records),
                          statistics.mean(r["fn_fixes"] for r in records),
                          statistics.mean(r["fp_fixes"] for r in records))
    gold = gold_documents(project=project)
    annotated = (Annotation.objects.filter(document__project=project, document__role="pool", state="submitted")
                 .values("document").distinct().count())
    cost = seconds / 3600 * HOURLY_RATE
    return cost, plan(
        precision_curve=fit_learning_curve(sizes, [v.metrics["entity"]["p"] for v in versions]),
        recall_curve=fit_learning_curve(sizes, [v.metrics["entity"]["r"] for v in versions]),
        annotated_documents=annotated,
        phi_per_document=statistics.mean(len(d.spans) for d in gold),
        documents_shared=Document.objects.filter(project=project).count(),
        publisher=PublisherParameters(budget=2000, cost_per_document=cost,
                                      fine_per_false_claim=1),
        attacker=AttackerParameters(budget=2000, cost_per_document=10, value_per_identifier=value_per_identifier,
                                    fine_per_false_claim=10),
        max_documents=Document.objects.filter(project=project, role="pool").count(),
    )


def seed_outside_the_browser_loop():
    """The seeded project, made in a thread of its own: submissions announce themselves through
    ``async_to_sync``, which refuses to run in the thread where Playwright's event loop runs.

    One transaction, as in the integration tests: committed submission by submission, each batch would queue
    a retrain for the (absent) workers, and the seeding's own retrains would then find one under way.
    """
    outcome = {}

    def run():
        try:
            with transaction.atomic():
                outcome["seeded"] = seed_dashboard_project(name="Release", password=PASSWORD, batches=3,
                                                           batch_size=6, simulate=False)
        except BaseException as error:  # noqa: BLE001 - raised again in the test's thread
            outcome["error"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["seeded"]


def shown_best_alphas(page) -> dict[str, int | None]:
    rows = page.locator("#policy-table tbody tr")
    return {
        rows.nth(k).get_attribute("data-policy"): (int(value) if (value := rows.nth(k).get_attribute("data-best-alpha")) else None)
        for k in range(rows.count())
    }


def wait_for_charts(page, count: int) -> None:
    try:
        page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {count}",
                               timeout=15_000)
    except Exception:
        screenshot(page, "failed-charts")
        raise AssertionError(f"{count} charts did not render; script errors: {page.script_errors}") from None


def full_page(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_people_and_planner_show_the_projects_figures_and_plan(live_server, new_page):
    seeded = seed_outside_the_browser_loop()
    project = seeded.project
    page = new_page()

    # People and costs: one row per annotator, figures from the logged records.
    log_in(page, live_server.url, "release-lead", f"/projects/{project.pk}/people/")
    wait_for_charts(page, 2)
    records = cost_records(project=project)
    for name in ("release-ana", "release-bea"):
        own = [r for r in records if r["annotator__username"] == name]
        row = page.locator(f'#people-table tr[data-annotator="{name}"]')
        assert row.locator('[data-col="records"]').inner_text() == str(len(own)) == "9"
        assert row.locator('[data-col="fn"]').inner_text() == f"{statistics.mean(r['fn_fixes'] for r in own):.2f}"
        hours = sum(r["active_seconds"] for r in own) / 3600
        assert row.locator('[data-col="per-hour"]').inner_text() == f"{len(own) / hours:.1f}"
    fit = cost_fits(project=project)["overall"]
    overall = page.locator('#fit-table tr[data-fit="overall"]')
    assert overall.locator('[data-col="token"]').inner_text() == f"{fit.seconds_per_token:.3f} ± {fit.se_per_token:.3f}"
    assert page.locator('[data-kpi="records"]').inner_text() == "18"
    screenshot(page, "people")
    full_page(page, "people-full")

    # The planner with its defaults: the measured cost, the pool as the most that can be annotated.
    page.goto(f"{live_server.url}/projects/{project.pk}/release-planner/")
    wait_for_charts(page, 3)
    cost, expected = expected_plan(project)
    assert shown_best_alphas(page) == {key: outcome.best_alpha for key, outcome in expected.outcomes.items()}
    assert page.locator("#recommendation-text").inner_text() == expected.recommendation
    assert page.locator('[data-kpi="cost"]').inner_text() == f"{cost:.2f}"
    screenshot(page, "planner")
    full_page(page, "planner-full")

    # A cheaper identifier (v = 2 instead of 5): does the attacker still attack?
    page.fill("#id_value_per_identifier", "2")
    page.click("#planner-form button[type=submit]")
    page.wait_for_url("**value_per_identifier=2**")
    wait_for_charts(page, 3)
    _, changed = expected_plan(project, value_per_identifier=2.0)
    assert shown_best_alphas(page) == {key: outcome.best_alpha for key, outcome in changed.outcomes.items()}
    assert page.locator("#recommendation-text").inner_text() == changed.recommendation
    safe = changed.outcomes["safe_forward"]
    assert page.locator("#recommendation").get_attribute("data-share") == ("true" if safe.should_share else "false")
    assert changed.recommendation != expected.recommendation
    screenshot(page, "planner-changed")
    assert page.script_errors == []
