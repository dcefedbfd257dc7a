"""Reviewing records in a real browser: a lead narrows the record list (swapped by htmx), opens a submitted
record, sends it back with a note; the annotator finds it reopened as their record, with the note."""
from __future__ import annotations

import pytest

from annotator.models import Annotation, Document, Membership
from annotator.services.projects import set_membership
from corpus.text import tokenize
from tests.browser.conftest import (
    CHROMIUM, Record, log_in, make_user, outside_the_browser_loop, screenshot, seed_project, wait_for_true,
)

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]
NAME = "NOMBRE_SUJETO_ASISTENCIA"
RECORDS = [
    Record("r1", "Paciente Ana Ruiz, vista el 3 de mayo en Soria.", [("Ana", NAME, 0.9)]),
    Record("r2", "Varón de 54 años remitido por dolor torácico.", []),
]
NOTE = "The name is Ana Ruiz: mark it whole."


def seed():
    from annotator.services.annotations import submit
    from annotator.services.queue import next_record

    lead, ana = make_user("rev-lead"), make_user("rev-ana")
    project = seed_project(name="Review", labels=[NAME, "FECHAS"], records=RECORDS, annotators=[ana])
    set_membership(project=project, user=lead, role=Membership.Role.LEAD)
    handout = next_record(project=project, user=ana)
    submit(annotation_id=handout.annotation.pk, user=ana, version=handout.annotation.version,
           spans=[{"start": 9, "end": 12, "label": NAME}])
    return project


def test_a_lead_sends_a_record_back_and_the_annotator_finds_it_with_the_note(live_server, new_page):
    project = outside_the_browser_loop(seed)
    r1 = Document.objects.get(project=project, external_id="r1")

    lead = new_page()
    log_in(lead, live_server.url, "rev-lead", f"/projects/{project.pk}/")
    row = lead.locator(f'#record-table tr[data-record="{r1.pk}"]')
    assert row.locator("td.num").inner_text() == str(len(tokenize(RECORDS[0].text)))  # real counts, not None
    assert "rev-ana" in row.inner_text()
    lead.select_option("#id_status", "submitted")  # the table is swapped in place
    wait_for_true(lead, "document.querySelectorAll('#record-table tbody tr').length === 1")
    assert lead.locator("#record-count").inner_text() == "1 record"
    assert "status=submitted" in lead.url
    screenshot(lead, "record-list")

    lead.click(f'#record-table tr[data-record="{r1.pk}"] a')
    lead.wait_for_url(f"**/records/{r1.pk}/")
    assert lead.locator("#review-text mark.phi").inner_text() == "Ana"
    assert lead.locator("#record-history li").first.get_attribute("data-kind") == "submitted"
    lead.fill("#id_note", NOTE)
    lead.click("#send-back-form button[type=submit]")
    lead.wait_for_load_state()
    assert lead.locator("#record-status").inner_text() == "Assigned"
    assert lead.locator("#record-history li").first.get_attribute("data-kind") == "sent_back"
    assert NOTE in lead.locator("#record-history li").first.inner_text()
    screenshot(lead, "record-sent-back")

    annotator = new_page()
    log_in(annotator, live_server.url, "rev-ana", f"/projects/{project.pk}/annotate/")
    annotator.wait_for_url(f"**/annotate/{r1.pk}/")  # their open record: the one sent back
    assert NOTE in annotator.locator("#wb-correction").inner_text()
    assert annotator.locator("#wb-state").inner_text() == "Draft"
    screenshot(annotator, "record-correction-note")
    assert Annotation.objects.get(document=r1).state == Annotation.State.DRAFT


def test_a_lead_fixes_the_gold_by_selecting_text(live_server, new_page):
    project = outside_the_browser_loop(seed)
    r1 = Document.objects.get(project=project, external_id="r1")
    page = new_page()
    log_in(page, live_server.url, "rev-lead", f"/projects/{project.pk}/records/{r1.pk}/fix/")
    page.evaluate("""(word) => {
        const walker = document.createTreeWalker(document.getElementById('fix-text'), NodeFilter.SHOW_TEXT);
        const nodes = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
        const first = nodes.find((node) => node.textContent.includes('Ana'));
        const last = nodes.find((node) => node.textContent.includes('Ruiz'));
        const range = document.createRange();
        range.setStart(first, first.textContent.indexOf('Ana'));
        range.setEnd(last, last.textContent.indexOf('Ruiz') + 4);
        window.getSelection().removeAllRanges();
        window.getSelection().addRange(range);
        document.getElementById('fix-text').dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    }""", "Ana Ruiz")
    assert page.input_value("#fix-new input[name$='-start']") == "9"
    assert page.input_value("#fix-new input[name$='-end']") == "17"
    assert "Ana Ruiz" in page.locator("#fix-selection").inner_text()
    page.select_option("#fix-new select[name$='-label']", NAME)
    page.check("input[name='span-0-remove']")  # the partial "Ana"
    page.fill("#id_note", "whole name")
    page.click("#fix-form button[type=submit]")
    page.wait_for_url(f"**/records/{r1.pk}/")
    assert page.locator("#review-text mark.phi").inner_text() == "Ana Ruiz"
    assert page.locator("#record-history li").first.get_attribute("data-kind") == "fixed"
    screenshot(page, "record-fixed")
