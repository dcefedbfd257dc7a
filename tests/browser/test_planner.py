"""People and costs, and the release planner, in a real browser on a seeded project: the charts render, the
figures shown are the database's, and the plan shown is what ``plan()`` makes of the same inputs."""
from __future__ import annotations

import statistics

import pytest
from django.db import transaction

from annotator.selectors import cost_records
from deid.core.release_planner import AttackerParameters
from learning.selectors.measured_costs import cost_fits
from tests.browser.conftest import (
    CHROMIUM, PASSWORD, SCREENSHOTS, log_in, outside_the_browser_loop, screenshot, wait_for_true,
)
from tests.integration.test_people_and_planner import expected_plan
from tests.seeding import seed_dashboard_project

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]


def seed_outside_the_browser_loop():
    """The seeded project, made outside the browser's event loop (``outside_the_browser_loop``).

    One transaction, as in the integration tests: committed submission by submission, each batch would queue
    a retrain for the (absent) workers, and the seeding's own retrains would then find one under way.
    """
    def seed():
        with transaction.atomic():
            return seed_dashboard_project(name="Release", password=PASSWORD, batches=3, batch_size=6, simulate=False)

    return outside_the_browser_loop(seed)


def shown_best_alphas(page) -> dict[str, int | None]:
    shown = {}
    for row in page.locator("#policy-table tbody tr").all():
        value = row.get_attribute("data-best-alpha")
        shown[row.get_attribute("data-policy")] = int(value) if value else None
    return shown


def wait_for_charts(page, count: int) -> None:
    try:
        wait_for_true(page, f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {count}",
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
    token_cost = f"{fit.seconds_per_token:.3f} ± {fit.se_per_token:.3f}"
    assert overall.locator('[data-col="token"]').inner_text() == token_cost
    assert page.locator('[data-kpi="records"]').inner_text() == "18"
    assert page.locator(".chart-actions button").count() == 4  # PNG and SVG for each chart
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
    _, changed = expected_plan(project, attacker=AttackerParameters(budget=2000, cost_per_document=10,
                                                                    value_per_identifier=2, fine_per_false_claim=10))
    assert shown_best_alphas(page) == {key: outcome.best_alpha for key, outcome in changed.outcomes.items()}
    assert page.locator("#recommendation-text").inner_text() == changed.recommendation
    safe = changed.outcomes["safe_forward"]
    assert page.locator("#recommendation").get_attribute("data-share") == ("true" if safe.should_share else "false")
    assert page.locator("#verdict-title").inner_text().startswith("Share" if safe.should_share else "Do not share")
    assert page.locator("#id_value_per_identifier").input_value() == "2"  # the form keeps what was asked
    assert changed.recommendation != expected.recommendation
    screenshot(page, "planner-changed")

    # A parameter that makes no sense is explained next to its field; no plan is drawn from it.
    page.fill("#id_attacker_budget", "-1")
    page.click("#planner-form button[type=submit]")
    page.wait_for_url("**attacker_budget=-1**")
    assert "Attacker's budget (B_a)" in page.locator("#planner-errors").inner_text()
    assert page.locator('[data-error-for="attacker_budget"]').inner_text() == (
        "Ensure this value is greater than or equal to 0.")
    assert page.locator("#recommendation, .js-plotly-plot").count() == 0
    screenshot(page, "planner-error")
    assert page.script_errors == []
