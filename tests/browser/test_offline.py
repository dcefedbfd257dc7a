"""The workbench when the server goes away: the draft is kept in the browser, tried again, saved when the server
is back, survives a reload, and never overwrites a newer version silently.

One test stops and restarts a real web process (uvicorn serving the test database, as ``./deidloop up`` does);
the others make the server unreachable for the page only, with Playwright's request routing.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests
from django.conf import global_settings

from annotator.models import Annotation, Document
from annotator.services.annotations import save_draft
from config.launcher import _listening_socket, web_command
from tests.browser.conftest import (
    CHROMIUM,
    SCREENSHOTS,
    Record,
    ask_for_next_record,
    log_in,
    make_user,
    offsets,
    screenshot,
    seed_project,
    wait_for_true,
)
from tests.integration.celery_worker import database_url

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
LABELS = ["NAME", "DATE", "CITY", "ID"]
CLINICAL = "Paciente Juan Pérez, nacido el 12/03/1960 en Sevilla, DNI 12345678X. Vive en Sevilla desde 2001."
OFFLINE_TEXT = "Connection lost — your draft is kept in this browser and will be saved when the server is back."
NEXT_OFFLINE_TEXT = "Connection lost — your record is submitted; the next one opens when the server is back."
API = "**/api/annotations/**"


def records() -> list[Record]:
    return [
        Record(name="note-1", text=CLINICAL,
               suggestions=[("Pérez", "NAME", 0.9), ("12/03/1960", "CITY", 0.55), ("DNI", "ID", 0.4)]),
        Record(name="note-2", text="Ingresa María López el 01/02/2020 en Madrid.",
               suggestions=[("María López", "NAME", 0.8)]),
    ]


def span(fragment: str, label: str, origin: str = "model", status: str = "accepted") -> dict:
    start, end = offsets(CLINICAL, fragment)
    return {"start": start, "end": end, "label": label, "origin": origin, "status": status}


# The record as the tests edit it: "Tab Enter" accepts Pérez (and focuses the date), "2" makes the date a DATE,
# "Tab x" rejects DNI.
ACCEPTED = [span("Pérez", "NAME"), span("12/03/1960", "CITY", status="pending"), span("DNI", "ID", status="pending")]
RELABELLED = [span("Pérez", "NAME"), span("12/03/1960", "DATE"), span("DNI", "ID", status="pending")]
REJECTED = [span("Pérez", "NAME"), span("12/03/1960", "DATE")]


def press(page, *keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)


def open_workbench(page) -> None:
    page.wait_for_selector("#wb[data-ready=true]")


def state(page) -> dict:
    return page.evaluate("window.deidloopWorkbench.state()")


def wait_saved(page, timeout: float = 30_000) -> None:
    wait_for_true(page, 
        "document.getElementById('wb-save').textContent === 'Saved' && !window.deidloopWorkbench.state().dirty",
        timeout=timeout,
    )


def wait_offline(page) -> None:
    page.locator("#wb-offline").wait_for(state="visible")


def kept_draft(page, annotation_id: int):
    return page.evaluate(f"JSON.parse(localStorage.getItem('deidloop:draft:{annotation_id}'))")


def stored(annotation_id: int) -> tuple[int, str, list[dict]]:
    annotation = Annotation.objects.get(pk=annotation_id)
    return annotation.version, annotation.state, annotation.spans


def start_editing(page, base_url: str, project) -> Annotation:
    """Open the first record, accept the first suggestion and wait for that draft (version 2) to be saved."""
    log_in(page, base_url, "ana", f"/projects/{project.pk}/annotate/")
    ask_for_next_record(page)
    open_workbench(page)
    press(page, "Tab", "Enter")
    wait_saved(page)
    annotation = Annotation.objects.get(document__external_id="note-1", annotator__username="ana")
    assert (annotation.version, annotation.spans) == (2, ACCEPTED)
    return annotation


def assert_kept(page, annotation_id: int, *, version: int, spans: list[dict]) -> dict:
    kept = kept_draft(page, annotation_id)
    assert kept is not None, "no draft kept in the browser"
    assert (kept["shape"], kept["annotation"], kept["version"], kept["spans"]) == (1, annotation_id, version, spans)
    assert kept["activeSeconds"] >= 0 and kept["savedAt"] > 0
    return kept


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class WebProcess:
    """One web process on the test database, as ``./deidloop up`` starts them, that a test can stop and
    start again on the same port."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.process: subprocess.Popen | None = None

    def start(self, seconds: float = 120) -> "WebProcess":
        env = {key: value for key, value in os.environ.items() if key != "DJANGO_ALLOW_ASYNC_UNSAFE"}
        # DEBUG serves the static files from the source folders (WhiteNoise's finders), as the live server does.
        env.update(DATABASE_URL=database_url(), DEBUG="true", PYTHONUNBUFFERED="1", DEIDLOOP_WEB_THREADS="2")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # The launcher's own command, on a listening socket opened here and inherited, as ``up`` does.
        with self.log.open("a") as output, _listening_socket("127.0.0.1", self.port) as listener:
            self.process = subprocess.Popen(
                web_command(listener.fileno()), cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True, pass_fds=(listener.fileno(),),
            )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the web process exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if requests.get(f"{self.url}/login/", timeout=5).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the web process did not serve within {seconds} s:\n{self.tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{self.url}/login/", timeout=5)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else "(no log)"


@pytest.fixture
def web_process():
    web = WebProcess(SCREENSHOTS.parent / "offline-web.log")
    yield web
    web.stop()


def test_stopping_the_web_process_keeps_the_draft_and_saves_it_when_it_is_back(web_process, new_page, settings):
    # The web process checks passwords with the project's own hashers, not the tests' fast one.
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    ana = make_user("ana")
    project = seed_project(name="Notes", labels=LABELS, records=records(), annotators=[ana])
    web = web_process.start()
    page = new_page()
    annotation = start_editing(page, web.url, project)
    assert page.locator("#wb-offline").is_hidden()
    assert kept_draft(page, annotation.pk) is None  # nothing kept while the server has it all

    web.stop()
    press(page, "2")  # the date becomes a DATE; its save finds no server
    wait_offline(page)
    assert page.locator("#wb-offline-text").inner_text() == OFFLINE_TEXT
    assert page.locator("#wb-save").inner_text() == "Kept in this browser"
    kept = assert_kept(page, annotation.pk, version=2, spans=RELABELLED)
    assert kept["unconfirmed"][0] == {"version": 2, "spans": RELABELLED, "submit": False}
    screenshot(page, "20-offline-banner")

    press(page, "Tab", "x")  # more work while the server is away: kept as it is done
    assert_kept(page, annotation.pk, version=2, spans=REJECTED)
    assert state(page)["spans"] == REJECTED
    assert state(page)["offline"] is True
    assert stored(annotation.pk) == (2, "draft", ACCEPTED)

    web.start()
    page.locator("#wb-offline").wait_for(state="hidden", timeout=60_000)
    wait_saved(page)
    assert stored(annotation.pk) == (3, "draft", REJECTED)
    assert kept_draft(page, annotation.pk) is None
    assert state(page)["offline"] is False
    assert page.locator("#wb-message").inner_text() == "The server is back: your draft is saved."
    assert Annotation.objects.get(pk=annotation.pk).active_seconds > 0
    assert page.script_errors == []


def test_a_kept_draft_survives_a_reload_and_submit_and_next_wait_for_the_server(live_server, new_page):
    ana = make_user("ana")
    project = seed_project(name="Notes", labels=LABELS, records=records(), annotators=[ana])
    page = new_page()
    annotation = start_editing(page, live_server.url, project)
    answered = []
    page.on("response", lambda r: answered.append((r.request.method, r.url.rstrip("/").rsplit("/", 1)[-1], r.status))
            if "/api/" in r.url else None)

    # The server (or its database) is away: every write is answered 503.
    page.route(API, lambda route: route.fulfill(status=503, body="Service Unavailable"))
    press(page, "2")
    wait_offline(page)
    assert page.locator("#wb-offline-text").inner_text() == OFFLINE_TEXT
    assert_kept(page, annotation.pk, version=2, spans=RELABELLED)

    # A reload while the server is still away: the kept draft is put back on the page and tried again.
    page.reload()
    open_workbench(page)
    assert state(page)["spans"] == RELABELLED
    assert state(page)["version"] == 2
    wait_offline(page)
    assert_kept(page, annotation.pk, version=2, spans=RELABELLED)
    assert stored(annotation.pk) == (2, "draft", ACCEPTED)

    # Submitting while away fails the same way: nothing submitted, the draft still kept.
    press(page, "Control+Enter")
    wait_for_true(page, "document.getElementById('wb-message').textContent.startsWith('Not submitted')")
    assert page.locator("#wb-message").inner_text() == (
        "Not submitted: the server could not be reached. Your draft is kept; submit again when it is back.")
    assert ("POST", "submit", 503) in answered
    wait_offline(page)
    assert stored(annotation.pk) == (2, "draft", ACCEPTED)
    assert page.url.endswith(f"/annotate/{annotation.document_id}/")

    # Back: the next try saves the draft, and the kept copy and the banner go.
    page.unroute(API)
    page.click("#wb-offline button")  # "Try now"
    page.locator("#wb-offline").wait_for(state="hidden")
    wait_saved(page)
    assert stored(annotation.pk) == (3, "draft", RELABELLED)
    assert kept_draft(page, annotation.pk) is None

    # Submitted, but the next record cannot be handed out: the page says so and opens it when it can.
    page.route("**/api/projects/*/next/", lambda route: route.abort("connectionrefused"))
    press(page, "Control+Enter")
    wait_offline(page)
    assert page.locator("#wb-offline-text").inner_text() == NEXT_OFFLINE_TEXT
    version, state_, spans = stored(annotation.pk)
    assert (version, state_) == (4, "submitted")
    assert [(s["start"], s["end"], s["label"]) for s in spans] == [
        (s["start"], s["end"], s["label"]) for s in RELABELLED]
    page.unroute("**/api/projects/*/next/")
    page.click("#wb-offline button")
    page.wait_for_url(f"**/annotate/{Document.objects.get(external_id='note-2').pk}/")
    open_workbench(page)
    assert page.locator("#wb-offline").is_hidden()
    assert page.script_errors == []


def test_a_write_that_got_through_before_the_connection_broke_is_recognised_as_ours(live_server, new_page):
    ana = make_user("ana")
    project = seed_project(name="Notes", labels=LABELS, records=records(), annotators=[ana])
    page = new_page()
    annotation = start_editing(page, live_server.url, project)

    # The first write reaches the server but its answer is lost; later ones find no server.
    reached = []

    def lose_the_answer(route):
        if not reached:
            reached.append(route.fetch().status)
        route.abort("connectionreset")

    page.route(API, lose_the_answer)
    press(page, "2")
    wait_offline(page)
    assert reached == [200]
    assert stored(annotation.pk) == (3, "draft", RELABELLED)  # it did land
    press(page, "Tab", "x")
    assert_kept(page, annotation.pk, version=2, spans=REJECTED)

    # Back: the retry at version 2 is refused (409), the server's version 3 is recognised as this browser's own
    # write, and the later edit is saved over it: no conflict shown.
    page.unroute(API)
    page.click("#wb-offline button")
    page.locator("#wb-offline").wait_for(state="hidden")
    wait_saved(page)
    assert stored(annotation.pk) == (4, "draft", REJECTED)
    assert page.locator("#wb-conflict").is_hidden() and page.locator("#wb-stale").is_hidden()
    assert kept_draft(page, annotation.pk) is None
    assert page.script_errors == []


def conflict_text(kept: int, now: int) -> str:
    return (f"This browser kept a draft of this record that never reached the server (edited from version {kept}), "
            f"but the record has changed since (now version {now}). Nothing was overwritten: choose which to keep.")


def test_a_kept_draft_never_overwrites_a_newer_version_silently(live_server, new_page):
    ana = make_user("ana")
    project = seed_project(name="Notes", labels=LABELS, records=records(), annotators=[ana])
    page = new_page()
    annotation = start_editing(page, live_server.url, project)

    page.route(API, lambda route: route.abort("connectionrefused"))
    press(page, "2")
    wait_offline(page)
    # Meanwhile the record is saved elsewhere (another tab of the same annotator).
    elsewhere = [span("Pérez", "NAME"), span("DNI", "ID")]
    save_draft(annotation_id=annotation.pk, user=ana, version=2, spans=elsewhere)
    assert stored(annotation.pk) == (3, "draft", elsewhere)

    page.unroute(API)
    page.click("#wb-offline button")
    conflict = page.locator("#wb-conflict")
    conflict.wait_for(state="visible")
    assert conflict.locator("p").inner_text() == conflict_text(2, 3)
    assert page.locator("#wb-offline").is_hidden()
    assert page.locator("#wb-save").inner_text() == "Not saved"
    assert stored(annotation.pk) == (3, "draft", elsewhere)
    assert_kept(page, annotation.pk, version=2, spans=RELABELLED)
    screenshot(page, "21-kept-draft-conflict")

    # Edits to the kept draft while the conflict is open are kept with it, not sent.
    press(page, "Escape", "Shift+Tab", "x")  # the caret is on the date: Shift+Tab focuses Pérez, x rejects it
    edited = [span("12/03/1960", "DATE"), span("DNI", "ID", status="pending")]
    assert state(page)["spans"] == edited
    page.wait_for_timeout(1500)  # longer than the autosave delay
    assert stored(annotation.pk) == (3, "draft", elsewhere)
    assert_kept(page, annotation.pk, version=2, spans=edited)

    # After a reload the page shows the server's version, and the same choice.
    page.reload()
    open_workbench(page)
    conflict.wait_for(state="visible")
    assert conflict.locator("p").inner_text() == conflict_text(2, 3)
    assert state(page)["spans"] == elsewhere and state(page)["version"] == 3
    assert stored(annotation.pk) == (3, "draft", elsewhere)

    # The annotator chooses the kept draft: it is saved over version 3, by choice.
    page.click('#wb-conflict [data-action="use-local"]')
    conflict.wait_for(state="hidden")
    wait_saved(page)
    assert stored(annotation.pk) == (4, "draft", edited)
    assert state(page)["spans"] == edited
    assert kept_draft(page, annotation.pk) is None
    assert page.script_errors == []


def test_discarding_a_kept_draft_keeps_the_server_version(live_server, new_page):
    ana = make_user("ana")
    project = seed_project(name="Notes", labels=LABELS, records=records(), annotators=[ana])
    page = new_page()
    annotation = start_editing(page, live_server.url, project)
    # A draft kept by an earlier visit, edited from version 1 (the server is at 2 now).
    page.evaluate("""([key, id, spans]) => localStorage.setItem(key, JSON.stringify({
        shape: 1, annotation: id, version: 1, spans: spans, activeSeconds: 4, unconfirmed: [], savedAt: 1}))""",
                  [f"deidloop:draft:{annotation.pk}", annotation.pk, REJECTED])
    page.reload()
    open_workbench(page)
    conflict = page.locator("#wb-conflict")
    conflict.wait_for(state="visible")
    assert conflict.locator("p").inner_text() == conflict_text(1, 2)
    assert conflict.locator('[data-action="use-local"]').is_visible()

    page.click('#wb-conflict [data-action="discard-local"]')
    conflict.wait_for(state="hidden")
    assert kept_draft(page, annotation.pk) is None
    assert state(page)["spans"] == ACCEPTED and state(page)["version"] == 2
    assert stored(annotation.pk) == (2, "draft", ACCEPTED)
    press(page, "Tab", "Tab", "2")  # and work goes on as usual: the date becomes a DATE
    wait_saved(page)
    assert stored(annotation.pk) == (3, "draft", RELABELLED)
    assert page.script_errors == []
