"""How many SQL statements each hot request of the workbench, the project page and the API runs.

Each budget is what the request takes now; a change that adds a statement per request (a repeated lookup of the
session, the user or the membership) or per row (an N+1 over documents, annotations or members) fails here. The
clients log in with a real session, as browsers and the workbench do, so the session's lookup is counted too (one
statement, which reads the user with the session: config/sessions.py). Where a page lists rows, it is asked twice,
with more rows the second time, and must run the same number of statements. (Inside the test's transaction each
atomic block, and the session's save, adds a SAVEPOINT and its RELEASE to the count.) A session is written again
only once a minute (config/sessions.py), so a request's count holds no session save.
"""
from __future__ import annotations

import pytest
from django.test import Client

from annotator.models import Annotation, Document, Membership, PoolScore, Ranking
from annotator.services.annotations import submit
from annotator.services.imports import import_documents
from annotator.services.projects import set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument
from learning.models import RetrainJob
from corpus.types import Span

NAME = "NOMBRE_SUJETO_ASISTENCIA"
TEXT = "Paciente número {i}: Ana Ruiz, visto el día {i} en Madrid por el doctor Luis Gil."

# Statements per request (see the module's docstring).
NEXT = 12
NEXT_RESUMED = 9
DRAFT = 9
SUBMIT = 12
SUBMISSION_ANNOUNCED = 3
DOCUMENT = 4
ANNOTATIONS = 3
EXPORT = 4
WORKBENCH_PAGE = 5
PROJECT_PAGE = 15


def _add_records(project, n: int, *, start: int = 0) -> list[Document]:
    """``n`` pool records, each with the name "Ana Ruiz" as its one gold span, ranked best first."""
    documents = []
    for i in range(start, start + n):
        text = TEXT.format(i=i)
        begin = text.index("Ana Ruiz")
        documents.append(CorpusDocument(text=text, name=f"doc{i:03d}",
                                        spans=[Span(begin, begin + len("Ana Ruiz"), NAME)]))
    import_documents(project=project, documents=documents, annotated=False)
    added = list(project.documents.order_by("-id")[:n])[::-1]
    ranking = Ranking.objects.filter(project=project, is_current=True).first()
    if ranking is None:
        ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    first_rank = PoolScore.objects.filter(ranking=ranking).count() + 1
    PoolScore.objects.bulk_create([
        PoolScore(ranking=ranking, document=document, score=100.0 - i, rank=first_rank + i, pre_annotations={
            "spans": [{"start": document.text.index("Ana Ruiz"), "end": document.text.index("Ana Ruiz") + 8,
                       "label": NAME, "confidence": 0.7}],
            "possible_missed": [[0, 8, 0.3]],
        })
        for i, document in enumerate(added)
    ])
    return added


def _annotate(project, annotators, n: int) -> None:
    """Each annotator takes and submits ``n`` records (with the suggested span)."""
    for user in annotators:
        for _ in range(n):
            handout = next_record(project=project, user=user)
            annotation = handout.annotation
            submit(annotation_id=annotation.pk, user=user, version=annotation.version,
                   spans=[{k: s[k] for k in ("start", "end", "label")} for s in annotation.suggested])


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def project(projects, users):
    project = projects["A"]
    set_membership(project=project, user=users["admin"], role=Membership.Role.ADMIN)
    _add_records(project, 12)
    return project


@pytest.fixture
def annotator(project, users):
    return _logged_in(users["annotator"])


@pytest.fixture
def lead(project, users):
    return _logged_in(users["lead"])


def _next(client, project):
    return client.post(f"/api/projects/{project.pk}/next/")


@pytest.mark.django_db
def test_next_record(annotator, project, django_assert_max_num_queries):
    with django_assert_max_num_queries(NEXT):
        handed = _next(annotator, project)
    assert handed.status_code == 200, handed.content
    assert handed.json()["document"]["external_id"] == "doc000"
    assert handed.json()["annotation"]["spans"][0]["label"] == NAME
    with django_assert_max_num_queries(NEXT_RESUMED):
        resumed = _next(annotator, project)
    assert resumed.json()["annotation"]["id"] == handed.json()["annotation"]["id"]
    assert resumed.json()["token_runs"] == handed.json()["token_runs"]


@pytest.mark.django_db
def test_draft_save_and_submit(annotator, project, django_assert_max_num_queries):
    payload = _next(annotator, project).json()
    spans = [{k: s[k] for k in ("start", "end", "label")} for s in payload["annotation"]["spans"]]
    urls, version = payload["urls"], payload["annotation"]["version"]
    with django_assert_max_num_queries(DRAFT):
        saved = annotator.put(urls["draft"], {"version": version, "spans": spans, "active_seconds": 3},
                              content_type="application/json")
    assert saved.status_code == 200, saved.content
    assert saved.json() == {"version": version + 1}
    with django_assert_max_num_queries(SUBMIT):
        submitted = annotator.post(urls["submit"], {"version": version + 1, "spans": spans, "active_seconds": 2},
                                   content_type="application/json")
    assert submitted.status_code == 200, submitted.content
    assert submitted.json()["state"] == Annotation.State.SUBMITTED
    assert Document.objects.get(pk=payload["document"]["id"]).status == Document.Status.SUBMITTED


@pytest.mark.django_db
def test_a_submission_that_leaves_the_batch_incomplete_asks_for_no_lock(annotator, project,
                                                                        django_assert_max_num_queries,
                                                                        django_capture_on_commit_callbacks):
    """After the submission commits, asking whether it completes a batch (the project's batch size is 10) takes
    three reads: no transaction, no lock, no job."""
    payload = _next(annotator, project).json()
    spans = [{k: s[k] for k in ("start", "end", "label")} for s in payload["annotation"]["spans"]]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submitted = annotator.post(payload["urls"]["submit"], {"version": payload["annotation"]["version"],
                                                               "spans": spans}, content_type="application/json")
    assert submitted.status_code == 200, submitted.content
    with django_assert_max_num_queries(SUBMISSION_ANNOUNCED) as captured:
        for callback in callbacks:
            callback()
    assert not any("lock" in query["sql"].lower() or query["sql"].startswith("INSERT")
                   for query in captured.captured_queries)
    assert not RetrainJob.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_document_fetch(lead, project, django_assert_max_num_queries):
    document = project.documents.order_by("id").first()
    with django_assert_max_num_queries(DOCUMENT):
        fetched = lead.get(f"/api/projects/{project.pk}/documents/{document.pk}/")
    assert fetched.status_code == 200, fetched.content
    assert fetched.json()["text"] == document.text


@pytest.mark.django_db
def test_annotations_list_does_not_grow_with_the_annotations(lead, project, users, django_assert_max_num_queries):
    for count, more in ((2, 0), (6, 2)):
        _annotate(project, [users["annotator"], users["admin"]], more or 1)
        with django_assert_max_num_queries(ANNOTATIONS):
            listed = lead.get(f"/api/projects/{project.pk}/annotations/")
        assert listed.status_code == 200, listed.content
        assert listed.json()["count"] == count


@pytest.mark.django_db
def test_a_page_that_ends_the_list_is_not_counted_again(lead, project, users, django_assert_num_queries):
    _annotate(project, [users["annotator"], users["admin"]], 3)
    url = f"/api/projects/{project.pk}/annotations/"
    every = [row["id"] for row in lead.get(url).json()["results"]]
    assert len(every) == 6
    # (limit, offset): the rows, and whether the list had to be counted (a page short of the limit ends it,
    # unless it is empty past the first page).
    for limit, offset, rows, counted in ((4, 0, every[:4], True), (4, 4, every[4:], False), (4, 8, [], True),
                                         (6, 0, every, True), (7, 0, every, False), (100, 0, every, False)):
        with django_assert_num_queries(ANNOTATIONS + counted):
            page = lead.get(url, {"limit": limit, "offset": offset}).json()
        assert [row["id"] for row in page["results"]] == rows and page["count"] == 6
        assert (page["next"] is not None) == (offset + limit < 6)
        assert (page["previous"] is not None) == (offset > 0)


@pytest.mark.django_db
def test_export_does_not_grow_with_the_records(lead, project, users, django_assert_max_num_queries):
    for count, more in ((2, 0), (6, 2)):
        _annotate(project, [users["annotator"], users["admin"]], more or 1)
        with django_assert_max_num_queries(EXPORT):
            exported = lead.get(f"/api/projects/{project.pk}/export/", {"format": "jsonl"})
        assert exported.status_code == 200, exported.content
        assert len(exported.content.decode().splitlines()) == count


@pytest.mark.django_db
def test_workbench_page(annotator, project, django_assert_max_num_queries):
    document_id = _next(annotator, project).json()["document"]["id"]
    with django_assert_max_num_queries(WORKBENCH_PAGE):
        page = annotator.get(f"/projects/{project.pk}/annotate/{document_id}/")
    assert page.status_code == 200
    assert b"Ana Ruiz" in page.content


@pytest.mark.django_db
def test_project_page_does_not_grow_with_the_records_or_the_people(lead, project, users,
                                                                   django_assert_max_num_queries):
    _annotate(project, [users["annotator"]], 2)
    with django_assert_max_num_queries(PROJECT_PAGE):
        page = lead.get(f"/projects/{project.pk}/")
    assert page.status_code == 200
    assert b"doc000" in page.content
    more = [type(users["lead"]).objects.create_user(f"extra{i}", password="pw-extra") for i in range(3)]
    for user in more:
        set_membership(project=project, user=user, role=Membership.Role.ANNOTATOR)
    _add_records(project, 5, start=100)
    _annotate(project, [users["admin"], *more], 1)
    with django_assert_max_num_queries(PROJECT_PAGE):
        page = lead.get(f"/projects/{project.pk}/")
    assert page.status_code == 200
    assert b"extra2" in page.content



@pytest.mark.django_db
def test_a_request_remembers_a_role_until_a_membership_changes(project, users, django_assert_max_num_queries):
    """Within one request a member's role is read once; a membership changed during the request is read again."""
    from django.http import HttpResponse
    from django.test import RequestFactory

    from annotator.middleware import CurrentRequestMiddleware
    from annotator.permissions import Can, allows, role_in

    lead, seen = users["lead"], []

    def view(request):
        with django_assert_max_num_queries(1):
            seen.append([allows(user=lead, project=project, action=action) for action in Can])
        set_membership(project=project, user=lead, role=Membership.Role.ANNOTATOR)
        seen.append(role_in(user=lead, project=project))
        return HttpResponse()

    CurrentRequestMiddleware(view)(RequestFactory().get("/"))
    assert seen == [[True] * len(Can), Membership.Role.ANNOTATOR]
    assert role_in(user=lead, project=project) == Membership.Role.ANNOTATOR  # outside a request: the database
