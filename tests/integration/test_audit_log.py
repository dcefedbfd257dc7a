"""The audit log: append-only at the database and in the admin, kept when users go, membership changes
recorded with who acted and from where, and the lead's audit page and its CSV export."""
from __future__ import annotations

import csv
import io
import math
from datetime import datetime, timedelta

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.test import AsyncClient, Client
from django.utils import timezone

from annotator.middleware import current_request
from annotator.models import AuditEvent, Membership
from annotator.services.audit import record_event
from annotator.services.projects import set_membership

pytestmark = pytest.mark.django_db

ADDRESS = "203.0.113.7"


def client_for(user, address: str = ADDRESS) -> Client:
    client = Client(REMOTE_ADDR=address)
    client.force_login(user)
    return client


def insert_event(*, project, created_at: datetime, username: str = "lea", action: str = "view",
                 object_id: str = "") -> int:
    """An event written at a given time (the model stamps its own), as the database accepts any INSERT."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotator_auditevent (user_id, username, address, action, project_id, object_type,"
            " object_id, detail, created_at) VALUES (NULL, %s, NULL, %s, %s, 'Document', %s, '{}', %s)"
            " RETURNING id",
            [username, action, project.pk, object_id, created_at],
        )
        return cursor.fetchone()[0]


@pytest.fixture
def event(users, projects):
    return record_event(user=users["lead"], action=AuditEvent.Action.VIEW, project=projects["A"],
                        detail={"note": "kept"})


# --- append-only ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("statement", [
    "UPDATE annotator_auditevent SET username = 'someone else' WHERE id = %s",
    "DELETE FROM annotator_auditevent WHERE id = %s",
])
def test_the_database_refuses_raw_updates_and_deletes(event, statement):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(statement, [event.pk])
    stored = AuditEvent.objects.get(pk=event.pk)
    assert (stored.username, stored.detail) == ("lea", {"note": "kept"})


def test_the_database_refuses_orm_updates_and_deletes(event):
    attempts = [
        lambda: AuditEvent.objects.filter(pk=event.pk).update(username="someone else"),
        lambda: AuditEvent.objects.filter(pk=event.pk).delete(),
        lambda: AuditEvent.objects.get(pk=event.pk).delete(),
        lambda: AuditEvent(pk=event.pk, username="forged", action="view").save(),
        lambda: AuditEvent.objects.all().delete(),
    ]
    for attempt in attempts:
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            attempt()
    assert AuditEvent.objects.filter(pk=event.pk, username="lea", detail={"note": "kept"}).count() == 1


def test_the_admin_lists_events_but_cannot_add_change_or_delete_them(users, event):
    admin = client_for(users["admin"])
    base = "/admin/annotator/auditevent/"
    listing = admin.get(base, {"q": "lea", "action__exact": "view"})
    assert listing.status_code == 200 and f"{base}{event.pk}/change/" in listing.content.decode()
    assert "delete_selected" not in listing.content.decode()
    shown = admin.get(f"{base}{event.pk}/change/")
    assert shown.status_code == 200 and "kept" in shown.content.decode()
    assert admin.get(f"{base}add/").status_code == 403
    assert admin.post(f"{base}add/", {"username": "forged", "action": "view"}).status_code == 403
    assert admin.post(f"{base}{event.pk}/change/", {"username": "forged", "action": "login"}).status_code == 403
    assert admin.get(f"{base}{event.pk}/delete/").status_code == 403
    assert admin.post(f"{base}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    bulk = admin.post(base, {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"})
    assert bulk.status_code in (200, 302)
    assert AuditEvent.objects.filter(pk=event.pk, username="lea", action="view").count() == 1
    assert AuditEvent.objects.filter(username="forged").count() == 0


def test_deleting_a_user_in_the_admin_keeps_their_events(users, projects, event):
    ana = users["annotator"]
    own = record_event(user=ana, action=AuditEvent.Action.VIEW, project=projects["A"], detail={"n": 1})
    admin = client_for(users["admin"])
    assert admin.get(f"/admin/auth/user/{ana.pk}/delete/").status_code == 200
    response = admin.post(f"/admin/auth/user/{ana.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not get_user_model().objects.filter(pk=ana.pk).exists()
    kept = AuditEvent.objects.get(pk=own.pk)
    assert (kept.user_id, kept.username, kept.action, kept.detail) == (ana.pk, "ana", "view", {"n": 1})
    # Her membership went with her, recorded as done by the administrator from the admin's address.
    removal = AuditEvent.objects.get(action="membership", object_id=str(ana.pk), detail__change__startswith="removed")
    assert (removal.username, removal.address, removal.project_id) == ("root", ADDRESS, projects["A"].pk)
    assert removal.detail == {"member": "ana", "role": "annotator", "change": "removed (was annotator)"}
    # The admin still shows the event whose user is gone.
    assert admin.get(f"/admin/annotator/auditevent/{own.pk}/change/").status_code == 200
    assert "ana" in admin.get("/admin/annotator/auditevent/").content.decode()


# --- membership changes -----------------------------------------------------------------------------------

def membership_events():
    return list(AuditEvent.objects.filter(action="membership").order_by("id"))


def test_membership_changes_in_the_admin_are_audited_with_who_and_where(users, projects):
    admin = client_for(users["admin"])
    a, otto = projects["A"], users["outsider"]
    before = len(membership_events())
    added = admin.post("/admin/annotator/membership/add/", {"project": a.pk, "user": otto.pk, "role": "lead"})
    assert added.status_code == 302
    membership = Membership.objects.get(project=a, user=otto)
    changed = admin.post(f"/admin/annotator/membership/{membership.pk}/change/",
                         {"project": a.pk, "user": otto.pk, "role": "annotator"})
    assert changed.status_code == 302
    # Saved again without a new role: nothing to record.
    admin.post(f"/admin/annotator/membership/{membership.pk}/change/",
               {"project": a.pk, "user": otto.pk, "role": "annotator"})
    removed = admin.post(f"/admin/annotator/membership/{membership.pk}/delete/", {"post": "yes"})
    assert removed.status_code == 302
    events = membership_events()[before:]
    assert [event.detail for event in events] == [
        {"member": "otto", "role": "lead", "change": "added as lead"},
        {"member": "otto", "role": "annotator", "change": "role lead → annotator"},
        {"member": "otto", "role": "annotator", "change": "removed (was annotator)"},
    ]
    for event in events:
        assert (event.user_id, event.username, event.address) == (users["admin"].pk, "root", ADDRESS)
        assert (event.project_id, event.object_type, event.object_id) == (a.pk, "User", str(otto.pk))
    assert current_request() is None  # the request is not kept once served


def admin_form_data(response) -> dict:
    """What the admin's change form would post back unchanged, the inline formsets included."""
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    data = {}
    for form in forms:
        for bound in form:
            value = bound.value()
            if value is not None and value is not False:  # an unticked box sends nothing
                data[bound.html_name] = value
    return data


def test_membership_changes_through_the_project_inline_are_audited(users, projects):
    a, ana = projects["A"], users["annotator"]
    admin = client_for(users["admin"], address="2001:db8::5")
    page = admin.get(f"/admin/annotator/project/{a.pk}/change/")
    assert page.status_code == 200
    data = admin_form_data(page)
    formset = page.context["inline_admin_formsets"][0].formset
    for form in formset.forms:
        if form.instance.pk is None:  # the extra row: a new member
            data.update({f"{form.prefix}-user": users["outsider"].pk, f"{form.prefix}-role": "annotator"})
        elif form.instance.user_id == ana.pk:
            data[f"{form.prefix}-role"] = "lead"
    response = admin.post(f"/admin/annotator/project/{a.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    changes = {event.detail["member"]: event for event in membership_events() if event.username == "root"}
    assert changes["ana"].detail["change"] == "role annotator → lead"
    assert changes["otto"].detail["change"] == "added as annotator"
    assert set(changes) == {"ana", "otto"}  # lea's unchanged membership is not recorded
    assert {(event.user_id, event.address) for event in changes.values()} == {(users["admin"].pk, "2001:db8::5")}


def test_membership_changes_outside_a_request_have_no_actor_or_address(users, projects):
    a, otto = projects["A"], users["outsider"]
    set_membership(project=a, user=otto, role=Membership.Role.ANNOTATOR)
    set_membership(project=a, user=otto, role=Membership.Role.ANNOTATOR)  # unchanged: not recorded
    set_membership(project=a, user=otto, role=Membership.Role.ADMIN)
    Membership.objects.get(project=a, user=otto).delete()
    events = [event for event in membership_events() if event.detail["member"] == "otto"
              and event.project_id == a.pk]
    assert [event.detail["change"] for event in events] == [
        "added as annotator", "role annotator → admin", "removed (was admin)"]
    assert {(event.user_id, event.username, event.address) for event in events} == {(None, "", None)}


def test_the_fixture_memberships_are_audited_too(projects):
    # create_project adds its creator as lead; set_membership adds the others.
    changes = {(event.project_id, event.detail["member"], event.detail["change"]) for event in membership_events()}
    assert changes == {
        (projects["A"].pk, "lea", "added as lead"),
        (projects["A"].pk, "ana", "added as annotator"),
        (projects["B"].pk, "otto", "added as annotator"),
    }


# --- the audit page ---------------------------------------------------------------------------------------

@pytest.fixture
def logged(users, projects):
    """Events in A by lea and ana, one in B by otto."""
    a, b = projects["A"], projects["B"]
    record_event(user=users["lead"], action=AuditEvent.Action.VIEW, project=a, detail={"n": 1})
    AuditEvent.objects.create(user=users["annotator"], username="ana", action="edit", project=a,
                              object_type="Document", object_id="a-17", address="10.0.0.2")
    AuditEvent.objects.create(user=users["lead"], username="lea", action="export", project=a,
                              object_type="Project", object_id="a-export")
    AuditEvent.objects.create(user=users["outsider"], username="otto", action="view", project=b,
                              object_type="Document", object_id="b-secret")
    return {"A": a, "B": b}


def audit_url(project, suffix: str = "audit/") -> str:
    return f"/projects/{project.pk}/{suffix}"


def test_the_audit_page_shows_the_projects_events_to_its_lead_only(client, users, logged):
    a, b = logged["A"], logged["B"]
    page = client_for(users["lead"]).get(audit_url(a))
    assert page.status_code == 200
    html = page.content.decode()
    assert "a-17" in html and "a-export" in html and "b-secret" not in html
    assert "<script>" not in html and " onclick=" not in html and " onload=" not in html
    assert page.context["page"].paginator.count == AuditEvent.objects.filter(project_id=a.pk).count()
    assert client_for(users["annotator"]).get(audit_url(a)).status_code == 403
    assert client_for(users["outsider"]).get(audit_url(a)).status_code == 404
    assert client_for(users["outsider"]).get(audit_url(b)).status_code == 403
    assert client_for(users["lead"]).get(audit_url(b)).status_code == 404
    anonymous = client.get(audit_url(a))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    assert client_for(users["admin"]).get(audit_url(b)).status_code == 200
    # The project page links to it for leads, not for annotators.
    assert audit_url(a) in client_for(users["lead"]).get(f"/projects/{a.pk}/").content.decode()
    assert audit_url(a) not in client_for(users["annotator"]).get(f"/projects/{a.pk}/").content.decode()


def shown_ids(response) -> list[str]:
    assert response.status_code == 200, response.content.decode()[:2000]
    return [row["event"].object_id for row in response.context["rows"]]


def test_the_audit_page_filters(users, logged):
    a = logged["A"]
    lead = client_for(users["lead"])
    assert shown_ids(lead.get(audit_url(a), {"user": "AN"})) == ["a-17"]
    assert shown_ids(lead.get(audit_url(a), {"action": "export"})) == ["a-export"]
    assert shown_ids(lead.get(audit_url(a), {"object_id": "a-17"})) == ["a-17"]
    assert shown_ids(lead.get(audit_url(a), {"object_id": "b-secret"})) == []
    # Days are the site's time zone's: the last moment of 1 March there is on the 1st, the first of the 2nd not.
    insert_event(project=a, created_at=timezone.make_aware(datetime(2020, 3, 1, 23, 59, 59)), object_id="old")
    insert_event(project=a, created_at=timezone.make_aware(datetime(2020, 3, 2)), object_id="older-day+1")
    assert shown_ids(lead.get(audit_url(a), {"date_from": "2020-03-01", "date_to": "2020-03-01"})) == ["old"]
    assert shown_ids(lead.get(audit_url(a), {"date_to": "2020-03-02"})) == ["older-day+1", "old"]
    today = timezone.localdate()
    recent = shown_ids(lead.get(audit_url(a), {"date_from": today.isoformat(), "user": "a"}))
    assert "old" not in recent and {"a-17", "a-export"} <= set(recent)
    assert shown_ids(lead.get(audit_url(a), {"date_from": (today + timedelta(days=1)).isoformat()})) == []
    everything = shown_ids(lead.get(audit_url(a), {"date_from": "0001-01-01", "date_to": "9999-12-31"}))
    assert len(everything) == AuditEvent.objects.filter(project_id=a.pk).count()
    # The htmx page change gets the table alone.
    partial = lead.get(audit_url(a), {"action": "edit"}, headers={"HX-Request": "true"})
    assert partial.status_code == 200 and b"<html" not in partial.content and b"a-17" in partial.content


@pytest.mark.parametrize("query, field", [
    ({"date_from": "yesterday"}, "date_from"),
    ({"date_to": "2024-02-30"}, "date_to"),
    ({"action": "drop table"}, "action"),
    ({"date_from": "2024-02-01", "date_to": "2024-01-01"}, "date_to"),
    ({"user": "x\x00y"}, "user"),
    ({"object_id": "9" * 65}, "object_id"),
])
def test_bad_filters_are_400_with_the_reason_shown(users, logged, query, field):
    lead = client_for(users["lead"])
    for suffix in ("audit/", "audit.csv"):
        response = lead.get(audit_url(logged["A"], suffix), query)
        assert response.status_code == 400
        form = response.context["form"]
        assert field in form.errors
        assert str(form.errors[field][0]) in response.content.decode().replace("&#x27;", "'")
    assert not AuditEvent.objects.filter(action="export", detail__audit_csv=True).exists()


def test_the_audit_page_pages_newest_first(users, projects):
    a = projects["A"]
    for number in range(105):
        AuditEvent.objects.create(username="lea", action="view", project=a, object_id=f"n{number}")
    lead = client_for(users["lead"])
    first = lead.get(audit_url(a), {"user": "lea"})
    assert shown_ids(first)[:2] == ["n104", "n103"] and len(shown_ids(first)) == 100
    assert 'hx-get="?user=lea&amp;page=2"' in first.content.decode()
    second = lead.get(audit_url(a), {"user": "lea", "page": "2"})
    assert shown_ids(second) == [f"n{number}" for number in range(4, -1, -1)]
    assert shown_ids(lead.get(audit_url(a), {"user": "lea", "page": "many"}))[0] == "n104"
    assert shown_ids(lead.get(audit_url(a), {"user": "lea", "page": "99"}))[0] == "n4"


def read_csv(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode("utf-8"))))


def test_the_csv_export_has_the_rows_neutralises_formulas_and_is_audited(users, logged):
    a = logged["A"]
    AuditEvent.objects.create(username="=HYPERLINK(\"http://x\")", action="view", project=a,
                              object_type="@SUM(A1)", object_id="-2+3", address="10.9.9.9",
                              detail={"text": "=cmd"})
    AuditEvent.objects.create(username="+tab", action="view", project=a, object_id="\tTAB")
    response = client_for(users["lead"]).get(audit_url(a, "audit.csv"))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith(f'attachment; filename="audit-project-{a.pk}-')
    rows = read_csv(b"".join(response.streaming_content))
    assert rows[0] == ["time", "username", "address", "action", "object type", "object id", "detail"]
    by_id = {row[5]: row for row in rows[1:]}
    assert "b-secret" not in by_id
    assert by_id["a-17"][1:5] == ["ana", "10.0.0.2", "edit", "Document"]
    assert datetime.fromisoformat(by_id["a-17"][0]).tzinfo is not None
    assert by_id["'-2+3"][1:5] == ["'=HYPERLINK(\"http://x\")", "10.9.9.9", "view", "'@SUM(A1)"]
    assert by_id["'-2+3"][6] == '{"text": "=cmd"}'
    assert by_id["'\tTAB"][1] == "'+tab"
    # Every event of the project, the export's own included (it is written before the rows are read).
    assert len(rows) - 1 == AuditEvent.objects.filter(project_id=a.pk).count()
    export = AuditEvent.objects.get(action="export", detail__audit_csv=True)
    assert (export.username, export.address, export.project_id) == ("lea", ADDRESS, a.pk)
    assert export.detail == {"audit_csv": True, "filters": {}}


def test_the_csv_export_takes_the_filters(users, logged):
    a = logged["A"]
    response = client_for(users["lead"]).get(audit_url(a, "audit.csv"), {"action": "edit", "date_to": "2999-01-01"})
    rows = read_csv(b"".join(response.streaming_content))
    assert [row[5] for row in rows[1:]] == ["a-17"]
    export = AuditEvent.objects.get(action="export", detail__audit_csv=True)
    assert export.detail["filters"] == {"action": "edit", "date_to": "2999-01-01"}
    assert client_for(users["annotator"]).get(audit_url(a, "audit.csv")).status_code == 403
    assert client_for(users["outsider"]).get(audit_url(a, "audit.csv")).status_code == 404
    assert AuditEvent.objects.filter(action="export", detail__audit_csv=True).count() == 1


def test_the_csv_export_streams_under_asgi(users, logged):
    """Served by an ASGI server, the rows are read a chunk at a time, not gathered first."""
    a = logged["A"]
    for number in range(1200):
        AuditEvent.objects.create(username="lea", action="view", project=a, object_id=f"bulk{number}")

    async def download():
        client = AsyncClient()
        await client.aforce_login(users["lead"])
        response = await client.get(audit_url(a, "audit.csv"))
        chunks = [chunk async for chunk in response.streaming_content]
        return response, chunks

    response, chunks = async_to_sync(download)()
    assert response.status_code == 200 and response.is_async
    rows = read_csv(b"".join(chunks))
    assert len(chunks) == math.ceil(len(rows) / 500)  # 500 lines a chunk, the header included
    assert len(rows) - 1 == AuditEvent.objects.filter(project_id=a.pk).count()
    assert rows[1][3] == "export" and rows[1][2] == "127.0.0.1"  # the test scope's client
