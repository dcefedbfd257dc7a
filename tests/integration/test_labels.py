"""A project's label schema edited later (services and page), a project created in the browser, and the
evaluation share drawn at import."""
from __future__ import annotations

import pytest
from django.test import Client

from annotator.models import Annotation, AuditEvent, Document, Membership, PoolScore, Project, Ranking
from annotator.schemas import label_styles
from annotator.services.imports import import_documents
from annotator.services.labels import LabelError, add_label, delete_label, label_usage, rename_label, restyle_label
from annotator.services.projects import create_project, set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument, Span
from learning.models import ModelVersion, SilverSentence
from tests.integration.import_pages import upload_and_confirm

pytestmark = pytest.mark.django_db

TEXT = "Llamar a Ana al 600 123 456 o al 911 222 333."
ANA, PHONE_1, PHONE_2 = (9, 12), (16, 27), (33, 44)


def note(name: str, spans=()) -> CorpusDocument:
    return CorpusDocument(text=f"{name}: {TEXT}", name=name,
                          spans=tuple(Span(s + len(name) + 2, e + len(name) + 2, label) for (s, e), label in spans))


@pytest.fixture
def phone_project(users):
    """Labels NAME, PHONE, DATE; r1 and r2 imported as gold with PHONE spans (3 in all), r3 in the pool with a
    PHONE suggestion handed to ana as a draft, and a silver sentence with a PHONE span."""
    project = create_project(name="Phones", labels=["NAME", "PHONE", "DATE"], created_by=users["lead"])
    set_membership(project=project, user=users["annotator"], role=Membership.Role.ANNOTATOR)
    import_documents(project=project, annotated=True, documents=[
        note("r1", [(ANA, "NAME"), (PHONE_1, "PHONE"), (PHONE_2, "PHONE")]),
        note("r2", [(PHONE_1, "PHONE")]),
    ])
    import_documents(project=project, annotated=False, documents=[note("r3")])
    r3 = Document.objects.get(project=project, external_id="r3")
    ranking = Ranking.objects.create(project=project, strategy="LCUB_6", is_current=True)
    offset = len("r3: ")
    PoolScore.objects.create(ranking=ranking, document=r3, score=1.0, rank=1, pre_annotations={
        "spans": [{"start": PHONE_1[0] + offset, "end": PHONE_1[1] + offset, "label": "PHONE", "confidence": 0.7}],
        "possible_missed": [],
    })
    handout = next_record(project=project, user=users["annotator"])
    assert handout.annotation.document_id == r3.pk
    # The draft as the annotator left it: the suggestion accepted (what the hand-out completed is not the point).
    suggestion = {"start": PHONE_1[0] + offset, "end": PHONE_1[1] + offset, "label": "PHONE", "origin": "model",
                  "status": "accepted", "confidence": 0.7}
    Annotation.objects.filter(pk=handout.annotation.pk).update(spans=[suggestion], suggested=[suggestion])
    version = ModelVersion.objects.create(project=project, tagger_kind="crf", status="ready")
    SilverSentence.objects.create(project=project, document=r3, model_version=version, start=0, end=len(TEXT),
                                  spans=[{"start": 20, "end": 31, "label": "PHONE"}])
    return project


def labels_in_store(project: Project) -> dict[str, list[str]]:
    annotations = Annotation.objects.filter(document__project=project)
    return {
        "spans": sorted(s["label"] for a in annotations for s in a.spans),
        "suggested": sorted(s["label"] for a in annotations for s in a.suggested),
        "pre_annotations": sorted(s["label"] for p in PoolScore.objects.filter(ranking__project=project)
                                  for s in p.pre_annotations["spans"]),
        "silver": sorted(s["label"] for row in SilverSentence.objects.filter(project=project) for s in row.spans),
    }


def test_the_draft_holds_the_suggestion(phone_project):
    assert labels_in_store(phone_project) == {
        "spans": ["NAME", "PHONE", "PHONE", "PHONE", "PHONE"], "suggested": ["PHONE"],
        "pre_annotations": ["PHONE"], "silver": ["PHONE"],
    }


def test_usage_counts_every_stored_span_and_its_records(phone_project):
    # 3 gold + the draft's span and its suggestion (r3) + the pre-annotation (r3) + the silver span (r3).
    assert label_usage(project=phone_project, label="PHONE").spans == 7
    assert label_usage(project=phone_project, label="PHONE").records == 3
    assert label_usage(project=phone_project, label="NAME").spans == 1
    assert label_usage(project=phone_project, label="DATE").spans == 0


def test_rename_migrates_every_stored_span_in_one_audited_change(phone_project, users):
    phone_project.conceal_policy = {"PHONE": "mask"}
    phone_project.save()
    key_before = label_styles(phone_project.labels, phone_project.label_styles)[1]

    usage = rename_label(project=phone_project, user=users["lead"], old="PHONE", new="TELEPHONE")

    assert (usage.spans, usage.records) == (7, 3)
    assert labels_in_store(phone_project) == {
        "spans": ["NAME", "TELEPHONE", "TELEPHONE", "TELEPHONE", "TELEPHONE"], "suggested": ["TELEPHONE"],
        "pre_annotations": ["TELEPHONE"], "silver": ["TELEPHONE"],
    }
    stored = Project.objects.get(pk=phone_project.pk)
    assert stored.labels == ["NAME", "TELEPHONE", "DATE"]
    assert stored.conceal_policy == {"TELEPHONE": "mask"}
    after = label_styles(stored.labels, stored.label_styles)[1]
    assert (after["label"], after["colour"], after["key"]) == ("TELEPHONE", key_before["colour"], key_before["key"])
    # Offsets, origins and confidences are untouched.
    pre = PoolScore.objects.get(ranking__project=phone_project).pre_annotations["spans"][0]
    assert pre["confidence"] == 0.7 and pre["end"] - pre["start"] == PHONE_1[1] - PHONE_1[0]
    event = AuditEvent.objects.get(project_id=phone_project.pk, detail__has_key="label_renamed")
    assert (event.user, event.action, event.detail) == (
        users["lead"], AuditEvent.Action.EDIT, {"label_renamed": ["PHONE", "TELEPHONE"], "spans": 7, "records": 3})


def test_a_failed_rename_changes_nothing(phone_project, users):
    before = labels_in_store(phone_project)
    with pytest.raises(LabelError, match="has a label NAME already") as refused:
        rename_label(project=phone_project, user=users["lead"], old="PHONE", new="NAME")
    assert refused.value.field == "name"
    with pytest.raises(LabelError, match="letters, digits"):
        rename_label(project=phone_project, user=users["lead"], old="PHONE", new="PHONE NUMBER")
    assert labels_in_store(phone_project) == before
    assert Project.objects.get(pk=phone_project.pk).labels == ["NAME", "PHONE", "DATE"]


def test_delete_is_refused_with_the_count_while_spans_use_the_label(phone_project, users):
    with pytest.raises(LabelError) as refused:
        delete_label(project=phone_project, user=users["lead"], label="PHONE")
    assert str(refused.value) == "PHONE is used by 7 spans in 3 records: rename it, or correct those records first"
    with pytest.raises(LabelError, match="^NAME is used by 1 span in 1 record:"):
        delete_label(project=phone_project, user=users["lead"], label="NAME")
    assert Project.objects.get(pk=phone_project.pk).labels == ["NAME", "PHONE", "DATE"]

    delete_label(project=phone_project, user=users["lead"], label="DATE")
    assert Project.objects.get(pk=phone_project.pk).labels == ["NAME", "PHONE"]
    assert AuditEvent.objects.filter(project_id=phone_project.pk, detail__label_deleted="DATE").count() == 1


def test_keys_stay_unique_and_survive_other_changes(phone_project, users):
    with pytest.raises(LabelError, match="the key '1' is NAME's already") as refused:
        restyle_label(project=phone_project, user=users["lead"], label="DATE", colour="#00aa00", key="1")
    assert refused.value.field == "key"
    with pytest.raises(LabelError, match="uses 'x' for itself"):
        restyle_label(project=phone_project, user=users["lead"], label="DATE", colour="#00aa00", key="x")
    with pytest.raises(LabelError, match="not a colour"):
        restyle_label(project=phone_project, user=users["lead"], label="DATE", colour="green", key="d")

    changed = restyle_label(project=phone_project, user=users["lead"], label="DATE", colour="#00AA00", key="d")
    assert changed == {"colour": [label_styles(["NAME", "PHONE", "DATE"], {})[2]["colour"], "#00aa00"],
                       "key": ["3", "d"]}
    style = add_label(project=phone_project, user=users["lead"], name="EMAIL", colour="#123456", key="")
    assert style == {"colour": "#123456", "key": ""}
    assert [(s["label"], s["key"]) for s in label_styles(phone_project.labels, phone_project.label_styles)] == [
        ("NAME", "1"), ("PHONE", "2"), ("DATE", "d"), ("EMAIL", "")]


def test_keys_do_not_move_when_a_label_before_them_goes(users):
    project = create_project(name="Keys", labels=["A", "B", "C"], created_by=users["lead"])
    delete_label(project=project, user=users["lead"], label="A")
    assert [(s["label"], s["key"]) for s in label_styles(project.labels, project.label_styles)] == [("B", "2"), ("C", "3")]
    add_label(project=project, user=users["lead"], name="D")
    assert [(s["label"], s["key"]) for s in label_styles(project.labels, project.label_styles)] == [
        ("B", "2"), ("C", "3"), ("D", "1")]


# --- the Labels page ---------------------------------------------------------------------------------------


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_labels_page_is_for_leads_and_admins(phone_project, users):
    url = f"/projects/{phone_project.pk}/labels/"
    assert client_of(users["lead"]).get(url).status_code == 200
    assert client_of(users["admin"]).get(url).status_code == 200
    assert client_of(users["annotator"]).get(url).status_code == 403
    assert client_of(users["outsider"]).get(url).status_code == 404
    response = client_of(users["annotator"]).post(url, {"action": "rename", "label": "PHONE", "name": "TEL"})
    assert response.status_code == 403
    assert Project.objects.get(pk=phone_project.pk).labels == ["NAME", "PHONE", "DATE"]


def test_labels_page_refuses_a_delete_next_to_the_label_and_renames(phone_project, users):
    url = f"/projects/{phone_project.pk}/labels/"
    client = client_of(users["lead"])
    response = client.post(url, {"action": "delete", "label": "PHONE"})
    assert response.status_code == 400
    assert "PHONE is used by 7 spans in 3 records" in response.content.decode()
    response = client.post(url, {"action": "restyle", "label": "DATE", "colour": "#00aa00", "key": "2"})
    assert response.status_code == 400
    assert "the key &#x27;2&#x27; is PHONE&#x27;s already" in response.content.decode()
    response = client.post(url, {"action": "rename", "label": "PHONE", "name": "TELEPHONE"})
    assert response.status_code == 302
    assert Project.objects.get(pk=phone_project.pk).labels == ["NAME", "TELEPHONE", "DATE"]
    assert "Renamed PHONE to TELEPHONE in 7 stored spans of 3 records." in client.get(url).content.decode()
    response = client.post(url, {"action": "add", "name": "EMAIL", "colour": "#aa00aa", "key": "e"})
    assert response.status_code == 302
    assert Project.objects.get(pk=phone_project.pk).label_styles["EMAIL"] == {"colour": "#aa00aa", "key": "e"}


def test_the_workbench_shows_the_project_s_keys(phone_project, users):
    restyle_label(project=phone_project, user=users["lead"], label="DATE", colour="#00aa00", key="d")
    annotation = Annotation.objects.get(document__external_id="r3", annotator=users["annotator"])
    page = client_of(users["annotator"]).get(f"/projects/{phone_project.pk}/annotate/{annotation.document_id}/")
    assert page.status_code == 200
    styles = page.context["payload"]["project"]["label_styles"]
    assert [(s["label"], s["key"], s["hue"]) for s in styles] == [("NAME", "1", 211), ("PHONE", "2", 4), ("DATE", "d", 120)]
    assert '<span class="wb-label-name">DATE</span><kbd>d</kbd>' in page.content.decode()


# --- creating a project in the browser ---------------------------------------------------------------------


NEW = "/projects/new/"


def new_project_data(**changes) -> dict:
    data = {
        "name": "Notas", "description": "", "language": "es", "schema": "custom", "tagger": "crf",
        "strategy": "LCUB_6", "labels-TOTAL_FORMS": "8", "labels-INITIAL_FORMS": "8",
        "labels-MIN_NUM_FORMS": "0", "labels-MAX_NUM_FORMS": "8",
    }
    for i in range(8):
        data.update({f"labels-{i}-name": "", f"labels-{i}-colour": "#000000", f"labels-{i}-key": ""})
    data.update({"labels-0-name": "NAME", "labels-0-colour": "#3366ff", "labels-0-key": "n",
                 "labels-1-name": "PHONE", "labels-1-colour": "#ff6633", "labels-1-key": "t"})
    data.update(changes)
    return data


def test_only_admins_create_projects_unless_leads_are_allowed(projects, users, settings):
    settings.DEIDLOOP_LEADS_CREATE_PROJECTS = False
    assert client_of(users["lead"]).get(NEW).status_code == 403
    assert client_of(users["lead"]).post(NEW, new_project_data()).status_code == 403
    assert client_of(users["annotator"]).get(NEW).status_code == 403
    assert "new-project-link" not in client_of(users["lead"]).get("/").content.decode()
    assert not Project.objects.filter(name="Notas").exists()
    assert "new-project-link" in client_of(users["admin"]).get("/").content.decode()

    settings.DEIDLOOP_LEADS_CREATE_PROJECTS = True
    assert client_of(users["annotator"]).get(NEW).status_code == 403  # an annotator leads nothing
    response = client_of(users["lead"]).post(NEW, new_project_data())
    project = Project.objects.get(name="Notas")
    assert response.status_code == 302 and response["Location"] == f"/projects/{project.pk}/import/"
    assert Membership.objects.get(project=project, user=users["lead"]).role == Membership.Role.LEAD


def test_a_new_project_keeps_its_labels_colours_keys_and_loop(users):
    response = client_of(users["admin"]).post(NEW, new_project_data(tagger="unigram", strategy="entropy"))
    assert response.status_code == 302
    project = Project.objects.get(name="Notas")
    assert (project.schema_preset, project.labels, project.tagger, project.strategy) == (
        "custom", ["NAME", "PHONE"], {"kind": "unigram", "params": {}}, "entropy")
    assert project.label_styles == {"NAME": {"colour": "#3366ff", "key": "n"},
                                    "PHONE": {"colour": "#ff6633", "key": "t"}}
    event = AuditEvent.objects.get(project_id=project.pk, detail__has_key="project_created")
    assert event.user == users["admin"] and event.detail["project_created"]["labels"] == ["NAME", "PHONE"]


def test_a_preset_with_an_added_label(users):
    data = new_project_data(schema="HIPAA-18", **{"labels-0-name": "", "labels-1-name": "PATIENT_ID"})
    assert client_of(users["admin"]).post(NEW, data).status_code == 302
    project = Project.objects.get(name="Notas")
    assert project.labels[-1] == "PATIENT_ID" and len(project.labels) == 19


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"labels-0-name": "", "labels-1-name": ""}, "schema", "A custom schema needs at least one label"),
    ({"labels-1-key": "n"}, "key", "the key 'n' is NAME's already"),
    ({"labels-1-key": "c"}, "key", "the workbench uses 'c' for itself"),
    ({"labels-1-name": "NAME"}, "name", "NAME is on another row already"),
    ({"labels-1-name": "MY PHONE"}, "name", "letters, digits"),
    ({"labels-1-colour": "red"}, "colour", "is not a colour"),
    ({"name": "A"}, "name", "a project named 'A' exists already"),
    ({"schema": "MEDDOCAN", "labels-0-name": "FECHAS"}, "schema", "FECHAS: in the MEDDOCAN preset already"),
])
def test_bad_input_is_refused_next_to_its_field_and_creates_nothing(projects, users, changes, field, message):
    before = Project.objects.count()
    response = client_of(users["admin"]).post(NEW, new_project_data(**changes))
    assert response.status_code == 400
    form = response.context["form"]
    errors = [str(e) for e in form.errors.get(field, [])] + [
        str(e) for row in form.rows for e in row.errors.get(field, [])]
    assert any(message in error for error in errors), (field, form.errors, [row.errors for row in form.rows])
    assert Project.objects.count() == before


# --- the evaluation share at import -------------------------------------------------------------------------


def brat_upload(count: int):
    """``count`` brat records: every one with a NAME, every fourth a PHONE too, and one with an EMAIL."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    def entry(text, number, label, fragment):
        start = text.index(fragment)
        return f"T{number}\t{label} {start} {start + len(fragment)}\t{fragment}"

    files = []
    for i in range(count):
        text = f"Nota {i:02d}: Ana Ruiz llamó al 600 123 4{i:02d}, correo ana@x.es."
        ann = [entry(text, 1, "NAME", "Ana Ruiz")]
        if i % 4 == 0:
            ann.append(entry(text, 2, "PHONE", f"600 123 4{i:02d}"))
        if i == 5:
            ann.append(entry(text, 3, "EMAIL", "ana@x.es"))
        files += [SimpleUploadedFile(f"n{i:02d}.txt", text.encode()),
                  SimpleUploadedFile(f"n{i:02d}.ann", ("\n".join(ann) + "\n").encode())]
    return files


def test_an_import_sets_a_stratified_share_aside(users):
    project = create_project(name="Split", labels=["NAME", "PHONE", "EMAIL"], created_by=users["lead"])
    response = upload_and_confirm(client_of(users["lead"]), project.pk, {
        "format": "brat", "evaluation_percent": "20", "files": brat_upload(20)})
    assert response.status_code == 302, response.content.decode()[:2000]
    evaluation = Document.objects.filter(project=project, role=Document.Role.EVALUATION)
    assert evaluation.count() == 4
    assert Document.objects.filter(project=project, role=Document.Role.POOL).count() == 16
    held = {s["label"] for a in Annotation.objects.filter(document__in=evaluation) for s in a.spans}
    assert held == {"NAME", "PHONE", "EMAIL"}
    # The same corpus, imported again into another project, is split the same way.
    again = create_project(name="Split again", labels=["NAME", "PHONE", "EMAIL"], created_by=users["lead"])
    upload_and_confirm(client_of(users["lead"]), again.pk, {
        "format": "brat", "evaluation_percent": "20", "files": brat_upload(20)})
    assert sorted(Document.objects.filter(project=again, role="evaluation").values_list("external_id", flat=True)) \
        == sorted(evaluation.values_list("external_id", flat=True))


def test_a_share_with_the_evaluation_box_ticked_is_refused(users):
    project = create_project(name="Split", labels=["NAME", "PHONE", "EMAIL"], created_by=users["lead"])
    response = client_of(users["lead"]).post(f"/projects/{project.pk}/import/", {
        "format": "brat", "evaluation": "on", "evaluation_percent": "20", "files": brat_upload(5)})
    assert response.status_code == 400
    assert "Every record goes to the evaluation set already" in response.content.decode()
    response = client_of(users["lead"]).post(f"/projects/{project.pk}/import/", {
        "format": "brat", "evaluation_percent": "95", "files": brat_upload(5)})
    assert response.status_code == 400
    assert Document.objects.filter(project=project).count() == 0


def test_a_rename_asks_for_a_retrain_once_committed_when_a_model_suggests_the_old_name(
        phone_project, users, django_capture_on_commit_callbacks):
    from learning.models import RetrainJob

    with django_capture_on_commit_callbacks() as after_rename:
        rename_label(project=phone_project, user=users["lead"], old="NAME", new="PERSON")
    assert after_rename == []  # no current model: nothing suggests the old name
    ModelVersion.objects.filter(project=phone_project).update(is_current=True)
    with django_capture_on_commit_callbacks() as after_rename:
        rename_label(project=phone_project, user=users["lead"], old="PHONE", new="TELEPHONE")
    assert RetrainJob.objects.filter(project=phone_project).count() == 0  # not before the rename commits
    with django_capture_on_commit_callbacks() as sending:  # the task is sent once the job commits; not here
        for callback in after_rename:
            callback()
    job = RetrainJob.objects.get(project=phone_project)
    assert (job.reason, job.requested_by, len(sending)) == (RetrainJob.Reason.LEAD, users["lead"], 1)


def test_the_api_sets_a_share_aside_and_refuses_it_with_evaluation(users, api_as):
    project = create_project(name="Split", labels=["NAME", "PHONE", "EMAIL"], created_by=users["lead"])
    client = api_as(users["lead"])
    refused = client.post(f"/api/projects/{project.pk}/import/", {
        "format": "brat", "evaluation": "true", "evaluation_share": "0.2", "files": brat_upload(5)}, format="multipart")
    assert refused.status_code == 400 and "evaluation_share" in refused.json()
    response = client.post(f"/api/projects/{project.pk}/import/", {
        "format": "brat", "evaluation_share": "0.5", "files": brat_upload(8)}, format="multipart")
    assert response.status_code == 201, response.content
    assert (response.json()["created"], response.json()["evaluation"]) == (8, 4)
    assert Document.objects.filter(project=project, role="evaluation").count() == 4


def test_an_upload_left_to_a_worker_keeps_its_share(users, settings, tmp_path):
    from annotator.models import ImportJob
    from annotator.services.uploads import import_uploaded_files, run_import_job

    settings.DATA_DIR = tmp_path
    settings.DEIDLOOP_SYNC_IMPORT_BYTES = 0  # every upload goes to a worker
    project = create_project(name="Split", labels=["NAME", "PHONE", "EMAIL"], created_by=users["lead"])
    job = import_uploaded_files(project=project, files=brat_upload(10), fmt="brat", evaluation=False,
                                user=users["lead"], evaluation_share=0.3)
    assert isinstance(job, ImportJob) and job.evaluation_share == 0.3
    done = run_import_job(job_id=job.pk)  # what the worker's task runs
    assert (done.status, done.report["created"], done.report["evaluation"]) == ("done", 10, 3)
    evaluation = Document.objects.filter(project=project, role=Document.Role.EVALUATION)
    assert {s["label"] for a in Annotation.objects.filter(document__in=evaluation) for s in a.spans} == {
        "NAME", "PHONE", "EMAIL"}
