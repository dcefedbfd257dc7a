"""The queue and the annotation writes against the real PostgreSQL: ranking order, SKIP LOCKED hand-outs
under concurrency, expiry, optimistic versions, idempotent submits and correction counts."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from annotator.models import Annotation, Assignment, Document, Membership, PoolScore, Ranking
from annotator.services.annotations import StaleAnnotation, save_draft, submit
from annotator.services.imports import import_documents
from annotator.services.projects import set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument
from learning.services.completion import complete_before_publishing, complete_first_records, completion_mark

NAME = "NOMBRE_SUJETO_ASISTENCIA"


def make_pool(project, n):
    import_documents(
        project=project, annotated=False,
        documents=[CorpusDocument(text=f"Paciente número {i}: Ana Ruiz, visto el día {i}.", name=f"doc{i:03d}")
                   for i in range(n)],
    )
    return list(project.documents.order_by("id"))


def rank(project, documents, *, spans=None):
    """A current ranking listing ``documents`` best first, each with ``spans`` as suggestions."""
    Ranking.objects.filter(project=project, is_current=True).update(is_current=False)
    ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    PoolScore.objects.bulk_create([
        PoolScore(ranking=ranking, document=document, score=100 - i, rank=i + 1,
                  pre_annotations={"spans": spans or [], "possible_missed": [[0, 8, 0.3]]})
        for i, document in enumerate(documents)
    ])
    return ranking


@pytest.mark.django_db
def test_next_record_follows_the_current_ranking_and_resumes_open_work(users, projects):
    project = projects["A"]
    documents = make_pool(project, 5)
    rank(project, [documents[3], documents[1], documents[4]],
         spans=[{"start": 19, "end": 27, "label": NAME, "confidence": 0.7}])
    first = next_record(project=project, user=users["annotator"])
    assert first.assignment.document == documents[3] and not first.resumed
    assert first.annotation.suggested == [{"start": 19, "end": 27, "label": NAME, "confidence": 0.7}]
    assert first.annotation.spans[0]["origin"] == "model" and first.annotation.spans[0]["status"] == "pending"
    assert first.annotation.possible_missed == [[0, 8, 0.3]]
    again = next_record(project=project, user=users["annotator"])
    assert again.resumed and again.annotation.pk == first.annotation.pk
    assert next_record(project=project, user=users["lead"]).assignment.document == documents[1]
    assert Document.objects.get(pk=documents[3].pk).status == "assigned"


@pytest.mark.django_db
def test_without_a_ranking_any_free_record_is_handed_out_and_the_pool_can_run_dry(users, projects):
    project = projects["A"]
    documents = make_pool(project, 2)
    got = {next_record(project=project, user=users["annotator"]).assignment.document_id,
           next_record(project=project, user=users["lead"]).assignment.document_id}
    assert got == {d.pk for d in documents}
    assert next_record(project=project, user=users["admin"]) is None


@pytest.mark.django_db(transaction=True)
def test_concurrent_annotators_never_get_the_same_record(projects):
    project = projects["A"]
    documents = make_pool(project, 12)
    rank(project, documents)
    User = get_user_model()
    people = [User.objects.create_user(f"a{i}", password="x") for i in range(8)]
    for person in people:
        set_membership(project=project, user=person, role=Membership.Role.ANNOTATOR)
    barrier, results, errors = threading.Barrier(len(people)), {}, []

    def ask(person):
        try:
            barrier.wait()
            handout = next_record(project=project, user=person)
            results[person.username] = handout.assignment.document_id
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 8 and len(set(results.values())) == 8
    # Under the ranking, the eight best records are the ones handed out.
    assert set(results.values()) == {d.pk for d in documents[:8]}


@pytest.mark.django_db
def test_double_annotation_hands_a_record_to_n_people(users, projects):
    project = projects["A"]
    project.annotators_per_document = 2
    project.save()
    documents = make_pool(project, 3)
    rank(project, documents)
    first = next_record(project=project, user=users["annotator"]).assignment.document_id
    second = next_record(project=project, user=users["lead"]).assignment.document_id
    third = next_record(project=project, user=users["admin"]).assignment.document_id
    assert first == second == documents[0].pk and third == documents[1].pk


@pytest.mark.django_db
def test_abandoned_assignments_return_to_the_pool(users, projects):
    project = projects["A"]
    documents = make_pool(project, 1)
    next_record(project=project, user=users["annotator"])
    assert next_record(project=project, user=users["lead"]) is None
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    handout = next_record(project=project, user=users["lead"])
    assert handout.assignment.document_id == documents[0].pk
    assert Assignment.objects.count() == 1
    assert not Annotation.objects.filter(annotator=users["annotator"]).exists()  # untouched draft released


@pytest.mark.django_db
def test_versions_refuse_stale_writes_and_submits_are_idempotent(users, projects):
    project = projects["A"]
    make_pool(project, 1)
    handout = next_record(project=project, user=users["annotator"])
    annotation = handout.annotation
    spans = [{"start": 19, "end": 27, "label": NAME, "origin": "human"}]
    saved = save_draft(annotation_id=annotation.pk, user=users["annotator"], version=1, spans=spans, active_seconds=12)
    assert saved.annotation.version == 2
    with pytest.raises(StaleAnnotation) as stale:  # a second tab still at version 1
        save_draft(annotation_id=annotation.pk, user=users["annotator"], version=1, spans=[], active_seconds=3)
    assert stale.value.current_version == 2
    done = submit(annotation_id=annotation.pk, user=users["annotator"], version=2, spans=spans, active_seconds=8)
    assert (done.annotation.version, done.annotation.state, done.corrections.fn_fixes) == (3, "submitted", 1)
    again = submit(annotation_id=annotation.pk, user=users["annotator"], version=2, spans=spans, active_seconds=8)
    assert again.repeated and again.annotation.version == 3
    with pytest.raises(StaleAnnotation):
        submit(annotation_id=annotation.pk, user=users["annotator"], version=2, spans=[], active_seconds=1)
    stored = Annotation.objects.get(pk=annotation.pk)
    assert stored.active_seconds == 20 and stored.spans[0]["label"] == NAME and stored.version == 3
    assert stored.document.status == "submitted"
    assert Assignment.objects.get().completed_at is not None


@pytest.mark.django_db
def test_api_next_draft_submit_with_corrections_and_conflicts(users, projects, api_as):
    project = projects["A"]
    documents = make_pool(project, 2)
    rank(project, documents, spans=[{"start": 19, "end": 27, "label": NAME, "confidence": 0.9},
                                    {"start": 0, "end": 8, "label": "PROFESION", "confidence": 0.4}])
    client = api_as(users["annotator"])
    payload = client.post(f"/api/projects/{project.pk}/next/").json()
    assert payload["document"]["id"] == documents[0].pk
    assert payload["token_runs"][:4] == [0, 8, 1, 6]  # "Paciente", then " " and "número" and len(payload["annotation"]["spans"]) == 2
    urls, version = payload["urls"], payload["annotation"]["version"]
    text = payload["document"]["text"]
    assert text[19:27] == "Ana Ruiz" and text[38:41] == "día"
    final = [{"start": 19, "end": 22, "label": NAME, "origin": "human"},   # "Ana" only: a boundary change
             {"start": 23, "end": 27, "label": NAME, "origin": "human"},   # "Ruiz": PHI added
             {"start": 38, "end": 41, "label": "FECHAS", "origin": "human"}]  # "día": added
    draft = client.put(urls["draft"], {"version": version, "spans": final, "active_seconds": 5}, format="json")
    assert draft.status_code == 200 and draft.json() == {"version": version + 1}
    stale = client.post(urls["submit"], {"version": version, "spans": final}, format="json")
    assert stale.status_code == 409 and stale.json()["current_version"] == version + 1
    done = client.post(urls["submit"], {"version": version + 1, "spans": final, "active_seconds": 7}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["corrections"] == {"fn_fixes": 2, "fp_fixes": 1, "relabels": 0, "boundary_changes": 1}
    stored = Annotation.objects.get(pk=payload["annotation"]["id"])
    assert [(s["start"], s["end"], s["origin"]) for s in stored.spans] == [(19, 22, "human"), (23, 27, "human"), (38, 41, "human")]
    assert (stored.fn_fixes, stored.fp_fixes, stored.boundary_changes, stored.active_seconds) == (2, 1, 1, 12)
    bad = client.put(urls["draft"], {"version": 9, "spans": [{"start": 0, "end": 999, "label": NAME}]}, format="json")
    assert bad.status_code in (400, 409)
    other = api_as(users["outsider"])
    assert other.get(f"/api/annotations/{stored.pk}/").status_code == 404
    assert other.post(urls["submit"], {"version": 4, "spans": []}, format="json").status_code == 404


@pytest.mark.django_db
def test_invalid_spans_are_refused_and_change_nothing(users, projects, api_as):
    project = projects["A"]
    make_pool(project, 1)
    client = api_as(users["annotator"])
    payload = client.post(f"/api/projects/{project.pk}/next/").json()
    url = payload["urls"]["draft"]
    for spans, words in [([{"start": 5, "end": 500, "label": NAME}], "outside the text"),
                         ([{"start": 0, "end": 3, "label": "NOT_A_LABEL"}], "NOT_A_LABEL"),
                         ([{"start": 0, "end": 8, "label": NAME}, {"start": 4, "end": 10, "label": NAME}], "overlap"),
                         ([{"start": "x", "end": 3, "label": NAME}], "integer")]:
        response = client.put(url, {"version": 1, "spans": spans}, format="json")
        assert response.status_code == 400, spans
        assert words in response.json()["detail"], response.json()
    assert Annotation.objects.get().version == 1


@pytest.mark.django_db
def test_ranked_records_come_first_then_the_unranked_oldest_first(users, projects):
    project = projects["A"]
    documents = make_pool(project, 4)
    rank(project, [documents[2], documents[0]])
    order = [next_record(project=project, user=user).assignment.document_id
             for user in (users["annotator"], users["lead"], users["admin"], users["outsider"])]
    assert order == [documents[2].pk, documents[0].pk, documents[1].pk, documents[3].pk]
    assert next_record(project=project, user=get_user_model().objects.create_user("late", password="x")) is None


@pytest.mark.django_db
def test_an_edited_draft_survives_expiry_and_its_author_resumes_it(users, projects):
    project = projects["A"]
    documents = make_pool(project, 2)
    rank(project, documents, spans=[{"start": 19, "end": 27, "label": NAME, "confidence": 0.7}])
    first = next_record(project=project, user=users["annotator"])
    edited = [{"start": 19, "end": 22, "label": NAME, "origin": "human"}]
    save_draft(annotation_id=first.annotation.pk, user=users["annotator"], version=1, spans=edited)
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    again = next_record(project=project, user=users["annotator"])
    assert again.assignment.document_id == documents[0].pk and not again.resumed
    assert again.annotation.pk == first.annotation.pk and again.annotation.version == 2
    assert [(s["start"], s["end"]) for s in again.annotation.spans] == [(19, 22)]
    assert Annotation.objects.filter(document=documents[0]).count() == 1


@pytest.mark.django_db
def test_eponyms_among_the_models_suggestions_are_not_shown_to_the_annotator(users, projects):
    project = projects["A"]
    text = "Juan Parkinson, con enfermedad de Parkinson y síndrome de Pardal, visto por la Dra. Pardal."
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text=text, name="eponyms")])
    document = project.documents.get()

    def at(word, nth=0):
        start = -1
        for _ in range(nth + 1):
            start = text.index(word, start + 1)
        return {"start": start, "end": start + len(word), "label": NAME, "confidence": 0.6}

    name, disease = at("Juan Parkinson"), at("Parkinson", 1)
    own_eponym, doctor = at("Pardal"), at("Pardal", 1)
    rank(project, [document], spans=[name, disease, own_eponym, doctor])
    first = next_record(project=project, user=users["annotator"])
    # the built-in guard: the disease goes, the man named Parkinson stays; "Pardal" is no eponym yet
    assert first.annotation.suggested == [name, own_eponym, doctor]
    assert [(s["start"], s["end"]) for s in first.annotation.spans] == [(0, 14), (58, 64), (84, 90)]

    # a project's own eponym counts from the moment it is saved: the next hand-out hides the syndrome only
    project.eponyms = ["Pardal"]
    project.save(update_fields=["eponyms"])
    Annotation.objects.all().delete()
    Assignment.objects.all().delete()
    Document.objects.filter(pk=document.pk).update(status=Document.Status.POOL)
    again = next_record(project=project, user=users["lead"])
    assert again.annotation.suggested == [name, doctor]


@pytest.mark.django_db
def test_the_suggestions_shown_are_completed_from_the_record_itself(users, projects):
    project = projects["A"]
    text = ("Paciente: Blanca Ramos Ibañez. Correo: blanca.ramos@correo.es. Fecha de ingreso: 03/05/2019.\n"
            "La Sra. Ramos acude a revisión; ramos de flores en la habitación.")
    import_documents(project=project, annotated=False, documents=[CorpusDocument(text=text, name="complete")])
    document = project.documents.get()
    name = {"start": 10, "end": 29, "label": NAME, "confidence": 0.9}
    Ranking.objects.filter(project=project, is_current=True).update(is_current=False)
    ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    missed_email = [text.index("blanca.ramos"), text.index("blanca.ramos") + 12, 0.3]
    PoolScore.objects.create(ranking=ranking, document=document, score=1.0, rank=1,
                             pre_annotations={"spans": [name], "possible_missed": [missed_email]})

    shown = next_record(project=project, user=users["annotator"]).annotation
    found = {(text[s["start"]:s["end"]], s["label"]): s["confidence"] for s in shown.suggested}
    # the model's name; its surname again where the record repeats it (capitalised only: not "ramos de flores");
    # the e-mail and the date a sure pattern finds, which the model left out
    assert found == {("Blanca Ramos Ibañez", NAME): 0.9, ("Ramos", NAME): 0.9,
                     ("blanca.ramos@correo.es", "CORREO_ELECTRONICO"): 1.0, ("03/05/2019", "FECHAS"): 1.0}
    assert shown.possible_missed == []  # the e-mail is a suggestion now, no longer a possible miss
    assert PoolScore.objects.get(pk=ranking.scores.get().pk).pre_annotations["spans"] == [name]  # stored as scored


@pytest.mark.django_db
def test_the_first_records_of_a_ranking_are_completed_ahead_and_handed_out_as_completed(users, projects):
    project = projects["A"]
    text = "Paciente: Blanca Ramos Ibañez. Correo: blanca.ramos@correo.es.\nLa Sra. Ramos acude a revisión."
    email = {"start": text.index("blanca.ramos"), "end": text.index(".es") + 3, "label": "CORREO_ELECTRONICO",
             "confidence": 1.0}
    name = {"start": 10, "end": 29, "label": NAME, "confidence": 0.9}
    import_documents(project=project, annotated=False,
                     documents=[CorpusDocument(text=f"{text} {i}", name=f"r{i}") for i in range(4)])
    documents = list(project.documents.order_by("id"))
    ranking = rank(project, documents, spans=[name])

    assert complete_first_records(project_id=project.pk, ranking_id=ranking.pk, count=3) == 3
    stored = {row.document_id: row.pre_annotations for row in ranking.scores.all()}
    mark = completion_mark(project)
    for document in documents[:3]:
        assert stored[document.pk]["completed"] == mark
        assert {(s["label"], text[s["start"]:s["end"]]) for s in stored[document.pk]["spans"]} == {
            (NAME, "Blanca Ramos Ibañez"), (NAME, "Ramos"), ("CORREO_ELECTRONICO", "blanca.ramos@correo.es")}
    assert "completed" not in stored[documents[3].pk]  # past the first three: completed when handed out
    assert complete_first_records(project_id=project.pk, ranking_id=ranking.pk, count=3) == 0  # marked already

    # A record with this project's mark is handed out as stored, not completed again (here: only the name,
    # as if the completion had found nothing more).
    PoolScore.objects.filter(ranking=ranking, document=documents[0]).update(
        pre_annotations={"spans": [name], "possible_missed": [], "completed": mark})
    assert next_record(project=project, user=users["annotator"]).annotation.suggested == [name]
    # One marked for other labels or another language (the project changed since) is completed at hand-out.
    PoolScore.objects.filter(ranking=ranking, document=documents[1]).update(
        pre_annotations={"spans": [name], "possible_missed": [], "completed": "another"})
    project.language = "en"
    project.save(update_fields=["language"])
    assert completion_mark(project) != mark
    PoolScore.objects.filter(ranking=ranking, document=documents[2]).update(
        pre_annotations={"spans": [name], "possible_missed": [], "completed": mark})
    for user, document in ((users["lead"], documents[1]), (users["admin"], documents[2])):
        handed = next_record(project=project, user=user).annotation
        assert handed.document_id == document.pk and email in handed.suggested


@pytest.mark.django_db
def test_completing_ahead_stops_once_a_retrain_of_the_project_is_waiting(users, projects, monkeypatch):
    from learning.models import RetrainJob
    from learning.services import completion

    project = projects["A"]
    import_documents(project=project, annotated=False,
                     documents=[CorpusDocument(text=f"Paciente: Blanca Ramos Ibañez {i}.", name=f"r{i}")
                                for i in range(5)])
    ranking = rank(project, list(project.documents.order_by("id")))
    monkeypatch.setattr(completion, "COMPLETED_CHUNK", 2)
    job = RetrainJob.objects.create(project=project, reason=RetrainJob.Reason.BATCH)  # queued

    # The first chunk is completed whatever waits; the next ones are left to the hand-outs.
    assert complete_first_records(project_id=project.pk, ranking_id=ranking.pk, count=5) == 2
    marked = [row.document_id for row in ranking.scores.order_by("rank") if "completed" in row.pre_annotations]
    assert marked == [row.document_id for row in ranking.scores.order_by("rank")][:2]
    # With no retrain waiting (the job ended), the rest are completed, chunk after chunk.
    RetrainJob.objects.filter(pk=job.pk).update(status=RetrainJob.Status.DONE)
    assert complete_first_records(project_id=project.pk, ranking_id=ranking.pk, count=5) == 3
    assert all("completed" in row.pre_annotations for row in ranking.scores.all())


@pytest.mark.django_db(transaction=True)
def test_the_first_records_of_a_staged_ranking_are_completed_in_the_transaction_that_publishes_it(
        users, projects, monkeypatch):
    project = projects["A"]
    text = "Paciente: Blanca Ramos Ibañez. Correo: blanca.ramos@correo.es."
    name = {"start": 10, "end": 29, "label": NAME, "confidence": 0.9}
    import_documents(project=project, annotated=False,
                     documents=[CorpusDocument(text=f"{text} {i}", name=f"r{i}") for i in range(4)])
    documents = list(project.documents.order_by("id"))
    staged = rank(project, documents, spans=[name])
    Ranking.objects.filter(pk=staged.pk).update(is_current=False)
    order = [documents[2].pk, documents[0].pk, documents[3].pk, documents[1].pk]  # first served first
    mark = completion_mark(project)

    with transaction.atomic():
        assert complete_before_publishing(project=project, ranking_id=staged.pk, order=order, count=2) == 2
        # A failure of the completion is undone to its savepoint: the publishing transaction goes on.
        monkeypatch.setattr("learning.services.completion.complete_suggestions",
                            lambda *args, **kwargs: 1 / 0)
        assert complete_before_publishing(project=project, ranking_id=staged.pk, order=order[2:], count=2) == 0
        assert Document.objects.count() == 4
    stored = dict(PoolScore.objects.filter(ranking=staged).values_list("document_id", "pre_annotations"))
    assert [stored[document_id].get("completed") == mark for document_id in order] == [True, True, False, False]
    assert {text[s["start"]:s["end"]] for s in stored[documents[2].pk]["spans"]} == {
        "Blanca Ramos Ibañez", "blanca.ramos@correo.es"}
