"""Adjudication against the real PostgreSQL: records whose submissions agree are adjudicated when the last one
comes in, the others wait for a person; the gold rule feeds training and export; the API and its roles."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from annotator.models import Annotation, AuditEvent, Document, Membership, Project
from annotator.selectors import adjudication_queue, gold_document_ids, gold_documents
from annotator.services.adjudication import AdjudicationError, AdjudicatorConflict, adjudicate
from annotator.services.annotations import submit
from annotator.services.exports import export_corpus
from annotator.services.imports import import_documents
from annotator.services.projects import set_membership
from annotator.services.queue import next_record
from corpus.synthetic import generate_notes
from corpus.types import Document as CorpusDocument
from corpus.types import Span
from learning.services.retrain import train_and_rank

pytestmark = pytest.mark.django_db
NAME, PLACE = "NOMBRE_SUJETO_ASISTENCIA", "TERRITORIO"
TEXT = "Ana Ruiz vive en Madrid."
FULL, SHORT, CITY = Span(0, 8, NAME), Span(0, 3, NAME), Span(17, 23, PLACE)


def _wire(spans):
    return [{"start": s.start, "end": s.end, "label": s.label} for s in spans]


@pytest.fixture
def team(users, projects):
    """Project A asks for two annotators per record: ana, olga and (an adjudicator) ada."""
    project = projects["A"]
    project.annotators_per_document = 2
    project.save()
    User = get_user_model()
    people = {"ana": users["annotator"], "olga": User.objects.create_user("olga", password="pw"),
              "ada": User.objects.create_user("ada", password="pw")}
    set_membership(project=project, user=people["olga"], role=Membership.Role.ANNOTATOR)
    set_membership(project=project, user=people["ada"], role=Membership.Role.ADJUDICATOR)
    return project, people


def annotate(project, person, spans, *, name=None):
    handout = next_record(project=project, user=person)
    if name is not None:
        assert handout.annotation.document.external_id == name
    submit(annotation_id=handout.annotation.pk, user=person, version=handout.annotation.version, spans=_wire(spans))
    return handout.annotation.document


def record(project, name, text=None):
    """A new pool record; by default the example sentence, followed by its name (a re-import of the same text
    would be no new record)."""
    text = text if text is not None else f"{TEXT} ({name})"
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text=text, name=name)])


def test_submissions_that_agree_are_adjudicated_when_the_last_comes_in(team):
    project, people = team
    record(project, "same")
    document = annotate(project, people["ana"], [FULL, CITY])
    assert Document.objects.get(pk=document.pk).status == Document.Status.POOL  # one of two: free for the second
    assert gold_document_ids(project=project) == []  # waiting for the second annotator
    annotate(project, people["olga"], [CITY, FULL])
    document.refresh_from_db()
    assert document.status == Document.Status.ADJUDICATED
    gold = Annotation.objects.get(document=document, source=Annotation.Source.ADJUDICATED)
    assert gold.annotator is None and gold.adjudicated_by is None and gold.state == Annotation.State.SUBMITTED
    assert [d.spans for d in gold_documents(project=project)] == [(FULL, CITY)]
    event = AuditEvent.objects.get(action=AuditEvent.Action.ADJUDICATE)
    assert event.detail == {"adjudicated": "automatically", "rule": "unanimous", "annotators": ["ana", "olga"]}
    assert list(adjudication_queue(project=project, user=people["ada"])) == []


def test_a_disagreement_waits_for_a_person_and_is_no_gold_meanwhile(team):
    project, people = team
    record(project, "differ")
    annotate(project, people["ana"], [FULL, CITY])
    document = annotate(project, people["olga"], [SHORT, CITY])
    document.refresh_from_db()
    assert document.status == Document.Status.SUBMITTED
    assert not Annotation.objects.filter(source=Annotation.Source.ADJUDICATED).exists()
    assert list(adjudication_queue(project=project, user=people["ada"])) == [document]
    assert gold_documents(project=project) == []  # left out of training, evaluation and export
    project.awaiting_adjudication = Project.Awaiting.AGREED
    project.save()
    assert [d.spans for d in gold_documents(project=project)] == [(CITY,)]  # only what both marked

    gold = adjudicate(document=document, user=people["ada"], choices=["olga"])
    assert gold.adjudicated_by == people["ada"]
    assert [d.spans for d in gold_documents(project=project)] == [(SHORT, CITY)]
    document.refresh_from_db()
    assert document.status == Document.Status.ADJUDICATED
    assert list(adjudication_queue(project=project, user=people["ada"])) == []
    # deciding again replaces the gold; both decisions are in the audit log
    adjudicate(document=document, user=_lead(project), spans=_wire([FULL]))
    assert [d.spans for d in gold_documents(project=project)] == [(FULL,)]
    assert Annotation.objects.filter(source=Annotation.Source.ADJUDICATED).count() == 1
    assert AuditEvent.objects.filter(action=AuditEvent.Action.ADJUDICATE).count() == 2


def _lead(project):
    return project.memberships.get(role=Membership.Role.LEAD).user


def test_a_majority_decides_with_three_annotators_when_the_project_says_so(team):
    project, people = team
    project.annotators_per_document = 3
    project.save()
    third = get_user_model().objects.create_user("tere", password="pw")
    set_membership(project=project, user=third, role=Membership.Role.ANNOTATOR)
    record(project, "vote")
    annotate(project, people["ana"], [FULL, CITY])
    annotate(project, people["olga"], [FULL])
    document = annotate(project, third, [SHORT, CITY])
    document.refresh_from_db()
    assert document.status == Document.Status.SUBMITTED  # unanimity is the default: a person decides
    project.adjudication = Project.Adjudication.MAJORITY
    project.save()
    record(project, "vote-2")
    annotate(project, people["ana"], [FULL, CITY])
    annotate(project, people["olga"], [FULL])
    second = annotate(project, third, [SHORT, CITY])
    second.refresh_from_db()
    assert second.status == Document.Status.ADJUDICATED
    gold = Annotation.objects.get(document=second, source=Annotation.Source.ADJUDICATED)
    assert [(s["start"], s["end"], s["label"]) for s in gold.spans] == [(0, 8, NAME), (17, 23, PLACE)]


def test_adjudicators_never_judge_their_own_records_and_bad_decisions_change_nothing(team):
    project, people = team
    record(project, "mine")
    annotate(project, people["ana"], [FULL])
    document = annotate(project, people["ada"], [SHORT])
    assert list(adjudication_queue(project=project, user=people["ada"])) == []  # hers: not in her queue
    assert list(adjudication_queue(project=project, user=_lead(project))) == [document]
    with pytest.raises(AdjudicatorConflict):
        adjudicate(document=document, user=people["ada"], choices=["ana"])
    lead = _lead(project)
    with pytest.raises(AdjudicationError, match="1 conflicts but 2 choices"):
        adjudicate(document=document, user=lead, choices=["ana", None])
    with pytest.raises(AdjudicationError, match="is not in the label set"):
        adjudicate(document=document, user=lead, spans=[{"start": 0, "end": 3, "label": "NOPE"}])
    with pytest.raises(AdjudicationError, match="either"):
        adjudicate(document=document, user=lead)
    assert not Annotation.objects.filter(source=Annotation.Source.ADJUDICATED).exists()
    assert Document.objects.get(pk=document.pk).status == Document.Status.SUBMITTED


def test_the_api_shows_the_conflicts_and_takes_the_decision(team, api_as):
    project, people = team
    record(project, "api")
    annotate(project, people["ana"], [FULL, CITY])
    document = annotate(project, people["olga"], [SHORT, CITY])
    url = f"/api/projects/{project.pk}/adjudication/{document.pk}/"
    for who, status in ((people["ana"], 403), (people["olga"], 403), (people["ada"], 200), (_lead(project), 200)):
        assert api_as(who).get(url).status_code == status
    payload = api_as(people["ada"]).get(url).json()
    assert payload["annotators"] == ["ana", "olga"] and payload["agreed"] == [{"start": 17, "end": 23, "label": PLACE}]
    assert payload["conflicts"] == [{"start": 0, "end": 8, "text": "Ana Ruiz", "versions": {
        "ana": [{"start": 0, "end": 8, "label": NAME, "text": "Ana Ruiz"}],
        "olga": [{"start": 0, "end": 3, "label": NAME, "text": "Ana"}]}}]
    queue = api_as(people["ada"]).get(f"/api/projects/{project.pk}/adjudication/").json()
    assert [row["id"] for row in queue["results"]] == [document.pk]
    assert AuditEvent.objects.filter(action=AuditEvent.Action.VIEW, object_id=str(document.pk),
                                     username="ada").count() == 2

    bad = api_as(people["ada"]).post(url, {"choices": ["nobody"]}, format="json")
    assert bad.status_code == 400 and "no annotator 'nobody'" in bad.json()["detail"]
    both = api_as(people["ada"]).post(url, {"choices": ["ana"], "spans": []}, format="json")
    assert both.status_code == 400
    done = api_as(people["ada"]).post(url, {"choices": ["ana"]}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["next_url"] == f"/projects/{project.pk}/adjudication/"
    assert [d.spans for d in gold_documents(project=project)] == [(FULL, CITY)]
    # a record with one submission has nothing to adjudicate
    record(project, "single")
    single = annotate(project, people["ana"], [FULL])
    assert api_as(_lead(project)).get(f"/api/projects/{project.pk}/adjudication/{single.pk}/").status_code == 404


@pytest.mark.slow
def test_training_and_export_take_the_gold_rule(team, tmp_path):
    project, people = team
    notes = generate_notes(8, seed=5)
    import_documents(project=project, documents=notes[:3], annotated=True, evaluation=True)
    agreed, differ, decided = notes[3:6]
    for note, ana_spans, olga_spans in ((agreed, agreed.spans, agreed.spans), (differ, differ.spans, differ.spans[1:]),
                                        (decided, decided.spans, decided.spans[:-1])):
        record(project, note.name, note.text)  # one at a time: before a ranking, records go out at random
        annotate(project, people["ana"], ana_spans, name=note.name)
        waiting = annotate(project, people["olga"], olga_spans, name=note.name)
    adjudicate(document=waiting, user=_lead(project), choices=["ana"])

    version = train_and_rank(project=project)
    assert version is not None and version.n_documents == 2  # the agreed and the decided record, not the other
    assert set(version.gold_document_ids) == {agreed.name, decided.name}  # names of the records trained on

    export_corpus(project=project, fmt="jsonl", out=tmp_path / "gold.jsonl", include_evaluation=False)
    exported = {row["name"] if "name" in row else row.get("id"): row
                for row in map(json.loads, (tmp_path / "gold.jsonl").read_text().splitlines())}
    assert set(exported) == {agreed.name, decided.name}


def test_a_control_rate_sends_a_share_of_single_annotation_records_to_a_second_annotator(users, projects):
    from annotator.services.queue import drawn_for_control

    project = projects["A"]
    project.control_rate = 0.3
    project.save()
    olga = get_user_model().objects.create_user("olga", password="pw")
    set_membership(project=project, user=olga, role=Membership.Role.ANNOTATOR)
    for i in range(20):
        record(project, f"c{i:02d}")
    ana = users["annotator"]
    while (handout := next_record(project=project, user=ana)) is not None:
        submit(annotation_id=handout.annotation.pk, user=ana, version=1, spans=_wire([FULL]))
    documents = list(Document.objects.filter(project=project))
    controlled = {d.pk for d in documents if drawn_for_control(project=project, document=d)}
    assert 2 <= len(controlled) <= 12  # about 6 of 20
    assert {d.pk for d in documents if d.annotators_wanted == 2} == controlled
    assert {d.pk for d in documents if d.status == Document.Status.SUBMITTED} == {d.pk for d in documents} - controlled
    # a control record is gold once both have submitted (and it is adjudicated), not before
    assert set(gold_document_ids(project=project)) == {d.pk for d in documents} - controlled

    second = []
    while (handout := next_record(project=project, user=olga)) is not None:
        second.append(handout.annotation.document_id)
        spans = [FULL] if len(second) % 2 else [SHORT]  # agrees on every other record
        submit(annotation_id=handout.annotation.pk, user=olga, version=1, spans=_wire(spans))
    assert set(second) == controlled
    statuses = dict(Document.objects.filter(pk__in=controlled).values_list("pk", "status"))
    agreed = [pk for i, pk in enumerate(second) if i % 2 == 0]
    assert all(statuses[pk] == Document.Status.ADJUDICATED for pk in agreed)
    assert all(statuses[pk] == Document.Status.SUBMITTED for pk in set(second) - set(agreed))
    assert set(adjudication_queue(project=project, user=_lead(project)).values_list("pk", flat=True)) == \
        set(second) - set(agreed)


def test_each_annotators_quality_against_adjudicated_gold_is_on_the_people_page(team, client):
    from learning.selectors.people import annotator_quality

    project, people = team
    record(project, "q1")
    annotate(project, people["ana"], [FULL, CITY])
    annotate(project, people["olga"], [SHORT, CITY])  # disagree: adjudicated to ana's version
    record(project, "q2")
    annotate(project, people["ana"], [FULL])
    annotate(project, people["olga"], [FULL])  # agree: adjudicated automatically
    [waiting] = adjudication_queue(project=project, user=_lead(project))
    adjudicate(document=waiting, user=_lead(project), choices=["ana"])
    quality = annotator_quality(project=project)
    rows = {row["name"]: row for row in quality["annotators"]}
    assert rows["ana"]["records"] == rows["olga"]["records"] == 2
    assert (rows["ana"]["p"], rows["ana"]["r"], rows["ana"]["f1"]) == (1.0, 1.0, 1.0)
    # olga: gold FULL, CITY, FULL; she marked SHORT, CITY, FULL: 2 of 3 right either way
    assert rows["olga"]["p"] == pytest.approx(2 / 3) and rows["olga"]["r"] == pytest.approx(2 / 3)
    assert rows["olga"]["per_label"][NAME]["f1"] == pytest.approx(0.5) and rows["olga"]["per_label"][PLACE]["f1"] == 1
    assert [(w["annotator"], w["records"]) for w in quality["weeks"]] == [("ana", 2), ("olga", 2)]

    client.force_login(_lead(project))
    html = client.get(f"/projects/{project.pk}/people/").content.decode()
    assert 'data-annotator="olga"><td>olga</td><td class="num" data-col="records">2</td>' in html
    assert '<td class="num" data-col="f1">0.667</td>' in html
