"""Every operation of the API's own OpenAPI description, fuzzed by schemathesis as an annotator and as a lead:
no server error (5xx) whatever is sent, and nothing of another annotator's work or of the evaluation set in
what an annotator gets back.

Generated ids are steered towards the objects that exist (project A and B, the annotator's annotation, the other
annotator's, the evaluation document), so that the fuzz reaches the views' checks and not only their 404s.
Examples are derandomized: the same run every time.
"""
from __future__ import annotations

import json

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.test import Client
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from annotator.models import Document, Membership
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from annotator.services.queue import next_record
from config.wsgi import application
from corpus.types import Document as CorpusDocument

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 25
# Marked texts: none may reach the annotator.
OTHER_ANNOTATORS_TEXT = "Paciente: Olga Marin Secreta, 71 años."
EVALUATION_TEXT = "Paciente: Evaristo Evaluacion Oculto, 40 años."


@pytest.fixture
def fuzz_world(db):
    User = get_user_model()
    ana = User.objects.create_user("ana", password="pw")
    olga = User.objects.create_user("olga", password="pw")
    lea = User.objects.create_user("lea", password="pw")
    bert = User.objects.create_user("bert", password="pw")
    a = create_project(name="A", schema="MEDDOCAN", created_by=lea)
    set_membership(project=a, user=ana, role=Membership.Role.ANNOTATOR)
    set_membership(project=a, user=olga, role=Membership.Role.ANNOTATOR)
    b = create_project(name="B", schema="MEDDOCAN")
    set_membership(project=b, user=bert, role=Membership.Role.ANNOTATOR)
    # Before the first ranking records are handed out at random: olga's is the only one in the pool when
    # she asks, so the marked text is hers on every run.
    import_documents(project=a, annotated=False, documents=[CorpusDocument(text=OTHER_ANNOTATORS_TEXT, name="olga-1")])
    theirs = next_record(project=a, user=olga).annotation
    assert theirs.document.text == OTHER_ANNOTATORS_TEXT
    import_documents(project=a, annotated=False, documents=[
        CorpusDocument(text="Paciente: Ana Ruiz, 54 años.", name="ana-1"),
        *[CorpusDocument(text=f"Paciente: Luis Gil {i}.", name=f"pool-{i}") for i in range(4)],
    ])
    import_documents(project=a, annotated=True, evaluation=True,
                     documents=[CorpusDocument(text=EVALUATION_TEXT, name="eval-1")])
    import_documents(project=b, annotated=False, documents=[CorpusDocument(text="Patient: Bob Stone.", name="b-1")])
    own = next_record(project=a, user=ana).annotation
    foreign = next_record(project=b, user=bert).annotation
    evaluation = Document.objects.get(project=a, role=Document.Role.EVALUATION)
    return {
        "users": {"annotator": ana, "lead": lea},
        "project_ids": [a.pk, b.pk],
        "annotation_ids": [own.pk, theirs.pk, foreign.pk],
        "document_ids": [own.document_id, theirs.document_id, evaluation.pk, foreign.document_id],
        "other_annotation_ids": {theirs.pk},
        "own": own,
    }


@pytest.fixture
def api_schema(fuzz_world):
    """The API's description as the app serves it, calling the WSGI application itself."""
    client = Client()
    client.force_login(fuzz_world["users"]["lead"])
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = schemathesis.openapi.from_dict(response.json())
    schema.app = application
    # The WSGI handler would close the test's connection (and its transaction) around each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schema
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _steer(case, world) -> None:
    """Point most generated ids at objects that exist; keep some as generated (ids of nothing)."""
    choices = {"project_id": world["project_ids"], "annotation_id": world["annotation_ids"]}
    path = case.path_parameters or {}
    for name, value in list(path.items()):
        if isinstance(value, str):  # a path id the description leaves untyped: steer by the text's length
            value = len(value)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        candidates = choices.get(name)
        if name in ("pk", "id"):
            candidates = (world["annotation_ids"] if "annotations" in case.operation.path
                          else world["document_ids"] if "documents" in case.operation.path
                          else world["project_ids"])
        if candidates:
            index = value % (len(candidates) + 1)
            if index < len(candidates):
                path[name] = candidates[index]
        if name == "project_id" and value % 5 == 0:
            path[name] = world["project_ids"][0]


def _leaks(body: bytes, world) -> list[str]:
    """What an annotator's response holds of other people's work or of the evaluation set."""
    text = body.decode("utf-8", "replace")
    found = [marker for marker in (OTHER_ANNOTATORS_TEXT, EVALUATION_TEXT, '"olga"') if marker in text]
    try:
        data = json.loads(text)
    except ValueError:
        return found
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("annotator") == "olga" or (
                "spans" in item and item.get("id") in world["other_annotation_ids"]
            ):
                found.append(f"annotation {item.get('id')}")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _fuzz(schema, world, role: str) -> dict:
    token = Token.objects.create(user=world["users"][role])
    headers = {"Authorization": f"Token {token.key}"}
    figures = {"operations": 0, "examples": 0, "server_errors": []}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15, [op.label for op in operations]
    for operation in operations:
        figures["operations"] += 1

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        def run(case):
            _steer(case, world)
            response = case.call(headers=headers)
            figures["examples"] += 1
            if response.status_code >= 500:
                figures["server_errors"].append(f"{case.method} {case.formatted_path} -> {response.status_code}")
            case.validate_response(response, checks=[not_a_server_error])
            if role == "annotator":
                leaks = _leaks(response.content, world)
                assert leaks == [], f"{case.method} {case.formatted_path}: {leaks}"

        run()
        assert connection.in_atomic_block, f"the test's transaction ended during {operation.label}"
    return figures


@pytest.mark.parametrize("role", ["annotator", "lead"])
def test_fuzzed_api_answers_without_server_errors_or_leaks(api_schema, fuzz_world, role, capsys):
    figures = _fuzz(api_schema, fuzz_world, role)
    assert figures["server_errors"] == []
    assert figures["examples"] >= figures["operations"] * 5
    with capsys.disabled():
        print(f"\nfuzz as {role}: {figures['operations']} operations, {figures['examples']} examples, "
              f"{len(figures['server_errors'])} server errors")


def test_leak_check_catches_another_annotators_annotation(fuzz_world):
    """The check above is able to fail: a lead's list of annotations holds the other annotator's."""
    client = Client()
    client.force_login(fuzz_world["users"]["lead"])
    project_id = fuzz_world["project_ids"][0]
    response = client.get(f"/api/projects/{project_id}/annotations/")
    assert response.status_code == 200
    theirs = next(iter(fuzz_world["other_annotation_ids"]))
    assert f"annotation {theirs}" in _leaks(response.content, fuzz_world)
    detail = client.get(f"/api/projects/{project_id}/documents/{fuzz_world['document_ids'][2]}/")
    assert EVALUATION_TEXT in _leaks(detail.content, fuzz_world)
