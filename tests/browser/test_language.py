"""The interface's language in a real browser: English by default, Spanish once an annotator picks it in the
navigation — the workbench's buttons, its shortcut list and what its script writes included."""
from __future__ import annotations

import pytest

from tests.browser.conftest import (
    CHROMIUM, Record, ask_for_next_record, log_in, make_user, screenshot, seed_project, wait_for_true,
)

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

TEXT = "Paciente Juan Pérez, nacido el 12/03/1960 en Sevilla. Vive en Sevilla desde 2001."


def test_an_annotator_who_picks_spanish_gets_the_workbench_in_spanish(live_server, new_page):
    ana = make_user("ana")
    record = Record(name="nota-1", text=TEXT,
                    suggestions=[("Juan Pérez", "NAME", 0.9), ("12/03/1960", "DATE", 0.6)],
                    possible_missed=[("Sevilla", 0.45)])
    project = seed_project(name="Notas", labels=["NAME", "DATE", "CITY"], records=[record], annotators=[ana])
    page = new_page()
    log_in(page, live_server.url, "ana", f"/projects/{project.pk}/annotate/")

    # The browser asks for en-US: the page is English.
    assert page.get_attribute("html", "lang") == "en"
    assert page.locator("#annotate-start button[type=submit]").inner_text() == "Annotate the next record"

    page.select_option("select[name=language]", "es")
    page.click("form.language button[type=submit]")
    page.wait_for_selector("html[lang=es]")
    assert page.url.endswith(f"/projects/{project.pk}/annotate/")  # back on the page it was chosen on
    assert page.locator("#annotate-start button[type=submit]").inner_text() == "Anotar el siguiente registro"
    assert page.locator("nav").inner_text().startswith("Proyectos")

    ask_for_next_record(page)
    page.wait_for_selector("#wb[data-ready=true]")
    # The template's buttons and labels.
    assert page.locator("#wb-submit").inner_text().startswith("Enviar y siguiente")
    assert page.locator('[data-action="undo"]').inner_text() == "Deshacer"
    assert page.locator(".wb-hint").inner_text() == "Pulse ? para ver los atajos"
    # What the script writes: the save state, the counts, a suggestion's and a possible miss's titles.
    assert page.locator("#wb-save").inner_text() == "Guardado"
    assert page.locator("#wb-counts").inner_text() == "2 fragmentos · 2 sugerencias por revisar"
    assert page.get_attribute("#wb-doc u.pm", "title") == "posible dato identificativo omitido (p=0,45)"
    assert "modelo, confianza 0,90" in page.get_attribute('#wb-doc mark[data-l="NAME"]', "title")

    # The shortcut list.
    page.keyboard.press("?")
    assert page.locator("#wb-help").is_visible()
    help_text = page.locator("#wb-help").inner_text()
    assert "Atajos de teclado" in help_text and "aceptar todas las sugerencias" in help_text
    screenshot(page, "language-01-workbench-shortcuts-es")
    page.keyboard.press("?")

    # A status message the script makes as the annotator works.
    page.keyboard.press("Control+z")
    wait_for_true(page, "document.getElementById('wb-message').textContent === 'Nada que deshacer.'")
    page.keyboard.press("Shift+A")
    wait_for_true(page, "document.getElementById('wb-message').textContent === 'Aceptadas 2 sugerencias.'")
    wait_for_true(page, "document.getElementById('wb-save').textContent === 'Guardado'"
                        " && !window.deidloopWorkbench.state().dirty")
    assert page.locator("#wb-counts").inner_text() == "2 fragmentos · 0 sugerencias por revisar"
    assert not page.script_errors

    # The choice is kept: the next page is Spanish too.
    page.goto(f"{live_server.url}/projects/{project.pk}/")
    assert page.get_attribute("html", "lang") == "es"
    assert "Sus registros" in page.locator("main").inner_text()
