"""The de-identification page in a real browser: a lead pastes a note and sees the original and the
de-identified text side by side, the concealed spans highlighted on both, under the Content-Security-Policy."""
from __future__ import annotations

import pytest

from annotator.models import AuditEvent
from annotator.services.imports import import_documents
from annotator.services.projects import create_project
from corpus.synthetic import generate_notes
from learning.services.retrain import train_and_rank
from tests.browser.conftest import CHROMIUM, log_in, make_user, screenshot

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.django_db(transaction=True),
]


def test_a_lead_pastes_a_note_and_sees_both_sides_with_the_concealed_spans(live_server, new_page, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    lead = make_user("dora")
    project = create_project(name="Deid", schema="MEDDOCAN", created_by=lead)
    notes = generate_notes(20, seed=4)
    import_documents(project=project, documents=notes[:12], annotated=True)
    import_documents(project=project, documents=notes[12:16], annotated=True, evaluation=True)
    assert train_and_rank(project=project) is not None
    note = notes[19]
    names = [note.text[s.start:s.end] for s in note.spans if s.label == "NOMBRE_SUJETO_ASISTENCIA"]

    page = new_page()
    log_in(page, live_server.url, lead.username, f"/projects/{project.pk}/")
    page.click("text=De-identify text")
    page.wait_for_url(f"**/projects/{project.pk}/deidentify/")
    page.fill("textarea[name=text]", note.text)
    page.select_option("select[name=policy]", "pseudo")
    page.click("#deidentify-form button[type=submit]")
    page.wait_for_selector("#deidentify-result")

    original = page.locator("#original-text")
    deidentified = page.locator("#deidentified-text")
    assert original.inner_text() == note.text.rstrip("\n") or original.inner_text() == note.text
    marked = original.locator("mark.phi")
    assert marked.count() == deidentified.locator("mark.phi").count() > 5
    shown = marked.all_inner_texts()
    assert sum(name in shown for name in names) >= len(names) // 2 + 1  # most names found and highlighted
    assert all(name not in deidentified.inner_text() for name in names if name in shown)
    assert deidentified.locator("mark.phi[data-strategy=pseudo]").count() == marked.count()
    # Highlighted: the marks have the PHI colour, not the page's.
    assert marked.first.evaluate("el => getComputedStyle(el).backgroundColor") == "rgb(255, 231, 163)"
    assert "PHI concealed" in page.locator("#deidentify-summary").inner_text()
    page.locator("#deidentify-result").evaluate("el => el.scrollIntoView()")
    screenshot(page, "deidentify-side-by-side")
    assert page.script_errors == []
    event = AuditEvent.objects.get(project=project, action=AuditEvent.Action.DEIDENTIFY)
    assert event.user == lead and event.detail["documents"] == 1 and event.detail["source"] == "page"
