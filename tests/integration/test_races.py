"""Races on the real PostgreSQL: two requests at the same moment, each in its own thread and connection,
released together behind a barrier, a hundred rounds each. After every round the stored outcome must be one
that some order of the two requests could have produced: one gold annotation per record and annotator,
no edited draft deleted, the record's status right, no record handed to a third person, no lost request.

Each test ends with the rounds that broke an invariant, so a failure says how often the race was lost.
"""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone

from annotator.models import Annotation, Assignment, Document, Membership, PoolScore, Project, Ranking
from annotator.services.annotations import save_draft, submit
from annotator.services.imports import import_documents
from annotator.services.projects import ProjectError, create_project, set_membership
from annotator.services.queue import NotAssigned, next_record, release_expired_assignments
from annotator.services.ranking import stage_ranking
from corpus.types import Document as CorpusDocument
from learning.models import RetrainJob
from learning.services import jobs, retrain

ROUNDS = 100
NAME = "NOMBRE_SUJETO_ASISTENCIA"
EDITED = [{"start": 19, "end": 22, "label": NAME, "origin": "human"}]  # "Ana" in every test text
HANDED_ON = "your assignment expired and the record was handed to another annotator"


def race(*, prepare, contenders, check, rounds: int = ROUNDS) -> list[str]:
    """Run ``contenders`` at the same moment, ``rounds`` times; the rounds whose outcome ``check`` refused.

    Each contender is a function of the round's scene (what ``prepare(round)`` returned) and runs in a
    thread of its own, with its own database connection, for every round. ``check(scene, outcomes)`` sees
    each contender's return value or the exception it raised, and returns a description of what is wrong
    (or None).
    """
    start = threading.Barrier(len(contenders) + 1, timeout=60)
    finish = threading.Barrier(len(contenders) + 1, timeout=60)
    scene: dict = {}
    outcomes: list = [None] * len(contenders)

    def contend(index, contender):
        try:
            for _ in range(rounds):
                start.wait()
                try:
                    outcomes[index] = contender(scene)
                except Exception as error:  # noqa: BLE001 - an outcome like any other, judged by check
                    outcomes[index] = error
                finish.wait()
        except threading.BrokenBarrierError:
            pass  # the test failed in this thread; it reports why
        finally:
            connections.close_all()

    threads = [threading.Thread(target=contend, args=item, daemon=True) for item in enumerate(contenders)]
    for thread in threads:
        thread.start()
    broken = []
    try:
        for round_ in range(rounds):
            scene.clear()
            scene.update(prepare(round_))
            start.wait()
            finish.wait()
            problem = check(scene, list(outcomes))
            if problem:
                broken.append(f"round {round_}: {problem}")
    finally:
        start.abort()
        finish.abort()
        for thread in threads:
            thread.join(timeout=60)
    return broken


def summary(broken: list[str]) -> str:
    return f"{len(broken)} of {ROUNDS} rounds broke it: " + "; ".join(broken[:3])


def make_pool(project: Project, n: int) -> list[Document]:
    import_documents(
        project=project, annotated=False,
        documents=[CorpusDocument(text=f"Paciente número {i}: Ana Ruiz, visto el día {i}.", name=f"doc{i:03d}")
                   for i in range(n)],
    )
    return list(project.documents.order_by("id"))


def rank(project: Project, documents: list[Document]) -> None:
    """A current ranking serving ``documents`` in this order."""
    ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    PoolScore.objects.bulk_create([PoolScore(ranking=ranking, document=document, score=-i, rank=i + 1)
                                   for i, document in enumerate(documents)])


def annotators(project: Project, *names: str) -> list:
    User = get_user_model()
    people = [User.objects.create_user(name, password="x") for name in names]
    for person in people:
        set_membership(project=project, user=person, role=Membership.Role.ANNOTATOR)
    return people


def start_afresh(project: Project) -> None:
    """Every record back in the pool, nobody's work on it left."""
    Annotation.objects.filter(document__project=project).delete()
    Assignment.objects.filter(document__project=project).delete()
    Document.objects.filter(project=project).update(status=Document.Status.POOL)


def handed_out(document: Document, *people, expired: bool = False, edited: bool = False) -> list[int]:
    """``document`` handed to ``people`` (their assignments and drafts), as ``next_record`` leaves it, written
    directly: the scene of each round is set in a few statements (this machine is slow and shared)."""
    start_afresh(document.project)
    expires_at = timezone.now() + timedelta(minutes=-1 if expired else 60)
    Assignment.objects.bulk_create([Assignment(document=document, annotator=person, expires_at=expires_at)
                                    for person in people])
    drafts = Annotation.objects.bulk_create([
        Annotation(document=document, annotator=person, state=Annotation.State.DRAFT,
                   spans=EDITED if edited else [], version=2 if edited else 1)
        for person in people
    ])
    if len(people) >= document.project.annotators_per_document:
        Document.objects.filter(pk=document.pk).update(status=Document.Status.ASSIGNED)
    return [draft.pk for draft in drafts]


@pytest.fixture
def without_retrain_requests():
    """A submission may queue a retrain (learning.receivers); not what these races are about, and costly."""
    from annotator.signals import annotation_submitted
    from learning.receivers import queue_retrain_after_batch

    annotation_submitted.disconnect(queue_retrain_after_batch)
    try:
        yield
    finally:
        annotation_submitted.connect(queue_retrain_after_batch)


def expire(user) -> None:
    Assignment.objects.filter(annotator=user).update(expires_at=timezone.now() - timedelta(minutes=1))


def gold_by_annotator(document: Document) -> dict[str, int]:
    counts: dict[str, int] = {}
    for username in Annotation.objects.filter(document=document, state=Annotation.State.SUBMITTED,
                                              source=Annotation.Source.HUMAN).values_list("annotator__username",
                                                                                          flat=True):
        counts[username] = counts.get(username, 0) + 1
    return counts


def settled(document: Document, *, needed: int, third=None) -> str | None:
    """What is wrong with a record once everyone who could submit it has: None when it is right.

    A submitted record is never handed out again; with ``third``, that person actually asks for it. With
    two people or more (who submit the same spans here), the record is adjudicated at once, exactly once.
    """
    gold = gold_by_annotator(document)
    if len(gold) != needed or any(n != 1 for n in gold.values()):
        return f"gold annotations by annotator {gold}, {needed} people wanted"
    status = Document.objects.get(pk=document.pk).status
    wanted = Document.Status.ADJUDICATED if needed >= 2 else Document.Status.SUBMITTED
    if status != wanted:
        return f"record left {status!r}"
    adjudicated = Annotation.objects.filter(document=document, source=Annotation.Source.ADJUDICATED).count()
    if adjudicated != (1 if needed >= 2 else 0):
        return f"{adjudicated} adjudicated annotations"
    if third is not None and next_record(project=document.project, user=third) is not None:
        return f"handed to a third person ({third.username}) afterwards"
    return None


# 1. Expiry against a save: an edited draft is never released -----------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_expiry_never_releases_a_record_whose_draft_is_being_saved(projects, without_retrain_requests):
    """Ana's assignment expired with an untouched draft. She saves an edit while Bob asks for a record,
    which releases expired assignments. Either her save wins (her record stays hers, Bob gets nothing) or
    the release does (her untouched draft goes, her save is refused, Bob gets the record) — never both."""
    project = projects["A"]
    [document] = make_pool(project, 1)
    ana, bob = annotators(project, "ana2", "bob")

    def prepare(round_):
        [annotation] = handed_out(document, ana, expired=True)
        return {"annotation": annotation}

    def ana_saves(scene):
        return save_draft(annotation_id=scene["annotation"], user=ana, version=1, spans=EDITED).annotation.version

    def bob_asks(scene):
        handout = next_record(project=project, user=bob)
        return handout and handout.annotation.pk

    def check(scene, outcomes):
        saved, bobs = outcomes
        if isinstance(bobs, Exception):
            return f"Bob's request failed: {bobs!r}"
        if saved == 2:
            draft = Annotation.objects.filter(pk=scene["annotation"]).first()
            if draft is None or draft.version != 2:
                return "Ana's saved draft was deleted"
            if bobs is not None:
                return "Ana saved her edit, yet the record was handed to Bob"
            if not Assignment.objects.filter(annotator=ana, completed_at=None, expires_at__gt=timezone.now()).exists():
                return "Ana saved her edit, yet her assignment was not extended"
        elif isinstance(saved, Annotation.DoesNotExist):
            if bobs is None:
                return "Ana's save was refused, yet the record was not released"
        else:
            return f"Ana's save ended with {saved!r}"
        # Then both try to submit what they hold: exactly one gold annotation results.
        for user in (ana, bob):
            mine = Annotation.objects.filter(document=document, annotator=user).first()
            if mine is not None:
                try:
                    submit(annotation_id=mine.pk, user=user, version=mine.version, spans=EDITED)
                except NotAssigned:
                    pass
        return settled(document, needed=1)

    broken = race(prepare=prepare, contenders=[ana_saves, bob_asks], check=check)
    assert broken == [], summary(broken)


# 2. Only the assignee submits ------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_a_submit_racing_the_expiry_of_its_assignment_never_makes_two_gold_annotations(
    projects, without_retrain_requests
):
    """Ana edited her draft, then her assignment expired. She submits while Bob asks for a record: either her
    submission counts (and Bob gets nothing) or the record is handed to Bob and her submission is refused,
    her edited draft kept."""
    project = projects["A"]
    [document] = make_pool(project, 1)
    ana, bob = annotators(project, "ana2", "bob")

    def prepare(round_):
        [annotation] = handed_out(document, ana, expired=True, edited=True)
        return {"annotation": annotation}

    def ana_submits(scene):
        return submit(annotation_id=scene["annotation"], user=ana, version=2, spans=EDITED).annotation.state

    def bob_asks(scene):
        handout = next_record(project=project, user=bob)
        return handout and handout.annotation.pk

    def check(scene, outcomes):
        submitted, bobs = outcomes
        if isinstance(bobs, Exception):
            return f"Bob's request failed: {bobs!r}"
        draft = Annotation.objects.filter(pk=scene["annotation"]).first()
        if draft is None:
            return "Ana's edited draft was deleted"
        if submitted == Annotation.State.SUBMITTED:
            if bobs is not None:
                return "Ana's submission was accepted, yet the record was handed to Bob"
        elif isinstance(submitted, NotAssigned):
            if bobs is None or HANDED_ON not in str(submitted):
                return f"Ana was refused ({submitted}) though Bob did not get the record"
            if draft.version != 2 or draft.state != Annotation.State.DRAFT:
                return "Ana's refused submission changed her draft"
        else:
            return f"Ana's submission ended with {submitted!r}"
        if bobs is not None:
            submit(annotation_id=bobs, user=bob, version=1, spans=EDITED)
        return settled(document, needed=1)

    broken = race(prepare=prepare, contenders=[ana_submits, bob_asks], check=check)
    assert broken == [], summary(broken)


@pytest.mark.django_db
def test_an_expired_assignment_still_free_is_submitted_or_taken_again(users, projects):
    """Decided: an annotator whose assignment expired submits as usual while nobody else was handed the
    record — whether or not the expiry released it yet (then the assignment is taken again)."""
    project = projects["A"]
    first, second = make_pool(project, 2)
    ana = users["annotator"]
    # Expired, not released yet.
    handout = next_record(project=project, user=ana)
    expire(ana)
    done = submit(annotation_id=handout.annotation.pk, user=ana, version=1, spans=EDITED)
    assert done.annotation.state == Annotation.State.SUBMITTED
    assert Assignment.objects.get(annotator=ana, document=handout.annotation.document).completed_at is not None
    # Edited, expired and released: the record is back in the pool, her draft kept; she takes it again.
    handout = next_record(project=project, user=ana)
    other = handout.annotation.document
    save_draft(annotation_id=handout.annotation.pk, user=ana, version=1, spans=EDITED)
    expire(ana)
    assert release_expired_assignments(project=project) == 1
    assert Document.objects.get(pk=other.pk).status == Document.Status.POOL
    assert not Assignment.objects.filter(document=other).exists()
    saved = save_draft(annotation_id=handout.annotation.pk, user=ana, version=2, spans=EDITED)
    assert saved.annotation.version == 3
    assert Document.objects.get(pk=other.pk).status == Document.Status.ASSIGNED
    submit(annotation_id=handout.annotation.pk, user=ana, version=3, spans=EDITED)
    assert Assignment.objects.get(document=other).annotator == ana
    assert Document.objects.get(pk=other.pk).status == Document.Status.SUBMITTED
    assert {first.pk, second.pk} == {d.pk for d in Document.objects.filter(status="submitted")}
    assert next_record(project=project, user=users["lead"]) is None


@pytest.mark.django_db
def test_a_record_handed_to_someone_else_is_refused_to_its_former_assignee(users, projects, api_as):
    project = projects["A"]
    [document] = make_pool(project, 1)
    ana, lea = users["annotator"], users["lead"]
    [bob] = annotators(project, "bob")
    mine = next_record(project=project, user=ana).annotation
    save_draft(annotation_id=mine.pk, user=ana, version=1, spans=EDITED)
    expire(ana)
    bobs = next_record(project=project, user=bob).annotation
    assert bobs.document_id == document.pk
    with pytest.raises(NotAssigned, match=HANDED_ON):
        submit(annotation_id=mine.pk, user=ana, version=2, spans=EDITED)
    with pytest.raises(NotAssigned, match=HANDED_ON):
        save_draft(annotation_id=mine.pk, user=ana, version=2, spans=[])
    # Over the API: 403 with the reason, which the workbench shows as it is.
    client = api_as(ana)
    for method, url in ((client.post, f"/api/annotations/{mine.pk}/submit/"),
                        (client.put, f"/api/annotations/{mine.pk}/draft/")):
        response = method(url, {"version": 2, "spans": EDITED}, format="json")
        assert response.status_code == 403, response.content
        assert HANDED_ON in response.json()["detail"]
    stored = Annotation.objects.get(pk=mine.pk)
    assert (stored.state, stored.version, stored.spans[0]["end"]) == ("draft", 2, 22)  # kept as last saved
    submit(annotation_id=bobs.pk, user=bob, version=1, spans=EDITED)
    assert gold_by_annotator(document) == {"bob": 1}
    with pytest.raises(NotAssigned, match="completed since"):
        submit(annotation_id=mine.pk, user=ana, version=2, spans=EDITED)
    # A lead may still submit their own annotation of a record handed on.
    start_afresh(project)
    leads = next_record(project=project, user=lea).annotation
    save_draft(annotation_id=leads.pk, user=lea, version=1, spans=EDITED)
    expire(lea)
    assert next_record(project=project, user=bob).annotation.document_id == document.pk
    assert submit(annotation_id=leads.pk, user=lea, version=2, spans=EDITED).annotation.state == "submitted"


# 3. Completions of a double-annotated record are counted under the document's lock ------------------------

@pytest.mark.django_db(transaction=True)
def test_two_submissions_of_a_double_annotated_record_complete_it(projects, without_retrain_requests):
    project = projects["A"]
    project.annotators_per_document = 2
    project.save(update_fields=["annotators_per_document"])
    [document] = make_pool(project, 1)
    ana, bob, carl = annotators(project, "ana2", "bob", "carl")

    def prepare(round_):
        return dict(zip((ana, bob), handed_out(document, ana, bob)))

    def submits(user):
        return lambda scene: submit(annotation_id=scene[user], user=user, version=1, spans=EDITED).annotation.state

    def check(scene, outcomes):
        if outcomes != [Annotation.State.SUBMITTED] * 2:
            return f"submissions ended with {outcomes!r}"
        return settled(document, needed=2, third=carl)

    broken = race(prepare=prepare, contenders=[submits(ana), submits(bob)], check=check)
    assert broken == [], summary(broken)


@pytest.mark.django_db
def test_a_double_annotated_record_half_submitted_is_not_handed_to_a_third_person(users, projects):
    project = projects["A"]
    project.annotators_per_document = 2
    project.save(update_fields=["annotators_per_document"])
    first, second = make_pool(project, 2)
    rank(project, [first, second])
    ana, lea = users["annotator"], users["lead"]
    mine = next_record(project=project, user=ana).annotation
    theirs = next_record(project=project, user=lea).annotation
    assert mine.document_id == theirs.document_id == first.pk
    submit(annotation_id=mine.pk, user=ana, version=1, spans=EDITED)
    assert Document.objects.get(pk=mine.document_id).status == Document.Status.ASSIGNED
    # Ana's is done and Lea's open: the record has its two people, and the next one goes out instead.
    assert next_record(project=project, user=users["admin"]).annotation.document_id == second.pk
    submit(annotation_id=theirs.pk, user=lea, version=1, spans=EDITED)
    assert Document.objects.get(pk=mine.document_id).status == Document.Status.ADJUDICATED  # the same spans
    assert len(gold_by_annotator(Document.objects.get(pk=mine.document_id))) == 2


# 4. The other read-then-write races -------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_one_person_asking_twice_at_once_gets_one_record(projects):
    """A double click on "next record" (or two tabs): both requests hand out the same one record."""
    project = projects["A"]
    make_pool(project, 3)
    [ana] = annotators(project, "ana2")

    def prepare(round_):
        start_afresh(project)
        return {}

    def asks(scene):
        return next_record(project=project, user=ana).assignment.document_id

    def check(scene, outcomes):
        if len(set(outcomes)) != 1 or any(isinstance(o, Exception) for o in outcomes):
            return f"handed out {outcomes!r}"
        held = Assignment.objects.filter(annotator=ana, completed_at=None).count()
        return None if held == 1 else f"{held} open assignments"

    broken = race(prepare=prepare, contenders=[asks, asks], check=check)
    assert broken == [], summary(broken)


@pytest.mark.django_db(transaction=True)
def test_two_projects_of_one_name_at_once_make_one_and_a_clear_refusal():
    def prepare(round_):
        return {"name": f"Twin {round_}"}

    def creates(scene):
        return create_project(name=scene["name"], schema="MEDDOCAN")

    def check(scene, outcomes):
        made = [o for o in outcomes if isinstance(o, Project)]
        refused = [o for o in outcomes if isinstance(o, ProjectError) and "exists already" in str(o)]
        if len(made) != 1 or len(refused) != 1:
            return f"outcomes {outcomes!r}"
        return None

    broken = race(prepare=prepare, contenders=[creates, creates], check=check)
    assert broken == [], summary(broken)
    assert Project.objects.filter(name__startswith="Twin ").count() == ROUNDS


@pytest.mark.django_db(transaction=True)
def test_a_lead_s_retrain_asked_while_the_last_one_publishes_is_not_lost(projects):
    """The lead asks for a retrain at the moment the active one publishes: either the active job is marked
    and its end queues the follow-up, or it ended first and the request queues a new job — one active job
    after the round either way."""
    project = projects["A"]
    make_pool(project, 1)

    def prepare(round_):
        RetrainJob.objects.filter(project=project, status__in=RetrainJob.ACTIVE).update(status=RetrainJob.Status.DONE)
        ranking = stage_ranking(project=project, strategy="Random", strategy_params={})
        job = RetrainJob.objects.create(
            project=project, reason=RetrainJob.Reason.BATCH, status=RetrainJob.Status.SCORING, attempt=1,
            ranking_id=ranking.pk, trained_at=timezone.now(),
            result={"tagger": {"kind": "crf", "params": {}}, "silver": [], "n_documents": 0, "n_tokens": 0,
                    "annotator_hours": 0.0, "metrics": {}, "train_seconds": 0.0, "gold": [], "strategy": {},
                    "recall_bias": {}, "self_training": {}, "seed": 0},
        )
        return {"job": job.pk}

    def publishes(scene):  # what the learning.publish task does
        version = retrain.publish(scene["job"], 1)
        return version is not None and jobs.after_end(version.job)

    def lead_asks(scene):
        return jobs.request_retrain(project=project, reason=RetrainJob.Reason.LEAD, force=True)

    def check(scene, outcomes):
        if any(isinstance(o, Exception) for o in outcomes):
            return f"outcomes {outcomes!r}"
        if RetrainJob.objects.get(pk=scene["job"]).status != RetrainJob.Status.DONE:
            return "the job did not publish"
        active = RetrainJob.objects.filter(project=project, status__in=RetrainJob.ACTIVE).count()
        return None if active == 1 else f"{active} active jobs after the lead asked"

    broken = race(prepare=prepare, contenders=[publishes, lead_asks], check=check)
    assert broken == [], summary(broken)
