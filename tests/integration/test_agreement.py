"""The agreement page and API on records two annotators submitted through the real queue and database."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotator.models import Membership
from annotator.services.annotations import submit
from annotator.services.imports import import_documents
from annotator.services.projects import set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument

pytestmark = pytest.mark.django_db
NAME, PLACE, DATE = "NOMBRE_SUJETO_ASISTENCIA", "TERRITORIO", "FECHAS"
TEXT = "Ana Ruiz vive en Madrid."


def _span(start, end, label):
    return {"start": start, "end": end, "label": label}


@pytest.fixture
def double_annotated(users, projects):
    """Project A, two annotators per record: ana and olga each submit the same two records, and ana alone a
    third one (not double-annotated yet)."""
    project = projects["A"]
    project.annotators_per_document = 2
    project.save()
    olga = get_user_model().objects.create_user("olga", password="pw")
    set_membership(project=project, user=olga, role=Membership.Role.ANNOTATOR)
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text=TEXT, name="r1")])
    ana = users["annotator"]
    work = {  # the record's spans per annotator: r1 as in the core's hand-worked example, r2 in full agreement
        "r1": {ana: [_span(0, 8, NAME), _span(17, 23, PLACE)], olga: [_span(0, 3, NAME), _span(17, 23, PLACE)]},
        "r2": {ana: [_span(9, 19, DATE)], olga: [_span(9, 19, DATE)]},
    }
    for name in ("r1", "r2"):
        if name == "r2":
            import_documents(project=project, annotated=False,
                             documents=[CorpusDocument(text="Visto el 17/03/2009.", name="r2")])
        for person, spans in work[name].items():
            handout = next_record(project=project, user=person)
            assert handout.annotation.document.external_id == name
            submit(annotation_id=handout.annotation.pk, user=person, version=handout.annotation.version, spans=spans)
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text="Luis Gil.", name="r3")])
    single = next_record(project=project, user=ana)
    submit(annotation_id=single.annotation.pk, user=ana, version=single.annotation.version,
           spans=[_span(0, 8, NAME)])
    return project


def test_the_api_gives_the_projects_figures_per_label_and_per_record(double_annotated, users, api_as):
    project = double_annotated
    response = api_as(users["lead"]).get(f"/api/projects/{project.pk}/agreement/")
    assert response.status_code == 200
    data = response.json()
    summary = data["summary"]
    assert summary["records"] == 2 and summary["unanimous"] == 1 and summary["annotators"] == ["ana", "olga"]
    # r1 gives 2 of 4 strict, 4 of 4 relaxed; r2 2 of 2 both
    assert summary["overall"]["strict_f1"] == pytest.approx(4 / 6)
    assert summary["overall"]["relaxed_f1"] == pytest.approx(6 / 6)
    assert summary["per_label"][NAME]["strict_f1"] == 0.0 and summary["per_label"][DATE]["strict_f1"] == 1.0
    assert summary["per_label"]["PAIS"] == {"strict_f1": None, "relaxed_f1": None, "kappa": None, "alpha": None,
                                            "spans": 0}
    assert set(summary["per_label"]) == set(project.labels)
    records = {row["external_id"]: row for row in data["records"]}
    assert set(records) == {"r1", "r2"}  # r3 has one submission
    assert records["r1"]["strict_f1"] == 0.5 and records["r1"]["unanimous"] is False
    assert records["r1"]["kappa"] == pytest.approx(15 / 21) and records["r1"]["alpha"] == pytest.approx(30 / 41)
    assert records["r2"]["unanimous"] is True and records["r2"]["kappa"] == 1.0
    assert [day["records"] for day in data["days"]] == [2]


def test_only_leads_and_admins_see_it(double_annotated, users, api_as):
    project = double_annotated
    for who, status in (("annotator", 403), ("outsider", 404), ("admin", 200)):
        assert api_as(users[who]).get(f"/api/projects/{project.pk}/agreement/").status_code == status, who


def test_the_page_shows_the_figures_and_the_records_that_disagree(double_annotated, users):
    client = Client()
    client.force_login(users["lead"])
    page = client.get(f"/projects/{double_annotated.pk}/agreement/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-kpi="strict_f1">0.667<' in html and 'data-kpi="relaxed_f1">1.000<' in html
    assert 'data-kpi="kappa">' in html and "2 in full agreement" not in html and "1 in full agreement" in html
    assert html.count('class="disagreement"') == 1
    chart = json.loads(html.split('id="agreement-data" type="application/json">')[1].split("</script>")[0])
    assert [row["label"] for row in chart["labels"]] == [NAME, DATE, PLACE]  # the labels used, in the schema's order


def test_without_double_annotation_the_page_says_how_to_get_it(users, projects):
    client = Client()
    client.force_login(users["lead"])
    page = client.get(f"/projects/{projects['A'].pk}/agreement/")
    assert page.status_code == 200 and "No double-annotated records yet" in page.content.decode()
