"""A new administrator's whole path through a project, in a real browser: the project with two labels of its
own, an annotator's account, a brat corpus imported through the preview with a fifth kept for evaluation, a
setting of the loop refused and then stored, the annotator's first record in Spanish, sent back with a note by
the administrator as its lead, and found again by the annotator with that note."""
from __future__ import annotations

from dataclasses import replace

import pytest
from django.contrib.auth import get_user_model

from annotator.models import Annotation, AuditEvent, Document, Membership, Project
from corpus.synthetic import generate_notes
from tests.browser.conftest import (
    CHROMIUM, PASSWORD, choose_own_password, create_account, fill_new_project, log_in, offsets, screenshot,
    wait_for_true,
)
from tests.browser.test_import_export import brat_zip

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

NAME, DATE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS"
# The record the annotator gets: a sure date pattern suggests the date; the name is theirs to add.
NEW_TEXT = "Paciente Lucía Gómez Prieto, ingresada el 14/05/2021 en Zaragoza por disnea."
NOTE = "Falta el segundo apellido: marque el nombre completo."
ANNOTATOR_PASSWORD = "una-clave-propia-de-nora-7"


def drag_over(page, fragment: str) -> None:
    """Select ``fragment`` of the workbench's text with the mouse, from inside its first character to inside
    its last (the workbench snaps a selection to whole tokens)."""
    page.evaluate("""(fragment) => {
        const walker = document.createTreeWalker(document.getElementById('wb-doc'), NodeFilter.SHOW_TEXT);
        let node; while ((node = walker.nextNode()) && !node.data.includes(fragment)) {}
        const range = document.createRange();
        const at = node.data.indexOf(fragment);
        range.setStart(node, at);
        range.setEnd(node, at + fragment.length);
        const rects = range.getClientRects(), first = rects[0], last = rects[rects.length - 1];
        window.__dragFrom = [first.left + 2, first.top + first.height / 2];
        window.__dragTo = [last.right - 2, last.top + last.height / 2];
    }""", fragment)
    page.mouse.move(*page.evaluate("window.__dragFrom"))
    page.mouse.down()
    page.mouse.move(*page.evaluate("window.__dragTo"), steps=5)
    page.mouse.up()


def submit_loop_settings(page) -> None:
    page.click("form.settings button[type=submit]")
    page.wait_for_load_state()


def test_a_new_admin_runs_a_project_from_creation_to_a_record_sent_back(live_server, new_page, tmp_path):
    admin = get_user_model().objects.create_superuser("ines-admin", password=PASSWORD)

    # 1. The administrator creates the project with two labels of their own, each with its colour and key.
    lead = new_page()
    log_in(lead, live_server.url, admin.username, "/")
    fill_new_project(lead, name="Altas de neumología", language="es",
                     labels=[(NAME, "#2255cc", "n"), (DATE, "#cc5522", "f")])
    lead.click("#new-project button[type=submit]")
    lead.wait_for_url("**/import/")
    project = Project.objects.get(name="Altas de neumología")
    assert (project.language, project.labels) == ("es", [NAME, DATE])
    assert project.label_styles == {NAME: {"colour": "#2255cc", "key": "n"}, DATE: {"colour": "#cc5522", "key": "f"}}
    assert Membership.objects.get(project=project, user=admin).role == Membership.Role.LEAD
    project_url = f"{live_server.url}/projects/{project.pk}/"

    # 2. On the Members page, an annotator's account with a one-time password, shown once.
    lead.goto(project_url)
    lead.click("#members-link")
    lead.wait_for_url(f"**/projects/{project.pk}/members/")
    one_time_password = create_account(lead, username="nora", role=Membership.Role.ANNOTATOR)
    assert len(one_time_password) >= 16
    nora = get_user_model().objects.get(username="nora")
    assert Membership.objects.get(project=project, user=nora).role == Membership.Role.ANNOTATOR

    # 3. A brat zip of ten notes with a fifth set aside for evaluation, through the preview; then a text to
    #    annotate (the gold import fills no one's queue).
    notes = [replace(note, spans=tuple(s for s in note.spans if s.label in (NAME, DATE)))
             for note in generate_notes(10, seed=11)]
    lead.goto(project_url)
    lead.click("text=Import documents")
    lead.wait_for_url(f"**/projects/{project.pk}/import/")
    lead.select_option("select[name=format]", "brat")
    lead.fill("input[name=evaluation_percent]", "20")
    lead.set_input_files("input[name=files]", files=[
        {"name": "altas.zip", "mimeType": "application/zip", "buffer": brat_zip(notes, tmp_path / "altas")}])
    lead.click("#import-form button[type=submit]")
    lead.wait_for_url("**/import/preview/**")
    assert lead.inner_text('[data-count="records"]') == "10"
    assert lead.inner_text('[data-count="spans"]') == str(sum(len(note.spans) for note in notes))
    assert lead.inner_text('[data-count="evaluation"]').startswith("2 ")
    assert lead.locator("[data-unknown]").count() == 0
    assert Document.objects.filter(project=project).count() == 0
    lead.click("#import-confirm button[value=import]")
    lead.wait_for_url(project_url)
    assert "2 of them set aside as the evaluation set" in lead.inner_text("div.message")
    stats = " ".join(lead.inner_text(".stats").split())
    assert "8 pool documents" in stats and "2 evaluation" in stats
    evaluation = Document.objects.filter(project=project, role=Document.Role.EVALUATION)
    assert evaluation.count() == 2
    assert all(Annotation.objects.get(document=record).spans for record in evaluation)  # held with their gold

    lead.click("text=Import documents")
    lead.wait_for_url(f"**/projects/{project.pk}/import/")
    lead.select_option("select[name=format]", "txt")
    lead.set_input_files("input[name=files]", files=[
        {"name": "alta-nueva.txt", "mimeType": "text/plain", "buffer": NEW_TEXT.encode()}])
    lead.click("#import-form button[type=submit]")
    lead.wait_for_url("**/import/preview/**")
    lead.click("#import-confirm button[value=import]")
    lead.wait_for_url(project_url)
    record = Document.objects.get(project=project, external_id="alta-nueva")
    assert (record.role, record.status) == (Document.Role.POOL, Document.Status.POOL)

    # 4. A loop setting through the typed form: out of its range it is refused beside its field and nothing is
    #    stored; in range it is stored, audited.
    lead.click(f"a[href='/projects/{project.pk}/loop/']")
    lead.wait_for_url(f"**/projects/{project.pk}/loop/")
    stored_params = project.strategy_params
    lead.fill("input[name=strategy-theta]", "1.5")
    submit_loop_settings(lead)
    invalid = lead.locator(".field.invalid")
    assert invalid.count() == 1 and invalid.locator("[name=strategy-theta]").count() == 1
    assert "θ (theta) must be between 0 and 1" in invalid.inner_text()
    project.refresh_from_db()
    assert project.strategy_params == stored_params
    assert not AuditEvent.objects.filter(project=project, detail__has_key="settings").exists()
    lead.fill("input[name=strategy-theta]", "0.4")
    submit_loop_settings(lead)
    assert "the next retrain uses them" in lead.inner_text(".message")
    project.refresh_from_db()
    assert project.strategy_params == {"theta": 0.4}
    assert AuditEvent.objects.get(project=project, detail__has_key="settings").user == admin

    # 5. The annotator, in a browser of their own: the one-time password, then one of their own; Spanish.
    annotator = new_page()
    log_in(annotator, live_server.url, "nora", "/", password=one_time_password)
    choose_own_password(annotator, live_server.url, one_time_password=one_time_password,
                        new_password=ANNOTATOR_PASSWORD)
    annotator.select_option("form.language select[name=language]", label="Español")
    annotator.click("form.language button[type=submit]")
    annotator.wait_for_selector("html[lang=es]")
    annotator.click(f"text={project.name}")
    annotator.wait_for_url(project_url)
    assert "Sus registros" in annotator.inner_text("main")
    annotator.click(f"form[action='/projects/{project.pk}/annotate/'] button")
    annotator.wait_for_url(f"**/projects/{project.pk}/annotate/{record.pk}/")
    annotator.wait_for_selector("#wb[data-ready=true]")
    assert annotator.inner_text("#wb-submit").startswith("Enviar y siguiente")
    assert annotator.inner_text("#wb-state") == "Borrador"
    assert annotator.inner_text("#wb-save") == "Guardado"
    assert annotator.inner_text(f'#wb-doc mark[data-l="{DATE}"]') == "14/05/2021"  # suggested, to review

    annotator.keyboard.press("Tab")  # focus the suggestion
    annotator.keyboard.press("Enter")  # accept it
    drag_over(annotator, "Lucía Gómez Prieto")
    annotator.keyboard.press("n")  # the key chosen for the name
    assert annotator.inner_text("#wb-counts") == "2 fragmentos · 0 sugerencias por revisar"
    wait_for_true(annotator, "document.getElementById('wb-save').textContent === 'Guardado'"
                             " && !window.deidloopWorkbench.state().dirty")
    screenshot(annotator, "path-workbench-es")
    annotator.keyboard.press("Control+Enter")
    annotator.wait_for_selector("#pool-empty")
    assert annotator.inner_text("#pool-empty h1") == "No queda nada por anotar"
    submitted = Annotation.objects.get(document=record, annotator=nora)
    assert submitted.state == Annotation.State.SUBMITTED
    name_at, date_at = offsets(NEW_TEXT, "Lucía Gómez Prieto"), offsets(NEW_TEXT, "14/05/2021")
    assert [(s["start"], s["end"], s["label"]) for s in submitted.spans] == [(*name_at, NAME), (*date_at, DATE)]

    # 6. The administrator, as the project's lead, sends the record back from its review page with a note.
    lead.goto(project_url)
    lead.click(f'#record-table tr[data-record="{record.pk}"] a')
    lead.wait_for_url(f"**/projects/{project.pk}/records/{record.pk}/")
    assert lead.inner_text("#record-status") == "Submitted"
    assert lead.locator("#review-text mark.phi").all_inner_texts() == ["Lucía Gómez Prieto", "14/05/2021"]
    lead.fill("#id_note", NOTE)
    lead.click("#send-back-form button[type=submit]")
    lead.wait_for_load_state()
    assert lead.inner_text("#record-status") == "Assigned"
    assert lead.locator("#record-history li").first.get_attribute("data-kind") == "sent_back"
    assert NOTE in lead.locator("#record-history li").first.inner_text()

    # 7. The annotator's next record is that one, reopened with the note, in Spanish.
    annotator.click("#pool-empty form button[type=submit]")
    annotator.wait_for_url(f"**/projects/{project.pk}/annotate/{record.pk}/")
    annotator.wait_for_selector("#wb[data-ready=true]")
    correction = annotator.inner_text("#wb-correction")
    assert "Devuelto para corrección" in correction and f"por {admin.username}" in correction
    assert NOTE in correction and "Corrija el registro y vuelva a enviarlo." in correction
    assert annotator.inner_text("#wb-state") == "Borrador"
    assert [(s["start"], s["end"], s["label"]) for s in annotator.evaluate("window.deidloopWorkbench.state()")["spans"]
            ] == [(*name_at, NAME), (*date_at, DATE)]  # their work, to correct
    screenshot(annotator, "path-sent-back-es")
    assert Annotation.objects.get(document=record, annotator=nora).state == Annotation.State.DRAFT
    assert lead.script_errors == [] and annotator.script_errors == []
