"""Import and export in a real browser, with a real worker: a lead uploads a brat folder as a zip, sees the
preview with a label the project lacks, adds it, imports, watches a worker's progress reach 100 % (polled:
the test server has no websocket), then exports the gold de-identified as CoNLL without the evaluation set,
made by the worker too, and downloads it; and a job page that follows its notices on the websocket."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from annotator.models import AuditEvent, Document, ImportJob
from annotator.services.projects import create_project
from corpus.formats import write_corpus
from corpus.synthetic import generate_notes
from tests.browser.conftest import CHROMIUM, log_in, make_user, screenshot, wait_for_true
from tests.browser.test_workbench import FAKE_WEBSOCKET
from tests.integration.celery_worker import Worker

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.django_db(transaction=True),
]


def brat_zip(notes, folder: Path) -> bytes:
    write_corpus(notes, folder, "brat")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, arcname=f"notes/{path.name}")
    return buffer.getvalue()


def watch_to_the_end(page, box: str, worker: Worker) -> None:
    """Wait until the job page's progress (``box``: its status section) shows 100 % and the job is done."""
    percent = f"document.querySelector('{box} [data-percent]')"
    wait_for_true(page, f"{percent} !== null && {percent}.textContent.trim() === '100 %'", timeout=120_000)
    assert page.locator(box).get_attribute("data-status") == "done", worker.log()
    screenshot(page, f"{box.lstrip('#')}-done")


def test_a_lead_previews_adds_a_label_imports_with_progress_and_exports_deidentified_conll(
        live_server, new_page, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.DEIDLOOP_SYNC_IMPORT_BYTES = 1000  # this upload is imported by the worker
    notes = generate_notes(12, seed=8)
    counts: dict[str, int] = {}
    for note in notes:
        for span in note.spans:
            counts[span.label] = counts.get(span.label, 0) + 1
    missing = min(counts, key=lambda label: (counts[label], label))
    lead = make_user("leo")
    project = create_project(name="Wards", labels=sorted(set(counts) - {missing}), created_by=lead)
    upload = brat_zip(notes, tmp_path / "notes")
    assert len(upload) > 1000

    worker = Worker(queue=django_settings.CELERY_TASK_DEFAULT_QUEUE, data_dir=settings.DATA_DIR,
                    log_path=tmp_path / "worker.log").start()
    try:
        page = new_page()
        log_in(page, live_server.url, lead.username, f"/projects/{project.pk}/import/")
        page.select_option("select[name=format]", "brat")
        page.fill("input[name=evaluation_percent]", "25")
        page.set_input_files("input[name=files]", files=[
            {"name": "notes.zip", "mimeType": "application/zip", "buffer": upload}])
        page.click("#import-form button[type=submit]")
        page.wait_for_url("**/import/preview/**")

        # The preview: counts from the staged files, the unknown label with its spans; nothing imported yet.
        assert page.inner_text('[data-count="records"]') == "12"
        assert page.inner_text('[data-count="spans"]') == str(sum(counts.values()))
        assert page.inner_text('[data-count="evaluation"]').startswith("3 ")
        unknown = page.locator("[data-unknown]")
        assert unknown.count() == 1
        assert unknown.inner_text() == f"{missing}: {counts[missing]} span{'s' if counts[missing] != 1 else ''}"
        screenshot(page, "import-preview-unknown-label")
        assert Document.objects.filter(project=project).count() == 0

        page.check("input[name=unknown_labels][value=add]")
        page.click("#import-confirm button[value=import]")
        page.wait_for_url(f"**/projects/{project.pk}/imports/**")
        watch_to_the_end(page, "#import-job", worker)
        assert Document.objects.filter(project=project).count() == 12
        evaluation = Document.objects.filter(project=project, role=Document.Role.EVALUATION).count()
        assert evaluation == 3
        project.refresh_from_db()
        assert project.labels[-1] == missing

        # Export: de-identified CoNLL, without the evaluation set; more records than a request makes at once.
        settings.DEIDLOOP_SYNC_EXPORT_RECORDS = 5
        page.goto(f"{live_server.url}/projects/{project.pk}/export/")
        page.select_option("select[name=format]", "conll")
        page.select_option("select[name=conceal]", "class")
        page.uncheck("input[name=include_evaluation]")
        page.click("#export-form button[type=submit]")
        page.wait_for_url(f"**/projects/{project.pk}/export/jobs/**")
        watch_to_the_end(page, "#export-job", worker)
    finally:
        worker.stop()
    with page.expect_download() as download_info:
        page.click("#export-download")
    download = download_info.value
    assert download.suggested_filename == "Wards-conll-class.zip"
    archive = zipfile.ZipFile(download.path())
    conll = archive.read("Wards-conll-class/corpus.conll").decode("utf-8")
    assert conll.count("-DOCSTART-") == 12 - evaluation
    pool_names = {note.name for note in notes} - set(
        Document.objects.filter(project=project, role=Document.Role.EVALUATION).values_list("external_id", flat=True))
    values = {note.text[s.start:s.end] for note in notes if note.name in pool_names for s in note.spans
              if " " in note.text[s.start:s.end]}
    tokens = {line.split("\t")[0] for line in conll.splitlines() if "\t" in line}
    assert all(not set(value.split()) <= tokens for value in values if len(value.split()) > 1 and
               all(len(word) > 3 for word in value.split()))  # multi-word PHI values are gone
    made, downloaded = AuditEvent.objects.filter(project=project, action=AuditEvent.Action.EXPORT).order_by("id")
    assert (made.user, made.detail["conceal"], made.detail["format"], made.detail["include_evaluation"]) == \
        (lead, "class", "conll", False)
    assert made.detail["documents"] == 12 - evaluation
    assert (downloaded.user, downloaded.detail["download"]) == (lead, "Wards-conll-class.zip")
    assert page.script_errors == []


def test_the_import_job_page_follows_its_notices_on_the_socket(live_server, new_page):
    lead = make_user("lina")
    project = create_project(name="Live", labels=["NAME"], created_by=lead)
    job = ImportJob.objects.create(project=project, created_by=lead, format="brat", status=ImportJob.Status.RUNNING,
                                   done_files=2, total_files=10, filenames=["notes.zip"])
    page = new_page()
    page.add_init_script(FAKE_WEBSOCKET)  # the live server speaks HTTP only
    log_in(page, live_server.url, lead.username, f"/projects/{project.pk}/imports/{job.pk}/")
    percent = page.locator("#import-job [data-percent]")
    assert percent.inner_text() == "20 %"
    wait_for_true(page, "document.getElementById('job-follow').dataset.live === 'true'")
    assert page.evaluate("window.__socket.url") == f"{live_server.url.replace('http', 'ws')}/ws/projects/{project.pk}/"

    def notice(job_id: int, status: str, done: int) -> None:
        message = {"type": "notice", "kind": "import_progress", "text": "", "job_id": job_id, "status": status,
                   "done": done, "total": 10}
        page.evaluate("message => window.__socket.dispatchEvent(new MessageEvent('message', "
                      "{data: JSON.stringify(message)}))", message)

    notice(job.pk, "running", 5)
    assert percent.inner_text() == "50 %"
    assert page.locator("#import-job progress").evaluate("bar => [bar.value, bar.max]") == [5, 10]
    notice(job.pk + 1, "running", 9)  # another job's progress leaves this page as it is
    assert percent.inner_text() == "50 %"

    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJob.Status.DONE, done_files=10,
        report={"created": 10, "annotated": 10, "spans": 40, "duplicates": 0, "evaluation": 0})
    notice(job.pk, "done", 10)  # the page fetches the report
    wait_for_true(page, "document.querySelector('#import-job').dataset.status === 'done'")
    assert percent.inner_text() == "100 %"
    assert "Imported 10 documents (10 annotated, 40 spans)" in page.inner_text("#import-job")
    assert page.script_errors == []
