"""A new project in a real browser: an administrator creates it with two custom labels, lands on the import
page, imports a small brat corpus with a fifth set aside for evaluation and ends on the project's page."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotator.models import Annotation, AuditEvent, Document, Project
from tests.browser.conftest import CHROMIUM, PASSWORD, fill_new_project, log_in, screenshot

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.django_db(transaction=True),
]


def brat_files(count: int) -> list[dict]:
    """``count`` records, each naming a patient, every third with a phone number too."""
    files = []
    for i in range(count):
        text = f"Informe {i:02d}. Paciente: Marta Gil. Teléfono de contacto 600 200 3{i:02d}."
        lines = []
        for number, (label, fragment) in enumerate(
            [("PATIENT", "Marta Gil")] + ([("PHONE", f"600 200 3{i:02d}")] if i % 3 == 0 else []), start=1
        ):
            start = text.index(fragment)
            lines.append(f"T{number}\t{label} {start} {start + len(fragment)}\t{fragment}")
        files += [
            {"name": f"informe{i:02d}.txt", "mimeType": "text/plain", "buffer": text.encode()},
            {"name": f"informe{i:02d}.ann", "mimeType": "text/plain", "buffer": ("\n".join(lines) + "\n").encode()},
        ]
    return files


def test_an_admin_creates_a_project_imports_with_an_evaluation_share_and_lands_on_it(live_server, new_page):
    admin = get_user_model().objects.create_superuser("sofia", password=PASSWORD)
    page = new_page()
    log_in(page, live_server.url, admin.username, "/")
    fill_new_project(page, name="Informes de urgencias", language="es",
                     labels=[("PATIENT", "#2255cc", "a"), ("PHONE", "#cc5522", "t")])
    screenshot(page, "new-project-form")
    page.click("#new-project button[type=submit]")
    page.wait_for_url("**/import/")

    project = Project.objects.get(name="Informes de urgencias")
    assert page.url == f"{live_server.url}/projects/{project.pk}/import/"
    assert "created with 2 labels" in page.locator("div.message").inner_text()
    assert project.labels == ["PATIENT", "PHONE"]
    assert project.label_styles == {"PATIENT": {"colour": "#2255cc", "key": "a"},
                                    "PHONE": {"colour": "#cc5522", "key": "t"}}

    page.select_option("select[name=format]", "brat")
    page.fill("input[name=evaluation_percent]", "20")
    page.set_input_files("input[name=files]", brat_files(10))
    page.click("#import-form button[type=submit]")
    page.wait_for_url("**/import/preview/**")  # nothing is imported before it is confirmed
    page.click("#import-confirm button[value=import]")
    page.wait_for_url(f"**/projects/{project.pk}/")

    assert "2 of them set aside as the evaluation set" in page.locator("div.message").inner_text()
    stats = " ".join(page.locator(".stats").inner_text().split())
    assert "8 pool documents" in stats and "2 evaluation" in stats
    evaluation = Document.objects.filter(project=project, role=Document.Role.EVALUATION)
    assert evaluation.count() == 2
    held = {span["label"] for annotation in Annotation.objects.filter(document__in=evaluation)
            for span in annotation.spans}
    assert held == {"PATIENT", "PHONE"}
    assert AuditEvent.objects.filter(project_id=project.pk, user=admin, detail__has_key="project_created").exists()
    screenshot(page, "new-project-imported")

    # Its Labels page: deleting a label in use is refused with the count; renaming it renames every span.
    page.click("#labels-link")
    page.wait_for_url(f"**/projects/{project.pk}/labels/")
    page.locator('tr[data-label="PHONE"] form.delete button').click()
    page.wait_for_load_state()
    assert "PHONE is used by 4 spans in 4 records" in page.locator('tr[data-label="PHONE"]').inner_text()
    page.locator('tr[data-label="PHONE"] form.rename input[name=name]').fill("TELEPHONE")
    page.locator('tr[data-label="PHONE"] form.rename button').click()
    page.wait_for_load_state()
    assert "Renamed PHONE to TELEPHONE in 4 stored spans of 4 records." in page.locator("div.message").inner_text()
    assert page.locator('tr[data-label="TELEPHONE"] form.restyle input[name=key]').input_value() == "t"
    screenshot(page, "labels-page")
    assert page.script_errors == []


def test_the_workbench_labels_with_the_keys_and_colours_a_lead_chose(live_server, new_page):
    from annotator.services.labels import restyle_label
    from tests.browser.conftest import Record, ask_for_next_record, make_user, seed_project

    ana = make_user("ana")
    text = "Paciente Juan Pérez, nacido el 12/03/1960 en Sevilla."
    project = seed_project(name="Keys", labels=["NAME", "DATE", "CITY"], annotators=[ana],
                           records=[Record(name="n1", text=text, suggestions=[("Juan Pérez", "NAME", 0.9)])])
    restyle_label(project=project, user=None, label="DATE", colour="#00cc44", key="f")
    page = new_page()
    log_in(page, live_server.url, "ana", f"/projects/{project.pk}/annotate/")
    ask_for_next_record(page)
    page.wait_for_selector("#wb[data-ready=true]")
    assert page.locator('.wb-label[data-label-key="DATE"] kbd').inner_text() == "f"
    assert page.locator('.wb-label[data-label-key="CITY"] kbd').inner_text() == "3"
    hue = page.evaluate("getComputedStyle(document.querySelector('.wb-label[data-label-key=DATE] .wb-swatch'))"
                        ".getPropertyValue('--h').trim()")
    assert hue == "140"  # the hue of #00cc44

    def label_of_the_name() -> list[str]:
        spans = page.evaluate("window.deidloopWorkbench.state()")["spans"]
        return [s["label"] for s in spans if text[s["start"]:s["end"]] == "Juan Pérez"]

    page.keyboard.press("Tab")  # focus the first suggestion, the name
    page.keyboard.press("f")
    assert label_of_the_name() == ["DATE"]
    page.keyboard.press("2")  # DATE's digit went with its new key
    assert "No label on key 2" in page.locator("#wb-message").inner_text()
    assert label_of_the_name() == ["DATE"]
    page.keyboard.press("1")
    assert label_of_the_name() == ["NAME"]
    assert page.script_errors == []
