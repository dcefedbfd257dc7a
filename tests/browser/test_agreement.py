"""The agreement page in a real browser: its figures are the database's, its charts render, and the record in
disagreement is the one marked."""
from __future__ import annotations

import threading

import pytest
from django.db import connections

from annotator.models import Membership
from annotator.services.annotations import submit
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument
from learning.selectors.agreement import project_agreement
from tests.browser.conftest import CHROMIUM, log_in, make_user, screenshot, wait_for_true

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]
NAME, DATE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS"
RECORDS = [  # (name, text, ana's spans, olga's spans)
    ("r1", "Ana Ruiz, visto el 17/03/2009.", [(0, 8, NAME), (19, 29, DATE)], [(0, 3, NAME), (19, 29, DATE)]),
    ("r2", "Luis Gil, visto el 18/03/2009.", [(0, 8, NAME), (19, 29, DATE)], [(0, 8, NAME), (19, 29, DATE)]),
    ("r3", "Eva Sanz, vista el 19/03/2009.", [(0, 8, NAME)], [(0, 8, NAME), (19, 29, DATE)]),
]


def seed():
    """Two annotators submit every record through the queue, in a thread of its own (submissions announce
    themselves through ``async_to_sync``, which Playwright's event loop thread refuses)."""
    outcome = {}

    def run():
        try:
            lead, ana, olga = make_user("agree-lead"), make_user("agree-ana"), make_user("agree-olga")
            project = create_project(name="Agreement", schema="MEDDOCAN", created_by=lead)
            project.annotators_per_document = 2
            project.batch_size = 100
            project.save()
            for person in (ana, olga):
                set_membership(project=project, user=person, role=Membership.Role.ANNOTATOR)
            for name, text, *work in RECORDS:
                import_documents(project=project, annotated=False, documents=[CorpusDocument(text=text, name=name)])
                for person, spans in zip((ana, olga), work):
                    handout = next_record(project=project, user=person)
                    submit(annotation_id=handout.annotation.pk, user=person, version=handout.annotation.version,
                           spans=[{"start": s, "end": e, "label": label} for s, e, label in spans])
            outcome["project"] = project
        except BaseException as error:  # noqa: BLE001 - raised again in the test's thread
            outcome["error"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["project"]


def test_the_agreement_page_shows_the_databases_figures_and_draws_its_charts(live_server, new_page):
    project = seed()
    expected = project_agreement(project=project)
    page = new_page()
    log_in(page, live_server.url, "agree-lead", f"/projects/{project.pk}/agreement/")
    try:
        wait_for_true(page, "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2", timeout=15_000)
    finally:
        screenshot(page, "agreement")
    overall = expected["summary"]["overall"]
    for key in ("strict_f1", "relaxed_f1", "kappa", "alpha"):
        assert page.locator(f'[data-kpi="{key}"]').inner_text() == f"{overall[key]:.3f}", key
    # r1: Ana against Ana Ruiz; r3: a date one of them missed; r2 in full agreement
    assert page.locator('[data-kpi="records"]').inner_text() == "3" and expected["summary"]["unanimous"] == 1
    marked = [row.get_attribute("data-document") for row in page.locator("#agreement-records tr.disagreement").all()]
    assert sorted(int(d) for d in marked) == sorted(r["id"] for r in expected["records"] if not r["unanimous"])
    assert len(marked) == 2
    date_row = page.locator(f'#agreement-labels tr[data-label="{DATE}"] td')
    assert date_row.nth(1).inner_text() == "5" and date_row.nth(2).inner_text() == f"{4 / 5:.3f}"
    assert page.script_errors == []
