"""Uploads against the real database, Redis and a Celery worker: unsafe archives (every spelling of a path
outside the folder), zip bombs, too many entries, encrypted and damaged archives, binary text are refused
with a 400 naming the file, writing and importing nothing; an oversized body is refused by the ASGI layer
before it is read; a large upload is imported by a worker with progress."""
from __future__ import annotations

import asyncio
import io
import re
import stat
import struct
import time
import uuid
import zipfile
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from annotator.models import Document, ImportJob
from corpus.formats import write_corpus
from corpus.synthetic import generate_notes
from tests.integration.celery_worker import Worker

GOOD_TEXT = "Paciente Ana Ruiz, 45 años.\n"
GOOD_ANN = "T1\tNOMBRE_SUJETO_ASISTENCIA 9 17\tAna Ruiz\nT2\tEDAD_SUJETO_ASISTENCIA 19 26\t45 años\n"


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


def uploads_left(data_dir: Path) -> list[str]:
    root = data_dir / "uploads"
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")) if root.exists() else []


def named(content: bytes, name: str) -> io.BytesIO:
    buffer = io.BytesIO(content)
    buffer.name = name
    return buffer


def zip_bytes(files: dict, *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    """``files``: name (or ZipInfo) → content."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content in files.items():
            info = name if isinstance(name, zipfile.ZipInfo) else zipfile.ZipInfo(name)
            info.compress_type = compression
            archive.writestr(info, content)
    return buffer.getvalue()


def symlink_member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def with_flag_bits(data: bytes, bits: int) -> bytes:
    """The archive with ``bits`` set in every entry's general-purpose flags (local header and directory)."""
    data = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        for match in re.finditer(re.escape(signature), bytes(data)):
            at = match.start() + offset
            (flags,) = struct.unpack_from("<H", data, at)
            struct.pack_into("<H", data, at, flags | bits)
    return bytes(data)


def post(client, project, *uploads, fmt="txt", extra=None):
    return client.post(f"/api/projects/{project.pk}/import/",
                       {"format": fmt, "files": list(uploads), **(extra or {})}, format="multipart")


def refused(client, project, upload, *, fmt="txt", words=()) -> str:
    before = Document.objects.count()
    response = post(client, project, upload, fmt=fmt)
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    for word in words:
        assert word in detail, (word, detail)
    assert Document.objects.count() == before
    assert project.documents.count() == 0
    return detail


# --- zip slip, every spelling -------------------------------------------------------------------------------

SLIP = f"slip-{uuid.uuid4().hex[:8]}.txt"
ESCAPES = {
    "backslashes": f"\\tmp\\{SLIP}",
    "absolute": f"/tmp/{SLIP}",
    "dot-dot": f"../{SLIP}",
    "nested dot-dot": f"a/../../{SLIP}",
    "drive with backslash": f"C:\\{SLIP}",
    "drive with slash": f"C:/{SLIP}",
}


@pytest.mark.parametrize("case", sorted(ESCAPES))
@pytest.mark.django_db
def test_archive_members_outside_the_folder_are_refused_and_nothing_is_written(
    case, users, projects, api_as, data_dir,
):
    name = ESCAPES[case]
    upload = named(zip_bytes({"ok.txt": GOOD_TEXT, name: "escaped"}), "corpus.zip")
    detail = refused(api_as(users["lead"]), projects["A"], upload, words=["corpus.zip", repr(name)])
    assert "outside the archive" in detail
    assert not Path("/tmp", SLIP).exists()
    assert not list(data_dir.parent.rglob(SLIP))
    assert uploads_left(data_dir) == []


@pytest.mark.django_db
def test_links_nul_names_and_names_for_one_file_are_refused(users, projects, api_as, data_dir):
    client, a = api_as(users["lead"]), projects["A"]
    link = named(zip_bytes({"ok.txt": GOOD_TEXT, symlink_member("notes.txt"): "/etc/passwd"}), "links.zip")
    refused(client, a, link, words=["links.zip", "'notes.txt'", "symbolic link"])

    # zipfile cannot write a NUL into a name: write a placeholder of the same length and patch the bytes.
    placeholder = zip_bytes({"ok.txt": GOOD_TEXT, "evilXname.txt": "x"})
    nul = named(placeholder.replace(b"evilXname.txt", b"evil\x00name.txt"), "nul.zip")
    refused(client, a, nul, words=["nul.zip", "'evil\\x00name.txt'", "NUL byte"])

    twice = named(zip_bytes({"Notes/a.txt": GOOD_TEXT, "notes/A.TXT": "other text\n"}), "twice.zip")
    refused(client, a, twice, words=["twice.zip: notes/A.TXT: the same file as twice.zip: Notes/a.txt"])

    dotted = named(zip_bytes({"x/./a.txt": GOOD_TEXT, "x/a.txt": "other\n", "y.txt": "y\n"}), "dotted.zip")
    refused(client, a, dotted, words=["dotted.zip: x/a.txt: the same file as dotted.zip: x/./a.txt"])

    across = named(zip_bytes({"a.txt": GOOD_TEXT}), "one.zip")
    plain = named(b"other text\n", "A.txt")
    response = post(client, a, across, plain)
    assert response.status_code == 400 and "A.txt: the same file as one.zip: a.txt" in response.json()["detail"]
    assert a.documents.count() == 0 and uploads_left(data_dir) == []


# --- limits ---------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_zip_bombs_are_refused_before_unpacking(users, projects, api_as, data_dir):
    client, a = api_as(users["lead"]), projects["A"]
    bomb = zip_bytes({"note.txt": GOOD_TEXT, "zeros.txt": b"0" * (20 * 1024 * 1024)})
    assert len(bomb) < 100_000
    refused(client, a, named(bomb, "bomb.zip"), words=["bomb.zip", "'zeros.txt'", "times its packed size"])

    spread = zip_bytes({f"z{i:02}.txt": b"0" * (1024 * 1024) for i in range(12)})
    refused(client, a, named(spread, "spread.zip"), words=["spread.zip: unpacks to 12,582,912 bytes"])
    assert uploads_left(data_dir) == []


@pytest.mark.django_db
def test_entries_and_unpacked_bytes_are_counted_over_the_whole_request(users, projects, api_as, settings):
    client, a = api_as(users["lead"]), projects["A"]
    settings.DEIDLOOP_MAX_UPLOAD_ENTRIES = 10
    many = zip_bytes({f"n{i:02}.txt": f"nota {i}\n" for i in range(11)})
    refused(client, a, named(many, "many.zip"), words=["many.zip: holds 11 entries, more than the limit of 10"])

    halves = [named(zip_bytes({f"{part}{i}.txt": f"nota {part}{i}\n" for i in range(6)}), f"{part}.zip")
              for part in "ab"]
    response = post(client, a, *halves)
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "b.zip: holds 6 entries, which bring the upload to 12, more than the limit of 10")

    settings.DEIDLOOP_MAX_UPLOAD_ENTRIES = 100
    settings.DEIDLOOP_MAX_UNPACKED_BYTES = 1000
    halves = [named(zip_bytes({f"{part}.txt": "x" * 600}), f"{part}.zip") for part in "ab"]
    response = post(client, a, *halves)
    assert response.status_code == 400
    assert response.json()["detail"] == "the upload unpacks to 1,200 bytes, more than the limit of 1,000 bytes"
    assert a.documents.count() == 0


# --- damaged, encrypted, not text -----------------------------------------------------------------------------

@pytest.mark.django_db
def test_encrypted_damaged_and_unreadable_archives_are_refused(users, projects, api_as, data_dir):
    client, a = api_as(users["lead"]), projects["A"]
    encrypted = with_flag_bits(zip_bytes({"a.txt": GOOD_TEXT}), 0x1)
    refused(client, a, named(encrypted, "secret.zip"), words=["secret.zip", "'a.txt'", "encrypted"])

    stored = zip_bytes({"a.txt": GOOD_TEXT, "b.txt": "Paciente Eva Gil, 51 años.\n"}, compression=zipfile.ZIP_STORED)
    at = stored.index(b"Eva Gil")
    damaged = stored[:at] + b"X" + stored[at + 1:]
    refused(client, a, named(damaged, "crc.zip"), words=["crc.zip: b.txt", "damaged", "CRC"])

    refused(client, a, named(b"PK\x03\x04 truncated nonsense", "broken.zip"),
            words=["broken.zip: not a readable zip archive"])
    assert uploads_left(data_dir) == []


@pytest.mark.django_db
def test_text_that_is_not_utf8_or_holds_nul_bytes_is_refused_by_name_and_line(users, projects, api_as, data_dir):
    client, a = api_as(users["lead"]), projects["A"]
    latin1 = "Paciente José\n".encode("latin-1")
    refused(client, a, named(b"ok\n" + latin1, "latin.txt"),
            words=["latin.txt, line 2: is not UTF-8 text (binary file?)"])
    nul = zip_bytes({"notes/a.txt": GOOD_TEXT, "notes/b.txt": b"line one\nline\x00two\n"})
    refused(client, a, named(nul, "corpus.zip"), words=["corpus.zip: notes/b.txt, line 2: is not UTF-8 text"])
    utf16 = zip_bytes({"a.ann": "T1\tFECHAS 0 4\tHoy\n".encode("utf-16"), "a.txt": GOOD_TEXT})
    refused(client, a, named(utf16, "brat.zip"), fmt="brat", words=["brat.zip: a.ann, line 1"])
    assert uploads_left(data_dir) == []


@pytest.mark.django_db
def test_the_page_shows_the_refusal_and_imports_nothing(client, users, projects, data_dir):
    client.force_login(users["lead"])
    a = projects["A"]
    upload = named(zip_bytes({"\\tmp\\" + SLIP: "x"}), "corpus.zip")
    response = client.post(f"/projects/{a.pk}/import/", {"format": "txt", "files": upload})
    assert response.status_code == 400
    page = response.content.decode()
    assert "corpus.zip: the archive entry" in page and "points outside the archive" in page
    assert a.documents.count() == 0 and not Path("/tmp", SLIP).exists()


@pytest.mark.django_db
def test_a_safe_archive_with_a_folder_still_imports_in_the_request(users, projects, api_as, data_dir):
    client, a = api_as(users["lead"]), projects["A"]
    upload = named(zip_bytes({"dev/a.txt": GOOD_TEXT, "dev/a.ann": GOOD_ANN, "dev\\b.txt": "Nota de Eva.\n",
                              "dev/b.ann": "", "__MACOSX/dev/._a.txt": b"\x00\x05", "dev/.DS_Store": b"\x00"}),
                   "corpus.zip")
    response = post(client, a, upload, fmt="brat")
    assert response.status_code == 201, response.content
    assert response.json()["created"] == 2 and response.json()["spans"] == 2
    assert uploads_left(data_dir) == []


# --- the request body limit, at the ASGI layer ----------------------------------------------------------------

def run_asgi(scope: dict, receive) -> list[dict]:
    from config.asgi import application

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    asyncio.run(application(scope, receive, send))
    return sent


def http_scope(headers: list[tuple[bytes, bytes]], path: str = "/api/projects/1/import/") -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
            "headers": [(b"host", b"localhost"), *headers], "client": ("127.0.0.1", 5000),
            "server": ("localhost", 80)}


def test_a_declared_oversized_body_is_refused_without_reading_it(settings):
    settings.DEIDLOOP_MAX_REQUEST_BYTES = 1000

    async def receive():
        raise AssertionError("the body was read")

    sent = run_asgi(http_scope([(b"content-length", b"1001"), (b"content-type", b"multipart/form-data")]), receive)
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 413
    assert b"larger than the limit of 1,000 bytes" in sent[1]["body"]


def test_a_chunked_body_is_counted_and_refused_at_the_limit(settings):
    settings.DEIDLOOP_MAX_REQUEST_BYTES = 1000
    calls = []

    async def receive():
        calls.append(1)
        assert len(calls) <= 3, "read past the limit"
        return {"type": "http.request", "body": b"x" * 400, "more_body": True}

    sent = run_asgi(http_scope([(b"transfer-encoding", b"chunked")]), receive)
    assert len(calls) == 3  # 400, 800, 1200: stopped at the chunk that crossed the limit
    # Only the 413: Django, told the client left while it read the body, sends nothing (pinned here).
    assert [(message["type"], message.get("status")) for message in sent] == [
        ("http.response.start", 413), ("http.response.body", None)]


@pytest.mark.django_db
def test_a_body_under_the_limit_reaches_django(settings):
    settings.DEIDLOOP_MAX_REQUEST_BYTES = 1000
    chunks = [{"type": "http.request", "body": b"a=1&", "more_body": True},
              {"type": "http.request", "body": b"b=2", "more_body": False}]

    async def receive():
        if chunks:
            return chunks.pop(0)
        await asyncio.sleep(3600)

    sent = run_asgi(http_scope([(b"content-type", b"application/x-www-form-urlencoded")], path="/api/projects/"),
                    receive)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] in (401, 403)


def test_a_folder_read_with_progress_reports_every_part_and_reads_what_a_whole_read_does(tmp_path):
    from annotator.services.imports import read_path

    notes = generate_notes(7, seed=2)
    write_corpus(notes, tmp_path / "brat", "brat")
    (tmp_path / "brat" / "README.md").write_text("not a corpus file\n")
    calls = []
    documents, annotated = read_path(path=tmp_path / "brat", fmt="brat", progress=lambda *c: calls.append(c))
    whole, _ = read_path(path=tmp_path / "brat", fmt="brat")
    assert documents == whole and annotated
    assert calls == [(done, 14) for done in range(0, 15, 2)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["brat"]  # the parts are gone

    (tmp_path / "brat" / f"{notes[3].name}.ann").unlink()  # a text without its .ann: the whole read's words
    with pytest.raises(Exception) as raised:
        read_path(path=tmp_path / "brat", fmt="brat", progress=lambda *c: None)
    with pytest.raises(Exception) as whole_raised:
        read_path(path=tmp_path / "brat", fmt="brat")
    assert str(raised.value) == str(whole_raised.value) and f"{notes[3].name}.txt" in str(raised.value)


# --- status endpoints ------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_large_upload_becomes_a_job_with_its_files_kept_privately_for_a_worker(users, projects, api_as, settings, data_dir):
    settings.DEIDLOOP_SYNC_IMPORT_BYTES = 100
    client, a = api_as(users["lead"]), projects["A"]
    response = post(client, a, named(zip_bytes({"a.txt": GOOD_TEXT * 10, "b.txt": "Nota.\n"}), "big.zip"))
    assert response.status_code == 202, response.content
    body = response.json()
    job = ImportJob.objects.get(pk=body["id"])
    assert body["status"] == "queued" and body["total_files"] == 2 and body["filenames"] == ["big.zip"]
    assert body["status_url"].endswith(f"/api/projects/{a.pk}/imports/{job.pk}/")
    assert response["Location"] == body["status_url"]
    # Kept in the artifact store for a worker on any host: here the local one, a private file in DATA_DIR.
    assert job.staged_path == f"uploads/job-{job.pk}/corpus.zip"
    kept = data_dir / job.staged_path
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert sorted(zipfile.ZipFile(kept).namelist()) == ["a.txt", "b.txt"]
    assert uploads_left(data_dir) == [f"job-{job.pk}", f"job-{job.pk}/corpus.zip"]  # no staging folder left
    assert a.documents.count() == 0


@pytest.mark.django_db
def test_only_the_projects_leads_see_its_import_jobs(users, projects, api_as, client):
    a, b = projects["A"], projects["B"]
    job = ImportJob.objects.create(project=a, created_by=users["lead"], format="txt", total_files=3)
    other = ImportJob.objects.create(project=b, format="txt")
    api_url, page_url = f"/api/projects/{a.pk}/imports/{job.pk}/", f"/projects/{a.pk}/imports/{job.pk}/"
    assert api_as(users["lead"]).get(api_url).status_code == 200
    assert api_as(users["admin"]).get(api_url).status_code == 200
    assert api_as(users["annotator"]).get(api_url).status_code == 403
    assert api_as(users["outsider"]).get(api_url).status_code == 404
    assert api_as(users["lead"]).get(f"/api/projects/{a.pk}/imports/{other.pk}/").status_code == 404
    for role, expected in (("annotator", 403), ("outsider", 404), ("lead", 200)):
        client.force_login(users[role])
        assert client.get(page_url).status_code == expected, role
    assert client.get(f"/projects/{a.pk}/imports/{other.pk}/").status_code == 404


# --- the worker ---------------------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_a_large_upload_is_imported_by_the_worker_with_progress(
    users, projects, api_as, client, settings, data_dir, tmp_path,
):
    settings.DEIDLOOP_SYNC_IMPORT_BYTES = 10_000
    a = projects["A"]
    notes = generate_notes(120, seed=5)
    write_corpus(notes, tmp_path / "brat", "brat")
    files = {f"notes/{path.name}": path.read_bytes() for path in sorted((tmp_path / "brat").iterdir())}
    assert sum(len(content) for content in files.values()) > 10_000
    worker = Worker(queue=django_settings.CELERY_TASK_DEFAULT_QUEUE, data_dir=data_dir,
                    log_path=tmp_path / "worker.log").start()
    try:
        api = api_as(users["lead"])
        response = post(api, a, named(zip_bytes(files), "notes.zip"), fmt="brat")
        assert response.status_code == 202, response.content
        status_url = response.json()["status_url"]
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            job = api.get(status_url).json()
            seen.append((job["status"], job["done_files"]))
            if job["status"] in ("done", "failed"):
                break
            time.sleep(0.02)
        assert job["status"] == "done", (job, worker.log())
        assert job["total_files"] == job["done_files"] == 240
        assert job["report"]["created"] == 120 and job["report"]["annotated"] == 120
        done_values = [done for _, done in seen]
        assert done_values == sorted(done_values)  # progress only goes forward
        assert a.documents.count() == 120
        assert uploads_left(data_dir) == []

        # The page: confirming the preview leads to the progress page, whose status shows the job's end.
        client.force_login(users["lead"])
        bad = dict(files)
        bad["notes/zz-last.txt"], bad["notes/zz-last.ann"] = GOOD_TEXT, "T1\tNO_SUCH_LABEL 9 17\tAna Ruiz\n"
        response = post(api, a, named(zip_bytes(bad), "b.zip"), fmt="brat")  # the API has no preview
        assert response.status_code == 202, response.content
        job_id = response.json()["id"]
        location = f"/projects/{a.pk}/imports/{job_id}/"
        page = client.get(location).content.decode()
        assert "Import of b.zip" in page
        deadline = time.monotonic() + 120
        while ImportJob.objects.get(pk=job_id).status not in ("done", "failed") and time.monotonic() < deadline:
            time.sleep(0.05)
        job = ImportJob.objects.get(pk=job_id)
        assert job.status == "failed", worker.log()
        assert "NO_SUCH_LABEL" in job.error and "nothing was imported" in job.error
        partial = client.get(location, HTTP_HX_REQUEST="true").content.decode()
        assert 'id="import-job"' in partial and 'data-status="failed"' in partial and "NO_SUCH_LABEL" in partial
        assert a.documents.count() == 120
        assert uploads_left(data_dir) == []
    finally:
        worker.stop()
