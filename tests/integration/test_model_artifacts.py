"""Saved models are signed and verified before they are unpickled (learning.core.artifacts): a model file
changed on disk is refused wherever models are loaded — by the next retrain (which goes on without it), by the
scoring of the pool, by the cluster scores, by the BiLSTM-CRF's own loader — and nothing in it runs. The
clusters page reads stored scores and never loads a model.

A "planted" file is a pickle whose unpickling creates a marker file: the marker must never appear.
"""
from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

from annotator.models import Membership
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from corpus.synthetic import generate_notes
from learning.core import artifacts
from learning.core.artifacts import ArtifactRejected
from learning.models import Clustering, ModelVersion, RetrainJob
from learning.selectors import clusters as selectors
from learning.services import clustering as clustering_service
from annotator.artifact_store import get_store
from learning.services import jobs, model_store, retrain

SPANISH = generate_notes(12, seed=1)
ENGLISH = generate_notes(12, seed=2, language="en")
LABELS = sorted({span.label for note in SPANISH + ENGLISH for span in note.spans})


class Planted:
    """Unpickling this creates ``marker``: what a forged model file would do, in harmless form."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


def forged(path: Path, marker: Path, *, keep_trailer: bool) -> None:
    """Overwrite a model file with a planted pickle (as someone with write access to var/models/ could): with
    the original file's signature trailer kept (a swapped payload), or as a bare pickle."""
    payload = pickle.dumps(Planted(marker))
    original = path.read_bytes()
    trailer = original[-(artifacts.TAG_BYTES + len(artifacts.MARKER)):] if keep_trailer else b""
    path.write_bytes(payload + trailer)


# The artifact format, without a database ----------------------------------------------------------------------

def test_an_artifact_is_0600_round_trips_and_is_refused_when_changed(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "model.pickle"
    old_umask = os.umask(0)
    try:
        artifacts.write(path, {"weights": [1.0, 2.0]}, key=b"project key")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["model.pickle"]  # no partial file left behind
    assert artifacts.read(path, key=b"project key") == {"weights": [1.0, 2.0]}

    with pytest.raises(ArtifactRejected, match="was not loaded"):
        artifacts.read(path, key=b"another project's key")

    forged(path, marker, keep_trailer=True)
    with pytest.raises(ArtifactRejected, match="does not match its signature"):
        artifacts.read(path, key=b"project key")
    forged(path, marker, keep_trailer=False)
    with pytest.raises(ArtifactRejected, match="carries no signature"):
        artifacts.read(path, key=b"project key")
    # One changed byte of an honest file is enough.
    artifacts.write(path, {"weights": [1.0, 2.0]}, key=b"project key")
    blob = bytearray(path.read_bytes())
    blob[5] ^= 1
    path.write_bytes(bytes(blob))
    with pytest.raises(ArtifactRejected):
        artifacts.read(path, key=b"project key")
    assert not marker.exists()
    # The planted pickle does what it says when unpickled without a check (so the tests above prove something).
    pickle.loads(pickle.dumps(Planted(marker)))
    assert marker.exists()


def test_the_bilstm_crf_loader_refuses_a_forged_file(tmp_path):
    from learning.core.taggers.flair_tagger import BiLSTMCRFTagger

    marker = tmp_path / "marker"
    path = tmp_path / "tagger.bin"
    artifacts.write(path, BiLSTMCRFTagger(), key=b"k")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert isinstance(BiLSTMCRFTagger.load(path, key=b"k"), BiLSTMCRFTagger)
    forged(path, marker, keep_trailer=True)
    with pytest.raises(ArtifactRejected):
        BiLSTMCRFTagger.load(path, key=b"k")
    assert not marker.exists()


# The loop ------------------------------------------------------------------------------------------------------

@pytest.fixture
def project(users, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    model_store._TAGGERS.clear()
    project = create_project(name="Artifacts", schema="MEDDOCAN", labels=LABELS, created_by=users["lead"])
    set_membership(project=project, user=users["annotator"], role=Membership.Role.ANNOTATOR)
    for notes in (SPANISH, ENGLISH):
        import_documents(project=project, documents=notes[:4], annotated=True)
        import_documents(project=project, documents=notes[4:7], annotated=True, evaluation=True)
        import_documents(project=project, documents=notes[7:], annotated=False)
    yield project
    model_store._TAGGERS.clear()


pytestmark = pytest.mark.django_db


def _file(artifact: str) -> Path:
    """The file that holds a stored model (the local artifact store, the default)."""
    return get_store().path(artifact)


def test_a_model_is_saved_0600_and_signed_with_its_projects_key(project):
    version = retrain.train_and_rank(project=project)
    path = _file(version.artifact)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    tagger = artifacts.read(path, key=model_store.artifact_key(project.pk))
    assert tagger.labels_ == version.job.result["labels"]
    with pytest.raises(ArtifactRejected):
        artifacts.read(path, key=model_store.artifact_key(project.pk + 1))  # another project's key
    assert model_store.artifact_key(project.pk) != model_store.artifact_key(project.pk + 1)


@pytest.mark.parametrize("keep_trailer", [True, False], ids=["swapped-payload", "bare-pickle"])
def test_the_next_retrain_refuses_a_forged_current_model_and_goes_on_without_it(project, tmp_path, keep_trailer):
    marker = tmp_path / "marker"
    first = retrain.train_and_rank(project=project)
    forged(_file(first.artifact), marker, keep_trailer=keep_trailer)
    model_store._TAGGERS.clear()  # a fresh worker process: nothing of the file is in memory

    second = retrain.train_and_rank(project=project)

    assert not marker.exists()
    assert second is not None and second.pk != first.pk and second.is_current
    assert second.job.result["fit"]["continued_from"] == "nothing"
    # The comparison needs no file: it reads the spans the first retrain kept of its model.
    assert second.metrics["mcnemar_vs_previous"]["previous"] == first.pk


def test_a_forged_current_model_is_not_run_to_compare_with(project, tmp_path):
    marker = tmp_path / "marker"
    first = retrain.train_and_rank(project=project)
    RetrainJob.objects.filter(model_version=first).update(evaluation_spans={})  # nothing kept: it must be run
    forged(_file(first.artifact), marker, keep_trailer=True)
    model_store._TAGGERS.clear()

    second = retrain.train_and_rank(project=project)

    assert not marker.exists()
    assert second is not None and second.is_current
    assert "mcnemar_vs_previous" not in second.metrics
    [warning] = second.job.result["warnings"]
    assert warning.startswith(f"The previous model (#{first.pk}) was not compared with: ")
    assert "was not loaded" in warning


def test_scoring_refuses_a_forged_job_model_and_the_current_model_stays(project, tmp_path):
    marker = tmp_path / "marker"
    current = retrain.train_and_rank(project=project)
    job, created = jobs.request_retrain(project=project, reason=RetrainJob.Reason.COMMAND, force=True)
    assert created
    claimed = jobs.claim(job.pk)
    retrain.train(claimed)
    claimed.refresh_from_db()
    forged(_file(claimed.artifact), marker, keep_trailer=True)
    model_store._TAGGERS.clear()

    with pytest.raises(ArtifactRejected):
        retrain.score(claimed, [d.pk for d in project.documents.filter(role="pool", status="pool")])

    assert not marker.exists()
    assert ModelVersion.objects.get(project=project, is_current=True).pk == current.pk


def test_cluster_scores_refuse_a_forged_model_and_the_page_says_so(project, tmp_path, users, client):
    marker = tmp_path / "marker"
    version = retrain.train_and_rank(project=project)
    forged(_file(version.artifact), marker, keep_trailer=True)
    model_store._TAGGERS.clear()

    clustering = clustering_service.compute_clustering(project)

    assert clustering.status == Clustering.Status.DONE and not marker.exists()
    assert clustering.model_scores["model_version"] == version.pk and clustering.model_scores["clusters"] == {}
    assert "does not match its signature" in clustering.model_scores["error"]
    client.force_login(users["lead"])
    page = client.get(f"/projects/{project.pk}/clusters/").content.decode()
    assert "The current model could not be run" in page and "does not match its signature" in page
    assert not marker.exists()


def test_the_clusters_page_reads_stored_scores_and_never_loads_a_model(project, users, client, monkeypatch):
    clustering_service.compute_clustering(project)  # before any model: no scores stored yet
    url = f"/projects/{project.pk}/clusters/"
    client.force_login(users["lead"])
    assert "Per-cluster scores will appear after the first retrain" not in client.get(url).content.decode()
    assert "There is no model yet" in client.get(url).content.decode()

    version = retrain.train_and_rank(project=project)  # publishing stores the new model's scores per cluster
    clustering = selectors.current_clustering(project)
    stored = clustering.model_scores
    assert stored["model_version"] == version.pk and stored["error"] == ""
    assert sum(row["documents"] for row in stored["clusters"].values()) == 6

    loads: list[str] = []
    real_loads = pickle.loads

    def watched_loads(data, *args, **kwargs):
        if b"learning.core.taggers" in bytes(data):
            loads.append("pickle.loads of a tagger")
            raise AssertionError("a page load unpickled a model")
        return real_loads(data, *args, **kwargs)

    def refuse(*args, **kwargs):
        loads.append("model loader")
        raise AssertionError("a page load read a model file")

    monkeypatch.setattr(pickle, "loads", watched_loads)
    monkeypatch.setattr(artifacts, "read", refuse)
    monkeypatch.setattr(artifacts, "unseal", refuse)
    monkeypatch.setattr(retrain, "load_model", refuse)
    monkeypatch.setattr(clustering_service, "load_model", refuse)

    for _ in range(2):
        page = client.get(url)
        assert page.status_code == 200
        assert page.content.decode().count('data-col="f1"><b>') == len(stored["clusters"])
    assert loads == []
    overview = selectors.cluster_overview(project)
    assert {row.label: row.scores.f1 for row in overview.rows if row.scores} == {
        int(label): row["f1"] for label, row in stored["clusters"].items()}

    # Scores of an older model are not shown as the current one's.
    ModelVersion.objects.filter(pk=version.pk).update(is_current=False)
    newer = ModelVersion.objects.create(project=project, tagger_kind="crf", status="ready", is_current=True,
                                        artifact=version.artifact)
    html = client.get(url).content.decode()
    assert "Per-cluster scores will appear after the next model" in html and 'data-col="f1"><b>' not in html
    assert newer.pk != stored["model_version"] and loads == []
