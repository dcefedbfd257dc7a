"""Who sees what: members see their projects only; an annotator sees the records handed to them and their own
annotations, never a colleague's work or the evaluation set (annotator.permissions writes the rule)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotator.models import Annotation, AuditEvent, Membership
from annotator.services.annotations import submit
from annotator.services.imports import import_documents
from annotator.services.projects import set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument
from corpus.types import Span

pytestmark = pytest.mark.django_db


@pytest.fixture
def documents(projects):
    def note(text, label):
        return CorpusDocument(text=text, spans=(Span(0, 3, label),), name=text[:3])

    import_documents(project=projects["A"], documents=[note("Ana fue vista.", "NOMBRE_SUJETO_ASISTENCIA")], annotated=True)
    import_documents(project=projects["B"], documents=[note("Bob was seen.", "PATIENT")], annotated=True)
    return {name: project.documents.get() for name, project in projects.items()}


@pytest.fixture
def double_annotated(users, projects):
    """Project A with two pool records for two annotators each and one evaluation record; ana and eva each
    hold both pool records, and eva has submitted the first one."""
    project = projects["A"]
    project.annotators_per_document = 2
    project.save()
    eva = get_user_model().objects.create_user("eva", password="pw-eva")
    set_membership(project=project, user=eva, role=Membership.Role.ANNOTATOR)
    import_documents(project=project, annotated=False, documents=[
        CorpusDocument(text="Pepe ingresó.", name="p1"), CorpusDocument(text="Lola salió.", name="p2")])
    import_documents(project=project, annotated=True, evaluation=True, documents=[
        CorpusDocument(text="Secreto evaluado.", spans=(Span(0, 7, "NOMBRE_SUJETO_ASISTENCIA"),), name="ev")])
    first = next_record(project=project, user=eva).annotation
    submit(annotation_id=first.pk, user=eva, version=first.version,
           spans=[{"start": 0, "end": 4, "label": "NOMBRE_SUJETO_ASISTENCIA"}])
    second = next_record(project=project, user=eva).annotation
    mine = [next_record(project=project, user=users["annotator"]).annotation]
    submit(annotation_id=mine[0].pk, user=users["annotator"], version=mine[0].version, spans=[])
    mine.append(next_record(project=project, user=users["annotator"]).annotation)
    return {"project": project, "eva": eva, "eva_first": first, "eva_second": second, "ana": mine}


def test_api_lists_only_member_projects(users, projects, api_as):
    names = [row["name"] for row in api_as(users["annotator"]).get("/api/projects/").json()["results"]]
    assert names == ["A"]
    names = [row["name"] for row in api_as(users["admin"]).get("/api/projects/").json()["results"]]
    assert names == ["A", "B"]


def test_api_hides_other_projects_and_their_documents(users, projects, documents, api_as):
    client = api_as(users["annotator"])
    b, doc_b = projects["B"], documents["B"]
    assert client.get(f"/api/projects/{b.pk}/").status_code == 404
    assert client.get(f"/api/projects/{b.pk}/documents/").status_code == 404
    assert client.get(f"/api/projects/{b.pk}/documents/{doc_b.pk}/").status_code == 404
    assert client.get(f"/api/projects/{b.pk}/annotations/").status_code == 404
    # A document of B asked for under A, the annotator's own project, is not found either.
    assert client.get(f"/api/projects/{projects['A'].pk}/documents/{doc_b.pk}/").status_code == 404
    # A's imported gold record was never handed to ana: she may not read it; her lead may.
    assert client.get(f"/api/projects/{projects['A'].pk}/documents/{documents['A'].pk}/").status_code == 404
    led = api_as(users["lead"]).get(f"/api/projects/{projects['A'].pk}/documents/{documents['A'].pk}/")
    assert led.status_code == 200
    assert led.json()["text"] == "Ana fue vista."


def test_api_requires_authentication(projects):
    from rest_framework.test import APIClient

    response = APIClient().get("/api/projects/")
    assert response.status_code in (401, 403)
    assert "results" not in response.json()


def test_annotator_may_not_import_or_export(users, projects, api_as):
    client = api_as(users["annotator"])
    a = projects["A"]
    assert client.get(f"/api/projects/{a.pk}/export/?format=jsonl").status_code == 403
    response = client.post(f"/api/projects/{a.pk}/import/", {"format": "txt"}, format="multipart")
    assert response.status_code == 403
    assert a.documents.count() == 0


def test_only_administrators_create_projects(users, projects, api_as):
    payload = {"name": "C", "schema": "HIPAA-18"}
    assert api_as(users["lead"]).post("/api/projects/", payload, format="json").status_code == 403
    created = api_as(users["admin"]).post("/api/projects/", payload, format="json")
    assert created.status_code == 201
    assert created.json()["labels"][:2] == ["NAME", "GEOGRAPHIC_SUBDIVISION"]


def test_html_pages_need_login_and_membership(client, users, projects, documents):
    a, b = projects["A"], projects["B"]
    anonymous = client.get(f"/projects/{a.pk}/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    client.force_login(users["annotator"])
    assert client.get(f"/projects/{a.pk}/").status_code == 200
    assert client.get(f"/projects/{b.pk}/").status_code == 404
    assert client.get(f"/projects/{b.pk}/documents/{documents['B'].pk}/").status_code == 404
    assert client.get(f"/projects/{a.pk}/import/").status_code == 403
    listing = client.get("/").content.decode()
    assert ">A</a>" in listing and ">B</a>" not in listing


def test_viewing_a_document_is_audited(client, users, projects, documents):
    client.force_login(users["lead"])
    page = client.get(f"/projects/{projects['A'].pk}/documents/{documents['A'].pk}/",
                      REMOTE_ADDR="10.1.2.3").content.decode()
    assert 'data-label="NOMBRE_SUJETO_ASISTENCIA"' in page
    events = AuditEvent.objects.filter(user=users["lead"]).order_by("id")
    assert [event.action for event in events] == ["login", "view"]
    view = events.last()
    assert (view.object_type, view.object_id, view.username, view.address) == (
        "Document", str(documents["A"].pk), "lea", "10.1.2.3")


def test_an_annotator_reads_only_their_own_annotations(users, double_annotated, api_as):
    project, eva_first = double_annotated["project"], double_annotated["eva_first"]
    listing = api_as(users["annotator"]).get(f"/api/projects/{project.pk}/annotations/?limit=1000").json()
    assert {row["annotator"] for row in listing["results"]} == {"ana"}
    assert {row["id"] for row in listing["results"]} == {a.pk for a in double_annotated["ana"]}
    # eva's submitted annotation of a record ana also holds stays hers alone, by id and by document.
    client = api_as(users["annotator"])
    assert client.get(f"/api/projects/{project.pk}/annotations/{eva_first.pk}/").status_code == 404
    by_document = client.get(f"/api/projects/{project.pk}/annotations/?document={eva_first.document_id}").json()
    assert [row["annotator"] for row in by_document["results"]] == ["ana"]
    assert client.get(f"/api/annotations/{eva_first.pk}/").status_code == 404
    # The lead sees everyone's.
    everyone = api_as(users["lead"]).get(f"/api/projects/{project.pk}/annotations/?limit=1000").json()
    assert {row["annotator"] for row in everyone["results"]} == {"ana", "eva", None}  # None: imported gold
    # Each with its spans as stored, in SpanSerializer's shape.
    stored = dict(Annotation.objects.filter(document__project=project).values_list("pk", "spans"))
    assert any(row["spans"] for row in everyone["results"])
    for row in everyone["results"]:
        assert row["spans"] == [{"start": span["start"], "end": span["end"], "label": span["label"],
                                 "origin": span.get("origin", "human")} for span in stored[row["id"]]]


def test_an_annotator_sees_only_records_handed_to_them_and_never_the_evaluation_set(
    client, users, double_annotated, api_as
):
    project = double_annotated["project"]
    listing = api_as(users["annotator"]).get(f"/api/projects/{project.pk}/documents/").json()
    assert sorted(row["external_id"] for row in listing["results"]) == ["p1", "p2"]
    evaluation = project.documents.get(external_id="ev")
    assert api_as(users["annotator"]).get(f"/api/projects/{project.pk}/documents/{evaluation.pk}/").status_code == 404
    client.force_login(users["annotator"])
    assert client.get(f"/projects/{project.pk}/documents/{evaluation.pk}/").status_code == 404
    page = client.get(f"/projects/{project.pk}/").content.decode()
    assert "Secreto" not in page and ">ev<" not in page and "eva —" not in page and ">eva<" not in page
    # The record ana submitted shows her own (empty) annotation, not eva's name span on the same text.
    first = double_annotated["eva_first"].document
    shown = client.get(f"/projects/{project.pk}/documents/{first.pk}/").content.decode()
    assert "data-label=" not in shown


def test_annotators_are_refused_the_lead_pages_and_model_api(client, users, double_annotated, api_as):
    project = double_annotated["project"]
    client.force_login(users["annotator"])
    for path in ("loop/", "dashboard/", "people/", "clusters/", "release-planner/", "import/", "export/"):
        assert client.get(f"/projects/{project.pk}/{path}").status_code == 403, path
    api = api_as(users["annotator"])
    assert api.get(f"/api/projects/{project.pk}/loop/").status_code == 403
    assert api.post(f"/api/projects/{project.pk}/retrain/").status_code == 403


def test_asking_for_the_annotate_page_claims_nothing_posting_does(client, users, projects):
    project = projects["A"]
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text="Pepe ingresó.", name="p1")])
    client.force_login(users["annotator"])
    start = client.get(f"/projects/{project.pk}/annotate/")
    assert start.status_code == 200 and b"annotate-start" in start.content
    assert not Annotation.objects.filter(annotator=users["annotator"]).exists()
    claimed = client.post(f"/projects/{project.pk}/annotate/")
    annotation = Annotation.objects.get(annotator=users["annotator"])
    assert claimed.status_code == 302
    assert claimed["Location"] == f"/projects/{project.pk}/annotate/{annotation.document_id}/"
    # Now GET finds the open record and goes there.
    assert client.get(f"/projects/{project.pk}/annotate/")["Location"] == claimed["Location"]
    assert AuditEvent.objects.filter(user=users["annotator"], action="view", object_id=str(annotation.document_id)
                                     ).count() == 0  # the record text is read when the page opens, not before
    client.get(claimed["Location"])
    assert AuditEvent.objects.filter(user=users["annotator"], action="view",
                                     object_id=str(annotation.document_id)).count() == 1


def test_bad_filters_and_pages_are_400_with_the_reason(users, projects, api_as):
    client = api_as(users["lead"])
    response = client.get(f"/api/projects/{projects['A'].pk}/annotations/?document=abc")
    assert response.status_code == 400 and "document" in response.json()
    response = client.get(f"/api/projects/{projects['A'].pk}/annotations/?limit=100000")
    assert response.status_code == 400 and "at most" in response.json()["limit"]
    assert client.get(f"/api/projects/{projects['A'].pk}/annotations/?offset=-1").status_code == 400


@pytest.mark.django_db
def test_project_for_reads_the_project_and_the_members_role_as_the_orm_would(users, projects):
    from django.core.exceptions import PermissionDenied
    from django.http import Http404

    from annotator.models import Project
    from annotator.permissions import Can, project_for

    project = projects["A"]
    set_membership(project=project, user=users["outsider"], role=Membership.Role.ADJUDICATOR)
    fields = [field.attname for field in Project._meta.concrete_fields]
    expected = Project.objects.values_list(*fields).get(pk=project.pk)
    for user, role in ((users["lead"], "lead"), (users["annotator"], "annotator"), (users["outsider"], "adjudicator"),
                       (users["admin"], None)):
        found = project_for(user, str(project.pk), Can.SEE_PROJECT)
        assert tuple(getattr(found, name) for name in fields) == expected
        assert getattr(found, "_member_role", None) == role  # None: a superuser, an admin without a membership
    with pytest.raises(PermissionDenied, match="may not import"):
        project_for(users["annotator"], project.pk, Can.MANAGE)
    # Outsiders, missing projects and ids that are no project's are told nothing.
    B = projects["B"]
    for user in (users["lead"], users["admin"]):
        for wrong in ("x", None, -1, 0, 10**30, 2**63, 2**63 - 1) + ((B.pk,) if user is users["lead"] else ()):
            with pytest.raises(Http404):
                project_for(user, wrong, Can.SEE_PROJECT)
