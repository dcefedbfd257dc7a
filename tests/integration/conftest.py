"""Fixtures for tests against the real (embedded) PostgreSQL: users in each role and two projects."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from annotator.models import Membership
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from corpus.synthetic import generate_notes

SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
MEDDOCAN = SHARED / "meddocan"

needs_meddocan = pytest.mark.skipif(not (MEDDOCAN / "dev").is_dir(), reason="../shared/datasets/meddocan is absent")


@pytest.fixture
def users(db):
    User = get_user_model()
    return {
        "admin": User.objects.create_superuser("root", password="pw-root"),
        "lead": User.objects.create_user("lea", password="pw-lea"),
        "annotator": User.objects.create_user("ana", password="pw-ana"),
        "outsider": User.objects.create_user("otto", password="pw-otto"),
    }


@pytest.fixture
def projects(users):
    """Project A has lea as lead and ana as annotator; project B has only otto as annotator."""
    a = create_project(name="A", schema="MEDDOCAN", created_by=users["lead"])
    set_membership(project=a, user=users["annotator"], role=Membership.Role.ANNOTATOR)
    b = create_project(name="B", schema="i2b2-2014")
    set_membership(project=b, user=users["outsider"], role=Membership.Role.ANNOTATOR)
    return {"A": a, "B": b}


@pytest.fixture
def api_as():
    def make(user) -> APIClient:
        client = APIClient()
        client.force_authenticate(user=user)
        return client

    return make


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """The production hasher is slow on purpose; tests only need passwords to check."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def loop_project(projects):
    """Project A: 10 gold pool notes, 5 evaluation notes, 25 unlabelled; batch size 3."""
    project = projects["A"]
    notes = generate_notes(40, seed=3)
    import_documents(project=project, documents=notes[:10], annotated=True)
    import_documents(project=project, documents=notes[10:15], annotated=True, evaluation=True)
    import_documents(project=project, documents=notes[15:], annotated=False)
    project.batch_size = 3
    project.save()
    return project
