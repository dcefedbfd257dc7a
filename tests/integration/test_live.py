"""The ASGI application with the Redis channel layer: websockets for members only, notices from
``notify_project``, presence for leads; and HTTP through the same application, on pooled threads."""
from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.db import connection
from django.test import Client

from annotator.models import Membership
from annotator.services.imports import import_documents
from annotator.services.notify import _presence_key, _redis, active_annotators, notify_project
from annotator.services.projects import set_membership
from config.asgi import application, django_asgi_app
from corpus.types import Document as CorpusDocument

ORIGIN = (b"origin", b"http://127.0.0.1:8000")
TIMEOUT = 5


def session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()


def socket(project_id: int, cookie=None, *, origin=ORIGIN) -> WebsocketCommunicator:
    headers = [origin] + ([cookie] if cookie is not None else [])
    return WebsocketCommunicator(application, f"/ws/projects/{project_id}/", headers=headers)


@pytest.fixture
def cookies(users):
    """Session cookies of the fixture users, made before any event loop runs (logging in writes the DB)."""
    return {role: session_cookie(user) for role, user in users.items()}


def run(coroutine_function):
    """Run an async scenario from a sync test (one event loop for the whole scenario)."""
    return async_to_sync(coroutine_function)()


@pytest.fixture
def pool(projects):
    project = projects["A"]
    _redis().delete(_presence_key(project.pk))
    import_documents(project=project, annotated=False, documents=[
        CorpusDocument(text="Paciente: Ana Ruiz.", name="nota-1"),
        CorpusDocument(text="Paciente: Luis Gil.", name="nota-2"),
    ])
    yield list(project.documents.order_by("id"))
    _redis().delete(_presence_key(project.pk))


@pytest.mark.django_db(transaction=True)
def test_outsiders_anonymous_visitors_and_foreign_origins_are_refused(cookies, projects):
    project = projects["A"]

    async def scenario():
        outsider = socket(project.pk, cookies["outsider"])
        assert await outsider.connect(timeout=TIMEOUT) == (False, 4403)
        anonymous = socket(project.pk)
        assert await anonymous.connect(timeout=TIMEOUT) == (False, 4403)
        missing = socket(project.pk + 1000, cookies["admin"])
        assert await missing.connect(timeout=TIMEOUT) == (False, 4403)
        # The origin check runs before authentication: a page on another site cannot use the cookie.
        foreign = socket(project.pk, cookies["annotator"], origin=(b"origin", b"http://evil.example"))
        connected, _code = await foreign.connect(timeout=TIMEOUT)
        assert connected is False
        member = socket(project.pk, cookies["annotator"])
        assert (await member.connect(timeout=TIMEOUT))[0] is True
        await member.disconnect()

    run(scenario)


@pytest.mark.django_db(transaction=True)
def test_members_receive_notices_and_other_projects_do_not(cookies, projects):
    a, b = projects["A"], projects["B"]

    async def scenario():
        annotator = socket(a.pk, cookies["annotator"])
        lead = socket(a.pk, cookies["lead"])
        elsewhere = socket(b.pk, cookies["outsider"])
        for communicator in (annotator, lead, elsewhere):
            assert (await communicator.connect(timeout=TIMEOUT))[0] is True
        assert (await lead.receive_json_from(timeout=TIMEOUT)) == {"type": "presence", "annotators": []}

        sent = await sync_to_async(notify_project)(
            project_id=a.pk, kind="model_ready", text="Model 3 is ready (F1 0.81).", data={"model_version": 3},
        )
        assert sent is True
        expected = {"type": "notice", "kind": "model_ready", "text": "Model 3 is ready (F1 0.81).", "model_version": 3}
        assert await annotator.receive_json_from(timeout=TIMEOUT) == expected
        assert await lead.receive_json_from(timeout=TIMEOUT) == expected
        assert await elsewhere.receive_nothing(timeout=0.5)
        for communicator in (annotator, lead, elsewhere):
            await communicator.disconnect()

    run(scenario)


@pytest.mark.django_db(transaction=True)
def test_leads_see_who_annotates_what_until_they_leave(users, cookies, projects, pool):
    project = projects["A"]
    first, second = pool
    set_membership(project=project, user=users["outsider"], role=Membership.Role.ANNOTATOR)

    async def scenario():
        lead = socket(project.pk, cookies["lead"])
        assert (await lead.connect(timeout=TIMEOUT))[0] is True
        assert await lead.receive_json_from(timeout=TIMEOUT) == {"type": "presence", "annotators": []}

        ana = socket(project.pk, cookies["annotator"])
        assert (await ana.connect(timeout=TIMEOUT))[0] is True
        await ana.send_json_to({"type": "presence", "document_id": first.pk})
        update = await lead.receive_json_from(timeout=TIMEOUT)
        assert update["type"] == "presence"
        assert [(p["username"], p["document_id"], p["external_id"]) for p in update["annotators"]] == [
            ("ana", first.pk, "nota-1")]
        assert update["annotators"][0]["since"].endswith("+00:00")

        otto = socket(project.pk, cookies["outsider"])
        assert (await otto.connect(timeout=TIMEOUT))[0] is True
        await otto.send_json_to({"type": "presence", "document_id": second.pk})
        update = await lead.receive_json_from(timeout=TIMEOUT)
        assert [(p["username"], p["external_id"]) for p in update["annotators"]] == [
            ("ana", "nota-1"), ("otto", "nota-2")]
        # Annotators are not told who else is working; the page they have open only shows notices.
        assert await ana.receive_nothing(timeout=0.3)

        # The project page's first render reads the same store.
        listed = await sync_to_async(active_annotators)(project_id=project.pk)
        assert [p["username"] for p in listed] == ["ana", "otto"]

        await ana.disconnect()
        update = await lead.receive_json_from(timeout=TIMEOUT)
        assert [(p["username"], p["external_id"]) for p in update["annotators"]] == [("otto", "nota-2")]
        await otto.disconnect()
        assert await lead.receive_json_from(timeout=TIMEOUT) == {"type": "presence", "annotators": []}
        await lead.disconnect()

    run(scenario)
    assert active_annotators(project_id=project.pk) == []


@pytest.mark.django_db(transaction=True)
def test_presence_for_a_document_of_another_project_is_refused(cookies, projects, pool):
    project, other = projects["A"], projects["B"]
    foreign = import_documents(project=other, annotated=False,
                               documents=[CorpusDocument(text="Otro proyecto.", name="x")])
    assert foreign.created == 1
    foreign_id = other.documents.get().pk

    async def scenario():
        ana = socket(project.pk, cookies["annotator"])
        assert (await ana.connect(timeout=TIMEOUT))[0] is True
        await ana.send_json_to({"type": "presence", "document_id": foreign_id})
        reply = await ana.receive_json_from(timeout=TIMEOUT)
        assert reply == {"type": "error", "text": f"no document {foreign_id} in this project"}
        await ana.send_json_to({"type": "presence", "document_id": "x"})
        assert (await ana.receive_json_from(timeout=TIMEOUT))["type"] == "error"
        await ana.disconnect()

    run(scenario)
    assert active_annotators(project_id=project.pk) == []


@pytest.mark.django_db(transaction=True)
def test_stale_entries_age_out_without_a_goodbye(users, projects, pool):
    """A server that died leaves entries behind; they stop counting once older than the TTL."""
    import json
    import time

    from annotator.services import notify

    project = projects["A"]
    notify.record_presence(project_id=project.pk, connection="gone", username="ana",
                           document_id=pool[0].pk, external_id="nota-1", since="2026-01-01T00:00:00+00:00")
    assert [p["username"] for p in active_annotators(project_id=project.pk)] == ["ana"]
    key = _presence_key(project.pk)
    entry = json.loads(_redis().hget(key, "gone"))
    entry["seen"] = time.time() - notify.PRESENCE_TTL_SECONDS - 1
    _redis().hset(key, "gone", json.dumps(entry))
    assert active_annotators(project_id=project.pk) == []
    assert _redis().hlen(key) == 0



@pytest.mark.django_db
def test_the_project_page_shows_leads_who_annotates_what(users, projects, pool):
    from annotator.services import notify

    project = projects["A"]
    notify.record_presence(project_id=project.pk, connection="tab-1", username="ana", document_id=pool[1].pk,
                           external_id="nota-2", since="2026-03-04T09:15:00+00:00")
    lead = Client()
    lead.force_login(users["lead"])
    page = lead.get(f"/projects/{project.pk}/").content.decode()
    assert 'data-socket="/ws/projects/%d/"' % project.pk in page
    assert "<b>ana</b> — nota-2" in page and ">09:15</time>" in page
    assert "js/presence.js" in page
    annotator = Client()
    annotator.force_login(users["annotator"])
    assert "presence" not in annotator.get(f"/projects/{project.pk}/").content.decode()


def other_backends() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_http_through_the_asgi_application_runs_the_middleware_and_keeps_its_connections(cookies, projects):
    """Sessions, login, CSRF and the API apply as before; requests reuse their thread's PostgreSQL
    connection instead of opening one each."""
    host = (b"host", b"127.0.0.1")

    async def request(method: str, path: str, *headers):
        return await HttpCommunicator(application, method, path, headers=[host, *headers]).get_response(timeout=TIMEOUT)

    async def scenario():
        login = await request("GET", "/login/")
        assert login["status"] == 200 and b'name="csrfmiddlewaretoken"' in login["body"]
        anonymous = await request("GET", "/")
        assert anonymous["status"] == 302 and dict(anonymous["headers"])[b"Location"].startswith(b"/login/")
        # A session-authenticated write without the CSRF token is refused.
        post = await request("POST", f"/api/projects/{projects['A'].pk}/next/", cookies["annotator"])
        assert post["status"] == 403
        seen = set()
        for _ in range(8):
            api = await request("GET", "/api/projects/", cookies["annotator"])
            assert api["status"] == 200 and b'"name":"A"' in api["body"] and b'"name":"B"' not in api["body"]
            seen |= await sync_to_async(other_backends)()
        return seen

    backends = run(scenario)
    assert 1 <= len(backends) <= django_asgi_app.threads
    django_asgi_app.close_connections()
    # A backend process exits just after its client hangs up: wait for PostgreSQL to see them gone.
    deadline = time.monotonic() + 30
    while not other_backends().isdisjoint(backends):
        assert time.monotonic() < deadline, f"backends {backends & other_backends()} still open 30 s after closing"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_the_web_threads_close_their_connections_once_the_site_has_been_quiet(cookies, projects):
    """After a burst every thread holds a PostgreSQL backend; after idle_close_seconds without a request,
    none is left, and the next request opens one again."""
    from config.asgi import ThreadPoolASGIHandler

    handler = ThreadPoolASGIHandler(threads=3, idle_close_seconds=3)
    host = (b"host", b"127.0.0.1")

    async def burst() -> set[int]:
        async def one():
            communicator = HttpCommunicator(handler, "GET", "/api/projects/", headers=[host, cookies["annotator"]])
            return await communicator.get_response(timeout=TIMEOUT)

        seen = set()
        for _ in range(4):
            responses = await asyncio.gather(*(one() for _ in range(6)))
            assert all(response["status"] == 200 for response in responses)
            seen |= await sync_to_async(other_backends)()
        return seen

    async def scenario():
        opened = await burst()
        assert opened, "the requests opened no connection of their own"
        still_open = opened & await sync_to_async(other_backends)()
        assert still_open, "the connections were closed right after the burst"
        # Quiet for longer than idle_close_seconds: the threads close theirs (a backend exits just after its
        # client hangs up, so wait for PostgreSQL to see them gone).
        deadline = time.monotonic() + 30
        while opened & await sync_to_async(other_backends)():
            assert time.monotonic() < deadline, "the connections were still open 30 s into a quiet site"
            await asyncio.sleep(0.2)
        return await burst()

    reopened = run(scenario)
    assert reopened, "a request after the quiet spell opened no connection"
    handler.close_connections()
