"""Bad input is the sender's mistake: a 400 with the reason (or a 404 for an id that is not one), never a 500.
Non-numeric ids and filters, NaN and infinite numbers, pages beyond the limit, unknown labels."""
from __future__ import annotations

import json

import pytest

from annotator.models import Annotation
from annotator.services.imports import import_documents
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument

pytestmark = pytest.mark.django_db


@pytest.fixture
def handed_out(users, projects):
    """A record of project A handed to the annotator: (project, its draft annotation)."""
    project = projects["A"]
    import_documents(project=project, annotated=False, documents=[
        CorpusDocument(text="Paciente: Ana Ruiz, 54 años.", name="nota-1"),
        CorpusDocument(text="Paciente: Luis Gil.", name="nota-2"),
    ])
    handout = next_record(project=project, user=users["annotator"])
    return project, handout.annotation


def _reason(response) -> str:
    return json.dumps(response.json())


def test_annotations_filter_that_is_not_a_number_is_a_400(users, handed_out, api_as):
    project, _annotation = handed_out
    response = api_as(users["annotator"]).get(f"/api/projects/{project.pk}/annotations/?document=abc")
    assert response.status_code == 400
    assert "document" in response.json()


@pytest.mark.parametrize("query, field", [
    ("limit=100000", "limit"), ("limit=abc", "limit"), ("limit=-1", "limit"), ("offset=abc", "offset"),
    ("offset=-5", "offset"), ("limit=1e3", "limit"),
])
def test_pages_beyond_the_limit_or_not_whole_numbers_are_a_400(users, handed_out, api_as, query, field):
    project, _annotation = handed_out
    client = api_as(users["lead"])
    for listing in ("documents", "annotations"):
        response = client.get(f"/api/projects/{project.pk}/{listing}/?{query}")
        assert response.status_code == 400, (listing, query)
        assert field in response.json()
    assert client.get(f"/api/projects/?{query}").status_code == 400


def test_the_largest_allowed_page_is_served(users, handed_out, api_as):
    project, _annotation = handed_out
    response = api_as(users["lead"]).get(f"/api/projects/{project.pk}/documents/?limit=1000")
    assert response.status_code == 200
    assert response.json()["count"] == 2


@pytest.mark.parametrize("path", [
    "/api/projects/abc/", "/api/projects/1.5/", "/api/projects/{a}/documents/abc/",
    "/api/projects/{a}/annotations/abc/", "/api/projects/{a}/annotations/99999999999999999999/",
    "/api/projects/99999999999999999999/documents/", "/api/annotations/99999999999999999999/",
    "/projects/abc/", "/projects/99999999999999999999/",
])
def test_ids_that_are_not_ids_are_a_404(users, handed_out, client, path):
    project, _annotation = handed_out
    client.force_login(users["lead"])
    assert client.get(path.format(a=project.pk)).status_code == 404


@pytest.mark.parametrize("seconds", ["NaN", "nan", "inf", "-Infinity", "1e999", "abc", -1])
@pytest.mark.parametrize("endpoint, method", [("draft", "put"), ("submit", "post")])
def test_active_seconds_that_are_not_finite_numbers_are_a_400(users, handed_out, api_as, seconds, endpoint, method):
    _project, annotation = handed_out
    payload = {"version": annotation.version, "spans": [], "active_seconds": seconds}
    response = getattr(api_as(users["annotator"]), method)(
        f"/api/annotations/{annotation.pk}/{endpoint}/", payload, format="json")
    assert response.status_code == 400, response.content
    assert "active_seconds" in response.json()
    stored = Annotation.objects.get(pk=annotation.pk)
    assert (stored.version, stored.active_seconds, stored.state) == (annotation.version, 0, "draft")


@pytest.mark.parametrize("body", [
    '{"version": 1, "spans": [], "active_seconds": NaN}',
    '{"version": 1, "spans": [], "active_seconds": Infinity}',
    '{"version": 1, "spans": [{"start": 10, "end": 13, "label": "NOMBRE_SUJETO_ASISTENCIA", "confidence": NaN}]}',
])
def test_json_with_nan_or_infinity_tokens_is_a_400(users, handed_out, api_as, body):
    _project, annotation = handed_out
    response = api_as(users["annotator"]).put(
        f"/api/annotations/{annotation.pk}/draft/", body, content_type="application/json")
    assert response.status_code == 400


@pytest.mark.parametrize("confidence", ["nan", "inf", "-inf", 1e999, "abc", [0.5], {"p": 1}])
@pytest.mark.parametrize("endpoint, method", [("draft", "put"), ("submit", "post")])
def test_span_confidences_that_are_not_finite_numbers_are_a_400(users, handed_out, api_as, confidence, endpoint,
                                                                method):
    _project, annotation = handed_out
    span = {"start": 10, "end": 18, "label": "NOMBRE_SUJETO_ASISTENCIA", "origin": "model",
            "confidence": confidence}
    body = json.dumps({"version": annotation.version, "spans": [span]})  # 1e999 is written as Infinity
    body = body.replace("Infinity", "1e999")  # ... and sent as a number the JSON parser reads as inf
    response = getattr(api_as(users["annotator"]), method)(
        f"/api/annotations/{annotation.pk}/{endpoint}/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "confidence" in _reason(response)
    assert Annotation.objects.get(pk=annotation.pk).version == annotation.version


def test_a_finite_confidence_is_kept(users, handed_out, api_as):
    _project, annotation = handed_out
    span = {"start": 10, "end": 18, "label": "NOMBRE_SUJETO_ASISTENCIA", "origin": "model", "confidence": 0.75}
    response = api_as(users["annotator"]).put(
        f"/api/annotations/{annotation.pk}/draft/", {"version": annotation.version, "spans": [span]}, format="json")
    assert response.status_code == 200, response.content
    assert Annotation.objects.get(pk=annotation.pk).spans[0]["confidence"] == 0.75


@pytest.mark.parametrize("endpoint, method", [("draft", "put"), ("submit", "post")])
def test_unknown_labels_are_a_400_with_the_label(users, handed_out, api_as, endpoint, method):
    _project, annotation = handed_out
    span = {"start": 10, "end": 18, "label": "NOT_A_LABEL"}
    response = getattr(api_as(users["annotator"]), method)(
        f"/api/annotations/{annotation.pk}/{endpoint}/", {"version": annotation.version, "spans": [span]},
        format="json")
    assert response.status_code == 400
    assert "NOT_A_LABEL" in _reason(response)


@pytest.mark.parametrize("span", [
    {"start": "abc", "end": 3, "label": "NOMBRE_SUJETO_ASISTENCIA"},
    {"start": 5, "end": 2, "label": "NOMBRE_SUJETO_ASISTENCIA"},
    {"start": 0, "end": 10**6, "label": "NOMBRE_SUJETO_ASISTENCIA"},
    {"start": 0, "end": 3},
    {"start": 0, "end": 3, "label": ["NOMBRE_SUJETO_ASISTENCIA"]},
    {"start": 1.5, "end": 3, "label": "NOMBRE_SUJETO_ASISTENCIA"},
    {"start": 10**30, "end": 10**31, "label": "NOMBRE_SUJETO_ASISTENCIA"},
])
def test_malformed_spans_are_a_400(users, handed_out, api_as, span):
    _project, annotation = handed_out
    response = api_as(users["annotator"]).put(
        f"/api/annotations/{annotation.pk}/draft/", {"version": annotation.version, "spans": [span]}, format="json")
    assert response.status_code == 400, response.content


@pytest.mark.parametrize("version", ["abc", 0, 10**30, None])
def test_versions_that_are_not_versions_are_a_400(users, handed_out, api_as, version):
    _project, annotation = handed_out
    response = api_as(users["annotator"]).put(
        f"/api/annotations/{annotation.pk}/draft/", {"version": version, "spans": []}, format="json")
    assert response.status_code in (400, 409), response.content
    assert response.status_code == 400 or version == 10**30


def test_export_of_an_unknown_format_is_a_400(users, projects, api_as):
    response = api_as(users["lead"]).get(f"/api/projects/{projects['A'].pk}/export/?format=docx")
    assert response.status_code == 400
    assert "format" in response.json()


@pytest.mark.parametrize("query", ["rate=abc", "rate=nan", "rate=inf", "rate=-1", "rate=1e999"])
def test_people_page_with_a_bad_rate_is_not_a_500(users, projects, client, query):
    client.force_login(users["lead"])
    response = client.get(f"/projects/{projects['A'].pk}/people/?{query}")
    assert response.status_code == 200
    assert "nan" not in response.content.decode().lower().split("rate")[-1][:20]


@pytest.mark.parametrize("path", [
    "/projects/{a}/?page=abc", "/projects/{a}/?page=99999999999999999999", "/projects/{a}/?role=nothing",
    "/projects/{a}/dashboard/?simulation=abc", "/projects/{a}/audit/?page=abc",
    "/projects/{a}/release-planner/?recall=nan",
])
def test_pages_with_bad_query_parameters_are_not_a_500(users, projects, client, path):
    client.force_login(users["lead"])
    response = client.get(path.format(a=projects["A"].pk))
    assert response.status_code in (200, 400), response.status_code


def test_a_simulation_that_does_not_exist_is_a_404(users, projects, client):
    client.force_login(users["lead"])
    response = client.get(f"/projects/{projects['A'].pk}/dashboard/?simulation=99999999999999999999")
    assert response.status_code == 404
