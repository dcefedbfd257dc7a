"""The user guide's pages walked in a real browser by an annotator, a lead and an administrator on a seeded
project: each page links to its section of the guide, the guide opens at that section, and — with
``DEIDLOOP_SCREENSHOTS=1`` (``./deidloop screenshots``) — every picture of ``docs/guide.md`` is taken on the way."""
from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from annotator.models import Document
from corpus.synthetic import generate_notes
from tests.browser.conftest import CHROMIUM, PASSWORD, log_in, outside_the_browser_loop, wait_for_true
from tests.browser.guide_images import VIEWPORT, guide_screenshot
from tests.seeding import seed_dashboard_project

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

_ANCHOR = re.compile(r"/guide/#([a-z0-9-]+)$")


def seeded_project():
    def seed():
        with transaction.atomic():
            return seed_dashboard_project(name="Cardiology", password=PASSWORD, batches=2, batch_size=6)

    return outside_the_browser_loop(seed)


def person(browser, new_page):
    """A page of its own (cookies apart) at the guide's viewport, in English."""
    return new_page(browser.new_context(viewport=VIEWPORT, locale="en-US"))


def help_anchor(page) -> str:
    """The section of the guide the page's help link opens."""
    links = page.locator("main a.help-link")
    assert links.count() == 1, f"{page.url} has {links.count()} help links"
    match = _ANCHOR.search(links.get_attribute("href"))
    assert match, links.get_attribute("href")
    return match.group(1)


def visit(page, url: str, anchor: str, image: str | None = None, *, ready: str = "main h1") -> None:
    page.goto(url)
    page.wait_for_selector(ready)
    assert help_anchor(page) == anchor
    if image:
        guide_screenshot(page, image)


def test_each_page_opens_its_section_of_the_guide(live_server, browser, new_page, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    seeded = seeded_project()
    project, lead, ana = seeded.project, seeded.lead, seeded.annotators[0]
    base = f"{live_server.url}/projects/{project.pk}"
    get_user_model().objects.create_superuser("root", password=PASSWORD)

    # An annotator: the next record in the workbench, with the model's suggestions, and its shortcuts.
    annotator = person(browser, new_page)
    log_in(annotator, live_server.url, ana.username, f"/projects/{project.pk}/annotate/")
    annotator.wait_for_selector("#annotate-start button[type=submit]")
    assert help_anchor(annotator) == "workbench"
    annotator.click("#annotate-start button[type=submit]")
    annotator.wait_for_selector("#wb[data-ready=true]")
    assert annotator.locator("#wb-doc mark").count() > 0
    assert _ANCHOR.search(annotator.get_attribute(".wb-actions a.help-link", "href")).group(1) == "workbench"
    annotator.locator("#wb-doc").focus()
    annotator.keyboard.press("Tab")  # the first suggestion focused: the panel on the right describes it
    wait_for_true(annotator, "document.querySelector('#wb-focus-info q') !== null")
    guide_screenshot(annotator, "workbench")
    annotator.keyboard.press("?")
    annotator.wait_for_selector("#wb-help:not([hidden])")
    guide_screenshot(annotator, "workbench-shortcuts")
    annotator.keyboard.press("Escape")

    # A lead: the project's records, one reviewed, the loop, the dashboard, the people, members, an import.
    lead_page = person(browser, new_page)
    log_in(lead_page, live_server.url, lead.username, f"/projects/{project.pk}/")
    lead_page.wait_for_selector("#record-table")
    assert help_anchor(lead_page) == "records"
    guide_screenshot(lead_page, "project-page")
    submitted = Document.objects.filter(project=project, role="pool", status="submitted").order_by("pk").first()
    visit(lead_page, f"{base}/records/{submitted.pk}/", "record-review", "record-review")

    visit(lead_page, f"{base}/loop/", "loop-settings", "loop-state")
    lead_page.locator("h2#settings").evaluate("heading => heading.scrollIntoView()")
    guide_screenshot(lead_page, "loop-settings")
    lead_page.locator("form.settings fieldset").nth(2).evaluate("fieldset => fieldset.scrollIntoView()")
    guide_screenshot(lead_page, "loop-settings-retraining")

    visit(lead_page, f"{base}/dashboard/", "dashboard", ready="#curve-chart .main-svg")
    wait_for_true(lead_page, "Number(document.getElementById('curve-chart').dataset.renders) >= 1")
    guide_screenshot(lead_page, "dashboard")

    visit(lead_page, f"{base}/people/", "people", "people")
    visit(lead_page, f"{base}/members/", "members", "members")
    visit(lead_page, f"{base}/labels/", "labels", "labels")
    visit(lead_page, f"{base}/export/", "export", "export")
    visit(lead_page, f"{base}/deid-settings/", "deid-settings")
    visit(lead_page, f"{base}/release-planner/", "release-planner", "release-planner")
    visit(lead_page, f"{base}/clusters/", "clusters")
    visit(lead_page, f"{base}/agreement/", "agreement")
    visit(lead_page, f"{base}/adjudication/", "adjudication")
    visit(lead_page, f"{base}/audit/", "audit-log", "audit-log")

    notes = generate_notes(6, seed=11)
    upload = "".join(json.dumps({"text": note.text, "spans": [
        {"start": s.start, "end": s.end, "label": s.label} for s in note.spans]}) + "\n" for note in notes)
    visit(lead_page, f"{base}/import/", "import")
    lead_page.select_option("select[name=format]", "jsonl")
    lead_page.fill("input[name=evaluation_percent]", "30")
    lead_page.set_input_files("input[name=files]", files=[
        {"name": "notes.jsonl", "mimeType": "application/json", "buffer": upload.encode()}])
    guide_screenshot(lead_page, "import")
    lead_page.click("#import-form button[type=submit]")
    lead_page.wait_for_url("**/import/preview/**")
    assert lead_page.inner_text('[data-count="records"]') == "6"
    assert help_anchor(lead_page) == "import-preview"
    guide_screenshot(lead_page, "import-preview")

    note = generate_notes(1, seed=12)[0]
    visit(lead_page, f"{base}/deidentify/", "deidentify")
    lead_page.fill("textarea[name=text]", note.text)
    lead_page.click("#deidentify-form button[type=submit]")
    lead_page.wait_for_selector("#deidentify-result")
    lead_page.locator("#deidentify-result").evaluate("el => el.scrollIntoView()")
    guide_screenshot(lead_page, "deidentify")

    # The help link opens the guide at the page's section.
    lead_page.goto(f"{base}/loop/")
    lead_page.click("main a.help-link")
    lead_page.wait_for_url("**/guide/#loop-settings")
    assert lead_page.locator("article.guide h2#loop-settings, article.guide h3#loop-settings").count() == 1
    assert lead_page.locator("article.guide img").count() > 0

    # An administrator: a new project, the site's accounts.
    admin = person(browser, new_page)
    log_in(admin, live_server.url, "root", "/projects/new/")
    admin.wait_for_selector("main h1")
    assert help_anchor(admin) == "new-project"
    guide_screenshot(admin, "new-project")
    visit(admin, f"{live_server.url}/users/", "users", "users")
    visit(admin, f"{live_server.url}/", "projects")

    for page in (annotator, lead_page, admin):
        assert page.script_errors == []
        page.context.close()
