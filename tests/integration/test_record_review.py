"""The record list (search, filters, sort, token counts, agreement), a record's review and history, sending a
record back for correction and a lead's fix — against the real PostgreSQL, through the real services."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator.models import (
    Annotation, AnnotationRevision, Assignment, AuditEvent, Document, Membership, PoolScore, Ranking,
)
from annotator.record_selectors import RecordFilters, open_correction, record_list, record_review, record_rows
from annotator.selectors import gold_document_ids, gold_documents
from annotator.services.annotations import StaleAnnotation, save_draft, submit
from annotator.services.imports import import_documents
from annotator.services.projects import set_membership
from annotator.services.queue import NotAssigned, next_record
from annotator.services.review import ReviewError, count_tokens, fix_record, send_back
from corpus.text import tokenize
from corpus.types import Document as CorpusDocument
from corpus.types import Span

pytestmark = pytest.mark.django_db
NAME, DATE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS"
TEXTS = {
    "alpha": "Paciente Ana Ruiz, vista el 3 de mayo en consulta.",
    "beta": "Varón de 54 años remitido por dolor torácico; refiere tos.",
    "gamma": "Mujer de 30 años, Lucía Gómez, sin antecedentes de interés, alta el 12/04/2019.",
}


@pytest.fixture
def bea(projects):
    user = get_user_model().objects.create_user("bea", password="pw-bea")
    set_membership(project=projects["A"], user=user, role=Membership.Role.ANNOTATOR)
    return user


@pytest.fixture
def pool(projects):
    """alpha, beta and gamma in the pool, handed out in that order."""
    project = projects["A"]
    import_documents(project=project, annotated=False,
                     documents=[CorpusDocument(text=text, name=name) for name, text in TEXTS.items()])
    documents = {d.external_id: d for d in project.documents.all()}
    ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    PoolScore.objects.bulk_create([PoolScore(ranking=ranking, document=documents[name], score=1.0 / rank,
                                             rank=rank) for rank, name in enumerate(TEXTS, start=1)])
    return documents


def span(text: str, fragment: str, label: str) -> dict:
    start = text.index(fragment)
    return {"start": start, "end": start + len(fragment), "label": label}


def annotate(project, user, spans_for) -> Annotation:
    """Hand the user their next record and submit ``spans_for(text)`` on it."""
    handout = next_record(project=project, user=user)
    annotation = handout.annotation
    result = submit(annotation_id=annotation.pk, user=user, version=annotation.version,
                    spans=spans_for(annotation.document.text), active_seconds=20)
    return result.annotation


def names(documents) -> list[str]:
    return [document.external_id for document in documents]


# --- the list -------------------------------------------------------------------------------------------------


def test_search_filters_and_sorts_the_records_the_lead_sees(users, projects, pool, bea):
    project, lead = projects["A"], users["lead"]
    alpha, beta = pool["alpha"], pool["beta"]
    # ana submits alpha with a name, bea holds beta as a draft
    assert annotate(project, users["annotator"], lambda text: [span(text, "Ana Ruiz", NAME)]).document == alpha
    assert next_record(project=project, user=bea).annotation.document == beta

    def listed(**filters):
        return names(record_list(user=lead, project=project, filters=RecordFilters(**filters)))

    assert listed() == ["alpha", "beta", "gamma"]
    assert listed(q=f"#{beta.pk}") == ["beta"]
    assert listed(q="2019") == ["gamma"]  # a number in the text
    assert listed(q="lucía") == ["gamma"]  # part of the text, any case
    assert listed(q="alp") == ["alpha"]  # part of the name
    assert listed(status="submitted") == ["alpha"]
    assert listed(annotator="bea") == ["beta"]
    assert listed(annotator="ana") == ["alpha"]
    assert listed(label=NAME) == ["alpha"]
    assert listed(label=DATE) == []
    assert listed(sort="-name") == ["gamma", "beta", "alpha"]
    assert listed(sort="-submitted")[0] == "alpha"
    assert listed(role="evaluation") == []

    count_tokens(document_ids=[d.pk for d in pool.values()])
    assert listed(sort="-tokens") == ["gamma", "beta", "alpha"]
    rows = record_rows(user=lead, project=project, documents=list(record_list(
        user=lead, project=project, filters=RecordFilters())))
    assert [row["annotators"] for row in rows] == [
        [{"username": "ana", "state": "submitted"}], [{"username": "bea", "state": "draft"}], []]


def test_token_counts_are_the_workbench_tokenizer_s_and_are_stored_once(projects, pool):
    ids = [d.pk for d in pool.values()]
    assert Document.objects.filter(pk__in=ids, n_tokens__isnull=True).count() == 3
    counts = count_tokens(document_ids=ids)
    assert counts == {d.pk: len(tokenize(d.text)) for d in pool.values()}
    stored = dict(Document.objects.filter(pk__in=ids).values_list("pk", "n_tokens"))
    assert stored == counts
    # a stored count is read, not computed again
    Document.objects.filter(pk=pool["alpha"].pk).update(n_tokens=999)
    assert count_tokens(document_ids=ids)[pool["alpha"].pk] == 999


def test_the_project_page_lists_real_token_counts_and_filters(users, projects, pool):
    client = Client()
    client.force_login(users["lead"])
    url = reverse("annotator:project-detail", args=[projects["A"].pk])
    page = client.get(url, {"sort": "-tokens"}).content.decode()
    assert "None" not in page.split('id="record-table"')[1]
    assert f'<td class="num">{len(tokenize(TEXTS["gamma"]))}</td>' in page
    partial = client.get(url, {"q": "torácico"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and ">beta</a>" in partial and ">alpha</a>" not in partial
    bad = client.get(url, {"status": "lost"}).content.decode()
    assert 'id="record-filter-errors"' in bad and ">alpha</a>" in bad  # the wrong filter is named, not applied


def test_sorting_by_tokens_counts_a_large_pool_a_batch_per_request(users, projects, pool, monkeypatch):
    from annotator.views import records

    monkeypatch.setattr(records, "TOKENS_COUNTED_PER_REQUEST", 1)
    monkeypatch.setattr(records, "PAGE_SIZE", 1)
    client = Client()
    client.force_login(users["lead"])
    url = reverse("annotator:project-detail", args=[projects["A"].pk])
    first = client.get(url, {"sort": "-tokens"}).content.decode()
    assert "2 records are not counted yet" in first and ">alpha</a>" in first  # the one counted comes first
    assert Document.objects.filter(n_tokens__isnull=True).count() == 2
    client.get(url, {"sort": "-tokens"})
    last = client.get(url, {"sort": "-tokens"}).content.decode()
    assert 'id="records-uncounted"' not in last and ">gamma</a>" in last  # all counted: the longest first
    assert Document.objects.filter(n_tokens__isnull=True).count() == 0


def test_an_annotator_lists_only_their_own_records_and_names(users, projects, pool, bea):
    project = projects["A"]
    annotate(project, users["annotator"], lambda text: [])
    annotate(project, bea, lambda text: [])
    mine = record_list(user=users["annotator"], project=project, filters=RecordFilters(annotator="bea"))
    assert names(mine) == ["alpha"]  # the annotator filter is not theirs to use; the role rule still holds
    rows = record_rows(user=users["annotator"], project=project, documents=list(mine))
    assert rows[0]["annotators"] == [{"username": "ana", "state": "submitted"}] and rows[0]["agreement"] is None
    client = Client()
    client.force_login(users["annotator"])
    page = client.get(reverse("annotator:project-detail", args=[project.pk])).content.decode()
    assert ">alpha</a>" in page and ">beta</a>" not in page and "bea" not in page


def test_agreement_is_shown_for_records_two_people_submitted(users, projects, pool, bea):
    project = projects["A"]
    project.annotators_per_document = 2
    project.save()
    annotate(project, users["annotator"], lambda text: [span(text, "Ana Ruiz", NAME)] if "Ana" in text else [])
    annotate(project, bea, lambda text: [span(text, "Ruiz", NAME)] if "Ana" in text else [])
    documents = list(record_list(user=users["lead"], project=project, filters=RecordFilters()))
    rows = {row["document"].external_id: row for row in record_rows(user=users["lead"], project=project,
                                                                     documents=documents)}
    assert rows["alpha"]["agreement"]["strict_f1"] == 0.0  # the two spans differ: nothing matches exactly
    assert rows["alpha"]["agreement"]["relaxed_f1"] == 1.0
    assert rows["beta"]["agreement"] is None


# --- send back, resubmit, fix ---------------------------------------------------------------------------------


def test_a_record_sent_back_is_the_annotator_s_next_with_the_note_and_gold_again_on_resubmission(
        users, projects, pool):
    project, ana, lead = projects["A"], users["annotator"], users["lead"]
    first = annotate(project, ana, lambda text: [span(text, "Ana", NAME)])
    alpha = first.document
    assert alpha.pk in gold_document_ids(project=project)

    draft = send_back(document=alpha, by=lead, to=ana, note="The name is Ana Ruiz, whole.")
    assert draft.pk == first.pk and draft.state == Annotation.State.DRAFT and draft.version == first.version + 1
    assert Document.objects.get(pk=alpha.pk).status == Document.Status.ASSIGNED
    assert alpha.pk not in gold_document_ids(project=project)  # not gold while it is being corrected
    with pytest.raises(StaleAnnotation):  # a tab still showing the submission cannot write over it
        save_draft(annotation_id=first.pk, user=ana, version=first.version, spans=[])

    handout = next_record(project=project, user=ana)
    assert handout.resumed and handout.annotation.pk == first.pk  # next in their queue
    assert open_correction(annotation=handout.annotation)["note"] == "The name is Ana Ruiz, whole."
    saved = save_draft(annotation_id=first.pk, user=ana, version=draft.version, spans=first.spans).annotation
    assignment = Assignment.objects.get(document=alpha, annotator=ana)
    assert assignment.expires_at > timezone.now() + timedelta(days=1)  # a save does not cut the wait short

    submit(annotation_id=first.pk, user=ana, version=saved.version, spans=[span(alpha.text, "Ana Ruiz", NAME)])
    assert Document.objects.get(pk=alpha.pk).status == Document.Status.SUBMITTED
    gold = {d.name: d.spans for d in gold_documents(project=project)}
    assert gold["alpha"] == (Span(9, 17, NAME),)
    assert open_correction(annotation=Annotation.objects.get(pk=first.pk)) is None
    assert list(AnnotationRevision.objects.filter(document=alpha).values_list("kind", "username")) == [
        ("submitted", "ana"), ("sent_back", "lea"), ("submitted", "ana")]
    event = AuditEvent.objects.get(object_type="Annotation", object_id=str(first.pk), detail__sent_back=True)
    assert event.username == "lea" and event.detail["to"] == "ana" and event.detail["note"].startswith("The name")

    review = record_review(document=Document.objects.get(pk=alpha.pk))
    newest = review["history"][0]
    assert newest["revision"].kind == "submitted" and [c["kind"] for c in newest["changes"]] == ["removed", "added"]
    assert review["gold"] == [{"text": "Ana Ruiz", "label": NAME, "start": 9, "end": 17}]


def test_a_record_sent_to_another_member_is_gold_once_they_submit_and_the_first_cannot_resubmit(
        users, projects, pool, bea):
    project, ana, lead = projects["A"], users["annotator"], users["lead"]
    first = annotate(project, ana, lambda text: [span(text, "Ana", NAME)])
    alpha = first.document
    draft = send_back(document=alpha, by=lead, to=bea, note="Please check the name.")
    assert draft.annotator == bea and draft.spans == Annotation.objects.get(pk=first.pk).spans
    assert Annotation.objects.get(pk=first.pk).state == Annotation.State.DRAFT  # kept, no longer a submission
    with pytest.raises(NotAssigned):
        stale = Annotation.objects.get(pk=first.pk)
        submit(annotation_id=first.pk, user=ana, version=stale.version, spans=[])
    assert next_record(project=project, user=bea).annotation.pk == draft.pk
    submit(annotation_id=draft.pk, user=bea, version=draft.version, spans=[span(alpha.text, "Ana Ruiz", NAME)])
    assert Annotation.objects.filter(document=alpha, state=Annotation.State.SUBMITTED).count() == 1
    assert {d.name: d.spans for d in gold_documents(project=project)}["alpha"] == (Span(9, 17, NAME),)


def test_send_back_refusals_change_nothing(users, projects, pool):
    project, ana, lead = projects["A"], users["annotator"], users["lead"]
    submitted = annotate(project, ana, lambda text: [])
    handout = next_record(project=project, user=ana)  # beta: a draft, not submitted
    with pytest.raises(ReviewError) as empty:
        send_back(document=submitted.document, by=lead, to=ana, note="   ")
    assert empty.value.field == "note"
    with pytest.raises(ReviewError, match="Only a submitted record"):
        send_back(document=handout.annotation.document, by=lead, to=ana, note="check")
    with pytest.raises(ReviewError) as outsider:
        send_back(document=submitted.document, by=lead, to=users["outsider"], note="check")
    assert outsider.value.field == "to"
    import_documents(project=project, annotated=True, documents=[
        CorpusDocument(text="Gold importado de Pedro.", name="imported", spans=(Span(17, 22, NAME),))])
    with pytest.raises(ReviewError, match="imported"):
        send_back(document=project.documents.get(external_id="imported"), by=lead, to=ana, note="check")
    assert Annotation.objects.get(pk=submitted.pk).state == Annotation.State.SUBMITTED
    assert not AnnotationRevision.objects.filter(kind="sent_back").exists()


def test_a_lead_fixes_a_record_s_gold_directly_audited(users, projects, pool):
    project, ana, lead = projects["A"], users["annotator"], users["lead"]
    first = annotate(project, ana, lambda text: [span(text, "Ana", NAME)])
    alpha = first.document
    with pytest.raises(ReviewError):
        fix_record(document=alpha, by=lead, spans=[{"start": 0, "end": 999, "label": NAME}])
    assert Annotation.objects.get(pk=first.pk).version == first.version  # refused: nothing written
    fixed = fix_record(document=alpha, by=lead, spans=[span(alpha.text, "Ana Ruiz", NAME),
                                                       span(alpha.text, "3 de mayo", DATE)], note="whole name")
    assert fixed.pk == first.pk and fixed.version == first.version + 1
    assert {d.name: d.spans for d in gold_documents(project=project)}["alpha"] == (
        Span(9, 17, NAME), Span(28, 37, DATE))
    revision = AnnotationRevision.objects.get(kind="fixed")
    assert revision.username == "lea" and revision.note == "whole name"
    event = AuditEvent.objects.get(detail__fixed=True)
    assert event.username == "lea" and event.detail["added"] == 2 and event.detail["removed"] == 1
    assert fix_record(document=alpha, by=lead, spans=[span(alpha.text, "Ana Ruiz", NAME),
                                                      span(alpha.text, "3 de mayo", DATE)]) is None


# --- the pages and the role rule --------------------------------------------------------------------------------


def test_review_pages_follow_the_role_rule(users, projects, pool):
    project, ana = projects["A"], users["annotator"]
    first = annotate(project, ana, lambda text: [span(text, "Ana", NAME)])
    review = reverse("annotator:record-review", args=[project.pk, first.document_id])
    send = reverse("annotator:record-send-back", args=[project.pk, first.document_id])
    fix = reverse("annotator:record-fix", args=[project.pk, first.document_id])
    clients = {}
    for role in ("annotator", "outsider", "lead"):
        clients[role] = Client()
        clients[role].force_login(users[role])
    assert clients["annotator"].get(review).status_code == 403
    assert clients["annotator"].post(send, {"to": "ana", "note": "x"}).status_code == 403
    assert clients["annotator"].get(fix).status_code == 403
    assert clients["outsider"].get(review).status_code == 404
    assert clients["outsider"].post(send, {"to": "ana", "note": "x"}).status_code == 404
    assert Annotation.objects.get(pk=first.pk).state == Annotation.State.SUBMITTED

    page = clients["lead"].get(review).content.decode()
    assert 'id="send-back-form"' in page and "Ana" in page and 'data-kind="submitted"' in page
    refused = clients["lead"].post(send, {"to": "ana", "note": ""})
    assert refused.status_code == 400 and 'data-error-for="note"' in refused.content.decode()
    assert Annotation.objects.get(pk=first.pk).state == Annotation.State.SUBMITTED
    done = clients["lead"].post(send, {"to": "ana", "note": "Whole name, please."})
    assert done.status_code == 302 and Annotation.objects.get(pk=first.pk).state == Annotation.State.DRAFT
    reopened = clients["lead"].get(review).content.decode()
    assert 'class="notice review-correction"' in reopened and "Whole name, please." in reopened
    assert 'id="send-back-form"' not in reopened  # not submitted now: nothing to send back

    workbench = Client()
    workbench.force_login(ana)
    shown = workbench.get(reverse("annotator:annotate", args=[project.pk, first.document_id])).content.decode()
    assert 'id="wb-correction"' in shown and "Whole name, please." in shown


def test_the_fix_page_saves_edited_spans_and_names_a_wrong_field(users, projects, pool):
    project = projects["A"]
    first = annotate(project, users["annotator"], lambda text: [span(text, "Ana", NAME)])
    alpha = first.document
    client = Client()
    client.force_login(users["lead"])
    url = reverse("annotator:record-fix", args=[project.pk, alpha.pk])
    assert 'name="span-0-start"' in client.get(url).content.decode()
    form = {"span-TOTAL_FORMS": "2", "span-INITIAL_FORMS": "1", "span-MIN_NUM_FORMS": "0",
            "span-MAX_NUM_FORMS": "1000", "span-0-start": "9", "span-0-end": "17", "span-0-label": NAME,
            "span-1-start": "28", "span-1-end": "20", "span-1-label": DATE, "note": ""}
    wrong = client.post(url, form)
    assert wrong.status_code == 400 and "must end after it starts" in wrong.content.decode()
    assert Annotation.objects.get(pk=first.pk).version == first.version
    saved = client.post(url, {**form, "span-1-end": "37"})
    assert saved.status_code == 302
    assert {d.name: d.spans for d in gold_documents(project=project)}["alpha"] == (
        Span(9, 17, NAME), Span(28, 37, DATE))
