"""The loop page in a real browser: the model and queue figures are the database's, and a lead's settings
change is stored, listed in the page's history and announced as taking effect at the next retrain."""
from __future__ import annotations

import pytest

from annotator.models import AuditEvent, Document
from learning.models import ModelVersion
from annotator.services.projects import create_project
from tests.browser.conftest import CHROMIUM, PASSWORD, log_in, make_user, outside_the_browser_loop, screenshot
from tests.seeding import seed_dashboard_project

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.django_db(transaction=True),
]


def _save_and_see_refused(page, field_name: str, message: str):
    """Save the settings and see exactly one field refused, ``field_name``, with ``message``; its block."""
    page.click("form.settings button[type=submit]")
    page.wait_for_load_state()
    invalid = page.locator(".field.invalid")
    assert invalid.count() == 1 and invalid.locator(f"[name={field_name}]").count() == 1
    assert message in invalid.inner_text()
    return invalid


def test_the_loop_page_shows_the_state_and_records_a_settings_change(live_server, new_page):
    seeded = seed_dashboard_project(name="Settings", password=PASSWORD, batches=1, batch_size=6, simulate=False)
    project = seeded.project
    current = ModelVersion.objects.get(project=project, is_current=True)
    page = new_page()
    log_in(page, live_server.url, seeded.lead.username, f"/projects/{project.pk}/loop/")
    assert page.script_errors == []

    state = page.locator("#loop-state")
    waiting = Document.objects.filter(project=project, role="pool", status="pool").count()
    assert f"{waiting} in the pool" in " ".join(state.locator(".stats").inner_text().split())
    assert f"#{current.pk}" in state.inner_text()
    assert f"{current.metrics['entity']['f1']:.3f}" in state.inner_text()
    assert "LCUB_6" in state.locator("section", has_text="Ranking").inner_text()
    screenshot(page, "loop-state")

    # Choosing a strategy brings its own fields: ROI with measured costs takes the value of a correction.
    assert page.input_value("input[name=strategy-theta]") == "0.6"
    page.select_option("select[name=strategy]", "ROI_measured")
    page.wait_for_selector("input[name=strategy-value_seconds]")
    assert page.locator("input[name=strategy-theta]").count() == 0
    assert page.input_value("input[name=strategy-value_seconds]") == "30.0"
    page.fill("input[name=strategy-value_seconds]", "45")
    page.fill("input[name=batch_size]", "10")
    page.click("form.settings button[type=submit]")
    page.wait_for_load_state()
    assert "the next retrain uses them" in page.locator(".message").inner_text()

    project.refresh_from_db()
    assert (project.strategy, project.strategy_params, project.batch_size) == (
        "ROI_measured", {"value_seconds": 45}, 10)
    event = AuditEvent.objects.get(project=project, detail__has_key="settings")
    assert event.user == seeded.lead and event.detail["settings"]["batch_size"] == [6, 10]
    history = page.locator("#history + table").inner_text()
    assert "ROI_measured" in history and seeded.lead.username in history
    page.locator("#history").scroll_into_view_if_needed()
    screenshot(page, "loop-settings-changed")

    # The tagger's fields follow the tagger chosen.
    page.select_option("select[name=tagger_kind]", "unigram")
    page.wait_for_selector("input[name=tagger-lowercase]")
    assert page.locator("input[name=tagger-c1]").count() == 0
    page.select_option("select[name=tagger_kind]", "crf")
    page.wait_for_selector("input[name=tagger-c1]")

    # A value out of its range is refused where it was typed, with its range, and nothing changes.
    page.select_option("select[name=strategy]", "ELB_3")
    page.wait_for_selector("input[name=strategy-rho]")
    page.fill("input[name=strategy-rho]", "-0.5")
    page.fill("input[name=batch_size]", "12")
    invalid = _save_and_see_refused(page, "strategy-rho", "ρ (rho) must be between 0 and 10")
    project.refresh_from_db()
    assert (project.strategy, project.strategy_params, project.batch_size) == (
        "ROI_measured", {"value_seconds": 45}, 10)
    invalid.scroll_into_view_if_needed()
    screenshot(page, "loop-settings-refused")
    assert page.script_errors == []


def test_a_lead_sets_a_tagger_parameter_and_a_gazetteer_and_a_bad_value_is_refused(live_server, new_page):
    lead = outside_the_browser_loop(lambda: make_user("typed-lead"))
    project = outside_the_browser_loop(lambda: create_project(name="Typed", schema="MEDDOCAN", created_by=lead))
    page = new_page()
    log_in(page, live_server.url, lead.username, f"/projects/{project.pk}/loop/")

    page.fill("input[name=tagger-max_iterations]", "80")
    page.locator("summary", has_text="HOSPITAL").click()
    page.fill("textarea[name=gazetteer-HOSPITAL]", "Hospital La Paz\nClínica Ruber\n")
    page.click("form.settings button[type=submit]")
    page.wait_for_load_state()
    assert "the next retrain uses them" in page.locator(".message").inner_text()
    project.refresh_from_db()
    assert project.tagger == {"kind": "crf", "params": {"max_iterations": 80}}
    assert project.gazetteers == {"HOSPITAL": ["Hospital La Paz", "Clínica Ruber"]}
    assert page.input_value("input[name=tagger-max_iterations]") == "80"
    assert page.input_value("textarea[name=gazetteer-HOSPITAL]") == "Hospital La Paz\nClínica Ruber"

    # A regularisation out of its range is refused beside its field; the other change waits with it.
    page.fill("input[name=tagger-c2]", "12")
    page.fill("input[name=tagger-max_iterations]", "90")
    _save_and_see_refused(page, "tagger-c2", "c2 (L2 penalty) must be between 0 and 10")
    assert page.input_value("input[name=tagger-max_iterations]") == "90"
    project.refresh_from_db()
    assert project.tagger == {"kind": "crf", "params": {"max_iterations": 80}}
    assert AuditEvent.objects.filter(project=project, detail__has_key="settings").count() == 1
    assert page.script_errors == []
