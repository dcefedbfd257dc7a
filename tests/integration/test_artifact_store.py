"""The artifact store: the same behaviour from both backends (files under DATA_DIR, rows of PostgreSQL), and
the loop running with its models kept in PostgreSQL only."""
from __future__ import annotations

import stat

import pytest

from annotator import artifact_store
from annotator.artifact_store import ArtifactMissing, LocalStore, PostgresStore, get_store
from annotator.models import StoredArtifact, StoredArtifactChunk
from annotator.services.imports import import_documents
from corpus.synthetic import generate_notes
from learning.core.artifacts import ArtifactRejected
from learning.services import model_store
from learning.services.retrain import train_and_rank

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["local", "postgres"])
def store(request, tmp_path):
    return LocalStore(tmp_path / "data") if request.param == "local" else PostgresStore()


def test_what_is_written_is_read_back_replaced_listed_newest_first_and_deleted(store, monkeypatch):
    monkeypatch.setattr(artifact_store, "CHUNK_BYTES", 7)  # several chunks for PostgreSQL
    data = bytes(range(256)) * 3
    store.write("models/a-1.pickle", data)
    assert store.read("models/a-1.pickle") == data and store.exists("models/a-1.pickle")
    store.write("models/a-2.pickle", b"")
    store.write("models/b-1.pickle", b"other")
    store.write("models/a-1.pickle", b"replaced")  # written last: listed first
    assert store.read("models/a-1.pickle") == b"replaced" and store.read("models/a-2.pickle") == b""
    assert store.names("models/a-") == ["models/a-1.pickle", "models/a-2.pickle"]
    assert store.names("models/c-") == [] and store.names("nothing/here-") == []
    store.delete("models/a-1.pickle")
    store.delete("models/a-1.pickle")  # twice: nothing happens
    assert not store.exists("models/a-1.pickle") and store.names("models/a-") == ["models/a-2.pickle"]
    with pytest.raises(ArtifactMissing):
        store.read("models/a-1.pickle")


@pytest.mark.parametrize("name", ["../secret", "/etc/passwd", "models/../../x", "models\\x", "", "models//x", ".hidden"])
def test_a_name_that_could_leave_the_store_is_refused(store, name):
    with pytest.raises(ValueError, match="not an artifact name"):
        store.write(name, b"x")
    with pytest.raises(ValueError, match="not an artifact name"):
        store.read(name)


def test_local_files_are_private_to_the_servers_user(tmp_path):
    store = LocalStore(tmp_path / "data")
    store.write("models/m.pickle", b"x")
    path = store.path("models/m.pickle")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["m.pickle"]  # no partial file left behind


def test_the_setting_chooses_the_backend(settings, tmp_path):
    settings.ARTIFACT_STORE, settings.DATA_DIR = "local", tmp_path
    assert isinstance(get_store(), LocalStore) and get_store().root == tmp_path
    settings.ARTIFACT_STORE = "postgres"
    assert isinstance(get_store(), PostgresStore)
    settings.ARTIFACT_STORE = "s3"
    with pytest.raises(ValueError, match="ARTIFACT_STORE must be one of local, postgres, not 's3'"):
        get_store()


def test_with_the_postgres_store_the_loop_keeps_its_models_in_the_database_only(projects, settings, tmp_path):
    settings.ARTIFACT_STORE, settings.DATA_DIR = "postgres", tmp_path / "data"
    model_store._TAGGERS.clear()
    project = projects["A"]
    notes = generate_notes(30, seed=5)
    import_documents(project=project, documents=notes[:12], annotated=True)
    import_documents(project=project, documents=notes[12:16], annotated=True, evaluation=True)
    import_documents(project=project, documents=notes[16:], annotated=False)

    versions = [train_and_rank(project=project) for _ in range(4)]
    assert not (tmp_path / "data" / "models").exists()
    # The three newest models are kept (the current one and two before it); the oldest was deleted with its
    # chunks, and its version keeps its metrics.
    kept = [v.artifact for v in versions[1:]]
    assert sorted(StoredArtifact.objects.values_list("name", flat=True)) == sorted(kept)
    versions[0].refresh_from_db()
    assert versions[0].artifact == "" and versions[0].metrics["entity"]["f1"] > 0
    assert not StoredArtifactChunk.objects.exclude(artifact__name__in=kept).exists()
    model_store._TAGGERS.clear()
    assert model_store.load_model(kept[-1], project_id=project.pk).labels_ == versions[-1].job.result["labels"]

    # A row changed in the database is refused as a changed file would be.
    chunk = StoredArtifactChunk.objects.filter(artifact__name=kept[-1]).order_by("index").first()
    chunk.data = b"X" + bytes(chunk.data)[1:]
    chunk.save()
    with pytest.raises(ArtifactRejected):
        model_store.read(kept[-1], project_id=project.pk)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["local", "postgres"])
def test_a_deleted_project_takes_its_models_and_bases_with_it(projects, settings, tmp_path, kind):
    settings.ARTIFACT_STORE, settings.DATA_DIR = kind, tmp_path / "data"
    project = projects["A"]
    import_documents(project=project, documents=generate_notes(14, seed=6), annotated=True)
    version = train_and_rank(project=project)
    base = model_store.save_base(project.pk, "a base")
    other = model_store.save_base(projects["B"].pk, "another project's base")
    assert model_store.exists(version.artifact) and model_store.exists(base)
    project.delete()
    assert not model_store.exists(version.artifact) and not model_store.exists(base)
    assert model_store.exists(other)
