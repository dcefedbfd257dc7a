"""Browser tests: Debian's chromium driven by Playwright against pytest-django's live server.

Playwright never downloads a browser here: it launches /usr/bin/chromium (``apt-get install chromium``;
``./deidloop test`` installs it when run as root). Without it the browser tests are skipped.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connections

from annotator.models import Membership, PoolScore, Project, Ranking
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from corpus.types import Document as CorpusDocument

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
PASSWORD = "pw-browser-tests"

@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module.

    While Playwright's sync API runs, the main thread has a running asyncio loop: Django would refuse the
    ORM calls the tests make between browser steps (plain synchronous calls, safe here), and later tests that
    start a loop of their own would fail. So the loop lives only as long as the module's tests, and Django's
    check is relaxed only for that time.
    """
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()


@pytest.fixture
def new_page(browser):
    """``new_page(context=None)``: a page in a fresh browser context (or in ``context``), closed afterwards.

    Every page records uncaught script errors in ``page.script_errors``, and what the Content-Security-Policy
    refused in ``page.csp_violations``; a test fails if anything was refused.
    """
    contexts = []
    pages = []

    def make(context=None):
        if context is None:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            contexts.append(context)
        page = context.new_page()
        page.script_errors = []
        page.csp_violations = []
        page.on("pageerror", lambda error: page.script_errors.append(str(error)))
        page.on("console", lambda message: page.csp_violations.append(message.text)
                if message.type == "error" and "Content Security Policy" in message.text else None)
        pages.append(page)
        return page

    with _served_requests() as serving:
        yield make
        # A workbench saves its draft when its page goes (pagehide, a keepalive request the browser sends even
        # after the page is closed). Saved now and awaited, nothing is left to send; and the pages are closed
        # only once the live server has answered every request, so none of them still holds rows when the
        # test's database is flushed (a save racing the flush deadlocks it).
        for page in pages:
            if not page.is_closed():
                page.evaluate(_SAVE_A_WORKBENCH_DRAFT)
        for context in contexts:
            context.close()
        serving.wait_until_idle()
    violations = [violation for page in pages for violation in page.csp_violations]
    assert not violations, f"the Content-Security-Policy refused: {violations}"


#: Awaited in every page at the end of a test: the draft of a workbench on it saved until nothing is left unsaved
#: (a workbench that is stale, offline or in conflict keeps its edits without sending them, then and on leaving).
_SAVE_A_WORKBENCH_DRAFT = """async () => {
  const workbench = window.deidloopWorkbench;
  for (let attempt = 0; workbench && attempt < 20 && workbench.state().dirty; attempt++) {
    await workbench.saveNow();
    const state = workbench.state();
    if (state.stale || state.offline || state.conflict) break;
  }
}"""


class _ServedRequests:
    """The requests the live server (threads of this process) is serving, from Django's request signals; the
    test client's own requests (server name "testserver") are not counted."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._serving: set[int] = set()  # the threads serving one: a thread serves one request at a time

    def started(self, environ=None, **_) -> None:
        if (environ or {}).get("SERVER_NAME") != "testserver":
            with self._lock:
                self._serving.add(threading.get_ident())

    def finished(self, **_) -> None:
        with self._lock:
            self._serving.discard(threading.get_ident())
            self._lock.notify_all()

    def wait_until_idle(self, timeout: float = 30.0) -> None:
        with self._lock:
            if not self._lock.wait_for(lambda: not self._serving, timeout=timeout):
                raise AssertionError(f"the live server still serves {len(self._serving)} request(s) after {timeout} s")


@contextmanager
def _served_requests():
    from django.core.signals import request_finished, request_started

    served = _ServedRequests()
    request_started.connect(served.started, weak=False)
    request_finished.connect(served.finished, weak=False)
    try:
        yield served
    finally:
        request_started.disconnect(served.started)
        request_finished.disconnect(served.finished)


def wait_for_true(page, expression: str, *, timeout: float = 30_000) -> None:
    """Poll ``expression`` in the page until it is true. Playwright's ``wait_for_function`` builds its predicate
    with ``new Function``, which the site's Content-Security-Policy (no 'unsafe-eval') refuses; ``evaluate``
    goes through the DevTools protocol, which the policy does not govern."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"{expression} was still false after {timeout / 1000:g} s")
        page.wait_for_timeout(50)


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def log_in(page, base_url: str, username: str, path: str, *, password: str = PASSWORD) -> None:
    """Open ``path``, which sends an anonymous visitor to the login page, and log in there."""
    page.goto(base_url + path)
    page.wait_for_url("**/login/**")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form button[type=submit]")
    page.wait_for_load_state()


def fill_new_project(page, *, name: str, language: str, labels: list[tuple[str, str, str]]) -> None:
    """From the project list, open the New project page and fill it in (not sent) for a project with labels of
    its own: (name, colour, key) each."""
    page.click("#new-project-link")
    page.wait_for_url("**/projects/new/")
    page.fill("#new-project input[name=name]", name)
    page.select_option("#new-project select[name=language]", language)
    page.select_option("#new-project select[name=schema]", "custom")
    for row, (label, colour, key) in enumerate(labels):
        page.fill(f"input[name=labels-{row}-name]", label)
        page.fill(f"input[name=labels-{row}-colour]", colour)
        page.fill(f"input[name=labels-{row}-key]", key)


def create_account(page, *, username: str, role: str) -> str:
    """On a project's Members page, a new account given ``role`` and a one-time password; the password shown."""
    page.fill("#id_create-username", username)
    page.select_option("#id_create-role", role)
    page.check("input[name=create-access][value=password]")
    page.click("#create-member button[type=submit]")
    page.wait_for_selector("#one-time-password")
    return page.inner_text("#one-time-password").strip()


def choose_own_password(page, base_url: str, *, one_time_password: str, new_password: str) -> None:
    """On the password change a one-time password leads to, a password of one's own; back on the home page."""
    page.wait_for_url("**/password_change/")
    page.fill("input[name=old_password]", one_time_password)
    page.fill("input[name=new_password1]", new_password)
    page.fill("input[name=new_password2]", new_password)
    page.click("main form button[type=submit]")
    page.wait_for_url(f"{base_url}/")


def ask_for_next_record(page) -> None:
    """On the project's "annotate" page (which claims nothing when opened), ask for the next record."""
    page.wait_for_selector("#annotate-start button[type=submit]")
    page.click("#annotate-start button[type=submit]")
    page.wait_for_load_state()


@dataclass
class Record:
    """A text to import with the model's suggestions: (text fragment, label, confidence) found in order."""

    name: str
    text: str
    suggestions: list[tuple[str, str, float]] = field(default_factory=list)
    possible_missed: list[tuple[str, float]] = field(default_factory=list)


def offsets(text: str, fragment: str, occurrence: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(fragment, start + 1)
    return start, start + len(fragment)


def make_user(username: str):
    return get_user_model().objects.create_user(username, password=PASSWORD)


def seed_project(*, name: str, labels: list[str], records: list[Record], annotators, allow_overlap=False) -> Project:
    """A project whose current ranking serves ``records`` in the given order, with their suggestions."""
    project = create_project(name=name, labels=labels, allow_overlap=allow_overlap)
    for user in annotators:
        set_membership(project=project, user=user, role=Membership.Role.ANNOTATOR)
    import_documents(
        project=project, documents=[CorpusDocument(text=r.text, name=r.name) for r in records], annotated=False,
    )
    ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    documents = {d.external_id: d for d in project.documents.all()}
    PoolScore.objects.bulk_create([
        PoolScore(
            ranking=ranking, document=documents[record.name], score=1.0 / (rank + 1), rank=rank + 1,
            pre_annotations={
                "spans": [
                    {"start": s, "end": e, "label": label, "confidence": confidence}
                    for fragment, label, confidence in record.suggestions
                    for s, e in [offsets(record.text, fragment)]
                ],
                "possible_missed": [
                    [s, e, p] for fragment, p in record.possible_missed for s, e in [offsets(record.text, fragment)]
                ],
            },
        )
        for rank, record in enumerate(records)
    ])
    return project


def outside_the_browser_loop(work: Callable[[], object]):
    """``work()`` run in a thread of its own, its result returned (its exception raised here): submissions
    announce themselves through ``async_to_sync``, which refuses to run in the thread where Playwright's event
    loop runs."""
    outcome = {}

    def run():
        try:
            outcome["result"] = work()
        except BaseException as error:  # noqa: BLE001 - raised again in the test's thread
            outcome["error"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def seed_double_annotation(*, name: str, prefix: str, records) -> Project:
    """A project asking for two annotators per record, with a lead ``{prefix}-lead``: each of ``records``
    — (name, text, first annotator's spans, second's), spans as (start, end, label) — imported and submitted
    through the queue by ``{prefix}-ana`` and then ``{prefix}-olga``."""
    from annotator.services.annotations import submit
    from annotator.services.queue import next_record

    def seed() -> Project:
        lead, ana, olga = make_user(f"{prefix}-lead"), make_user(f"{prefix}-ana"), make_user(f"{prefix}-olga")
        project = create_project(name=name, schema="MEDDOCAN", created_by=lead)
        project.annotators_per_document = 2
        project.batch_size = 100  # no retrain: there are no workers
        project.save()
        for person in (ana, olga):
            set_membership(project=project, user=person, role=Membership.Role.ANNOTATOR)
        for record_name, text, *work in records:
            import_documents(project=project, annotated=False, documents=[CorpusDocument(text=text, name=record_name)])
            for person, spans in zip((ana, olga), work):
                handout = next_record(project=project, user=person)
                submit(annotation_id=handout.annotation.pk, user=person, version=handout.annotation.version,
                       spans=[{"start": s, "end": e, "label": label} for s, e, label in spans])
        return project

    return outside_the_browser_loop(seed)
