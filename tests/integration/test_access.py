"""Who sees what: an annotator sees only the projects they belong to, in the API and the HTML pages."""
from __future__ import annotations

import pytest

from annotator.services.imports import import_documents
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
    own = client.get(f"/api/projects/{projects['A'].pk}/documents/{documents['A'].pk}/")
    assert own.status_code == 200
    assert own.json()["text"] == "Ana fue vista."


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
    assert client.login(username="ana", password="pw-ana")
    assert client.get(f"/projects/{a.pk}/").status_code == 200
    assert client.get(f"/projects/{b.pk}/").status_code == 404
    assert client.get(f"/projects/{b.pk}/documents/{documents['B'].pk}/").status_code == 404
    assert client.get(f"/projects/{a.pk}/import/").status_code == 403
    listing = client.get("/").content.decode()
    assert ">A</a>" in listing and ">B</a>" not in listing


def test_viewing_a_document_is_audited(client, users, projects, documents):
    from annotator.models import AuditEvent

    client.login(username="ana", password="pw-ana")
    page = client.get(f"/projects/{projects['A'].pk}/documents/{documents['A'].pk}/").content.decode()
    assert 'data-label="NOMBRE_SUJETO_ASISTENCIA"' in page
    actions = list(AuditEvent.objects.filter(user=users["annotator"]).values_list("action", flat=True))
    assert sorted(actions) == ["login", "view"]
