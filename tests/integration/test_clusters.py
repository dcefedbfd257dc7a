"""Stylometric clusters of a project (ALGORITHMS.md §8): computed over every document, shown with shares
and the current model's scores per cluster, used to spread the loop's batches; who may see and recompute."""
from __future__ import annotations


import numpy as np
import pytest

from annotator.models import Document, Membership, PoolScore
from annotator.selectors import gold_documents
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from annotator.services.ranking import add_scores, stage_ranking
from corpus.synthetic import generate_notes
from learning import tasks
from learning.selectors import clusters as selectors
from learning.services import clustering as service, model_store
from learning.core.metrics import evaluate
from learning.core.ordering import UNCLUSTERED, diverse_batch, spread_batches
from learning.core.stylometry import feature_matrix
from learning.services.ordering import diverse_order
from learning.models import Clustering, ModelVersion
from learning.services.retrain import train_and_rank

pytestmark = pytest.mark.django_db

# Two styles: Spanish notes in short "Field: value." lines and English discharge summaries in long sentences.
SPANISH = generate_notes(20, seed=1)
ENGLISH = generate_notes(20, seed=2, language="en")
ENGLISH_LABELS = sorted({span.label for note in ENGLISH for span in note.spans})


@pytest.fixture
def styles(users):
    """40 documents, 20 per style: 5 gold pool, 4 evaluation and 11 unannotated pool documents each."""
    project = create_project(name="Styles", schema="MEDDOCAN", labels=ENGLISH_LABELS, created_by=users["lead"])
    set_membership(project=project, user=users["annotator"], role=Membership.Role.ANNOTATOR)
    for notes in (SPANISH, ENGLISH):
        import_documents(project=project, documents=notes[:5], annotated=True)
        import_documents(project=project, documents=notes[5:9], annotated=True, evaluation=True)
        import_documents(project=project, documents=notes[9:], annotated=False)
    return project


def style_of(document: Document) -> str:
    return document.meta["language"]


def test_clusters_follow_the_styles_and_cover_every_document(styles):
    clustering = service.compute_clustering(styles)

    assert clustering.status == Clustering.Status.DONE and clustering.error == ""
    documents = {d.pk: d for d in styles.documents.all()}
    assert sorted(int(key) for key in clustering.labels) == sorted(documents)
    # The two styles are the two clusters, exactly.
    assert clustering.k == 2
    clusters_of_style = {}
    for key, label in clustering.labels.items():
        clusters_of_style.setdefault(style_of(documents[int(key)]), set()).add(label)
    assert clusters_of_style == {"es": {0}, "en": {1}} or clusters_of_style == {"es": {1}, "en": {0}}
    assert clustering.dunn["2"] == max(clustering.dunn.values())
    assert sorted(int(k) for k in clustering.dunn) == list(range(2, 11))
    assert set(clustering.kept_features) < set(clustering.feature_names)
    assert len(clustering.cluster_means) == 2 and all(len(m) == 14 for m in clustering.cluster_means)
    assert selectors.current_clustering(styles).pk == clustering.pk

    # A second clustering replaces the first.
    again = service.compute_clustering(styles)
    assert again.labels == clustering.labels
    assert list(Clustering.objects.filter(project=styles).values_list("pk", flat=True)) == [again.pk]


def test_large_projects_cluster_a_sample_and_place_the_rest_by_the_nearest_centre(styles, monkeypatch):
    monkeypatch.setattr(selectors, "MAX_CLUSTERED", 30)
    clustering = service.compute_clustering(styles)
    documents = {d.pk: d for d in styles.documents.all()}
    assert sorted(int(key) for key in clustering.labels) == sorted(documents)
    # The ten documents outside the sample still land with their own style.
    assert clustering.k == 2
    assert len({(style_of(documents[int(key)]), label) for key, label in clustering.labels.items()}) == 2
    overview = selectors.cluster_overview(styles)
    assert overview.sampled and [row.size for row in overview.rows] == [20, 20]
    for label, means in enumerate(clustering.cluster_means):  # over every member, not only the sample
        texts = [documents[int(key)].text for key, c in clustering.labels.items() if c == label]
        assert means == pytest.approx(feature_matrix(texts, "es")[1].mean(axis=0).tolist())


def test_overview_shares_and_per_cluster_scores_of_the_current_model(styles, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    clustering = service.compute_clustering(styles)
    version = train_and_rank(project=styles)
    # One more record after the clustering: counted apart, in no cluster.
    import_documents(project=styles, documents=generate_notes(1, seed=3), annotated=False)

    overview = selectors.cluster_overview(styles)

    assert [row.size for row in overview.rows] == [20, 20]
    assert overview.documents == 40 and overview.unclustered == 1
    assert sum(row.share for row in overview.rows) == pytest.approx(1.0)
    assert [row.annotated for row in overview.rows] == [5, 5] and overview.annotated == 10
    assert [row.annotated_share for row in overview.rows] == [0.5, 0.5]
    assert [row.evaluation_documents for row in overview.rows] == [4, 4]
    assert [k for k, _, chosen in overview.dunn if chosen] == [2]
    assert [len(row.means) for row in overview.rows] == [len(overview.kept_features)] * 2
    label_of_means = {tuple(row.means): row.label for row in overview.rows}
    kept_positions = [clustering.feature_names.index(name) for name in overview.kept_features]
    assert {tuple(means[i] for i in kept_positions): label for label, means in enumerate(clustering.cluster_means)} \
        == label_of_means

    # The scores per cluster are those of the current model on that cluster's evaluation documents.
    assert overview.model.pk == version.pk and overview.model_note == ""
    tagger = model_store.read(version.artifact, project_id=styles.pk)
    ids = dict(styles.documents.filter(role="evaluation").values_list("external_id", "pk"))
    gold = gold_documents(project=styles, role="evaluation")
    for row in overview.rows:
        members = [d for d in gold if clustering.labels[str(ids[d.name])] == row.label]
        expected = evaluate(members, tagger.predict(members))
        assert row.scores.documents == 4
        assert (row.scores.p, row.scores.r, row.scores.f1) == (
            expected["entity"]["p"], expected["entity"]["r"], expected["entity"]["f1"])
        assert row.scores.support == expected["counts"]["gold"] == sum(len(d.spans) for d in members)
    assert overview.rows[0].scores.f1 != overview.rows[1].scores.f1

    # Without the model's file there are no scores, and the page says why.
    ModelVersion.objects.filter(pk=version.pk).update(artifact="")
    pruned = selectors.cluster_overview(styles)
    assert [row.scores for row in pruned.rows] == [None, None]
    assert "no longer kept" in pruned.model_note


def test_a_cluster_without_evaluation_documents_has_no_scores(styles, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    styles.documents.filter(role="evaluation", meta__language="en").delete()
    clustering = service.compute_clustering(styles)
    train_and_rank(project=styles)
    overview = selectors.cluster_overview(styles)
    spanish = clustering.labels[str(styles.documents.filter(meta__language="es").first().pk)]
    assert [(row.label == spanish, row.size, row.evaluation_documents) for row in overview.rows] == [
        (True, 20, 4), (False, 16, 0)]
    assert overview.rows[0].scores.documents == 4 and overview.rows[1].scores is None
    assert overview.model_note == ""


def test_fewer_than_three_documents_make_one_cluster_and_a_bad_language_fails_clearly(users):
    project = create_project(name="Tiny", schema="MEDDOCAN")
    import_documents(project=project, documents=SPANISH[:2], annotated=False)
    tiny = service.compute_clustering(project)
    assert tiny.status == "done" and tiny.k == 1 and sorted(tiny.labels.values()) == [0, 0] and tiny.dunn == {}
    assert [row.size for row in selectors.cluster_overview(project).rows] == [2]

    project.language = "fr"
    project.save()
    failed = service.compute_clustering(project)
    assert failed.status == Clustering.Status.FAILED and failed.finished_at is not None
    assert failed.error == "Unsupported language 'fr' for stylometric features; use one of es, en."
    # The earlier clustering is still the project's.
    assert selectors.current_clustering(project).pk == tiny.pk
    assert selectors.cluster_overview(project).latest.pk == failed.pk


# Diverse batches ---------------------------------------------------------------------------------------------

def reference_order(groups: list, batch_size: int) -> list[int]:
    """ordering.diverse_batch called again and again on what is left (scores fall along the list)."""
    left = list(range(len(groups)))
    order: list[int] = []
    while left:
        picked = diverse_batch([-position for position in left], [groups[p] for p in left], batch_size)
        order += [left[i] for i in picked]
        left = [p for i, p in enumerate(left) if i not in set(picked)]
    return order


def test_spread_batches_by_hand_and_against_diverse_batch():
    groups = ["a", "a", "a", "b", "b", "c"]
    assert spread_batches(groups, 2) == [0, 3, 1, 4, 2, 5]
    assert spread_batches(groups, 4) == [0, 3, 5, 1, 2, 4]
    assert spread_batches(groups, 1) == [0, 1, 2, 3, 4, 5]
    assert spread_batches([], 3) == []
    rng = np.random.default_rng(4)
    for batch_size in (1, 3, 5, 8):
        groups = rng.integers(-1, 4, size=60).tolist()
        assert spread_batches(groups, batch_size) == reference_order(groups, batch_size)


def test_diverse_order_spreads_each_batch_across_clusters_and_keeps_every_record(styles):
    clustering = service.compute_clustering(styles)
    styles.diverse_batches, styles.batch_size = True, 4
    styles.save()
    late = import_documents(project=styles, documents=generate_notes(1, seed=3), annotated=False)
    assert late.created == 1
    pool = list(styles.documents.filter(role="pool", status="pool").order_by("pk"))
    # Every Spanish record scores above every English one, the late record below all: by score alone the
    # first batches would be Spanish only.
    scores = {d.pk: (2.0 if style_of(d) == "es" else 1.0) - d.pk * 1e-6 for d in pool}
    newest = max(scores)
    scores[newest] = 0.5
    ranking = stage_ranking(project=styles, strategy="LCUB_6", strategy_params={})
    add_scores(ranking_id=ranking.pk, entries=[(pk, score, {}) for pk, score in scores.items()])

    order = diverse_order(styles, ranking.pk)

    assert sorted(order) == sorted(scores) and len(order) == 23
    ranked = list(PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("rank", "document_id"))
    assert ranked == list(enumerate(order, start=1))
    cluster = {pk: clustering.labels.get(str(pk), UNCLUSTERED) for pk in scores}
    assert cluster[newest] == UNCLUSTERED
    by_score = sorted(scores, key=lambda pk: -scores[pk])
    assert order == [by_score[p] for p in reference_order([cluster[pk] for pk in by_score], 4)]
    # The first batch holds the best two of each style (then the late record, the best of its group).
    spanish = [pk for pk in by_score if cluster[pk] == cluster[by_score[0]]]
    english = [pk for pk in by_score if cluster[pk] not in (cluster[by_score[0]], UNCLUSTERED)]
    assert order[:4] == [spanish[0], english[0], newest, spanish[1]]
    assert {cluster[pk] for pk in order[4:8]} == {cluster[spanish[0]], cluster[english[0]]}

    # Not applicable: the option is off, or there is no clustering. Nothing changes then.
    styles.diverse_batches = False
    assert diverse_order(styles, ranking.pk) is None
    styles.diverse_batches = True
    Clustering.objects.filter(project=styles).delete()
    assert diverse_order(styles, ranking.pk) is None
    assert list(PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("rank", "document_id")) \
        == ranked


# The page and who may use it ----------------------------------------------------------------------------------

def test_leads_see_the_page_and_recompute_annotators_are_refused(styles, users, client):
    url = f"/projects/{styles.pk}/clusters/"
    client.force_login(users["outsider"])
    assert client.get(url).status_code == 404
    assert client.post(url).status_code == 404

    client.force_login(users["annotator"])
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403
    assert not Clustering.objects.exists()

    client.force_login(users["lead"])
    page = client.get(url)
    assert b"No clusters yet." in page.content
    assert b"Recompute clusters" in page.content and b"Runs here and now, while you wait:" in page.content
    assert f'{styles.pk}/loop/#settings'.encode() in page.content
    response = client.post(url, follow=True)
    assert response.redirect_chain == [(url, 302)]
    clustering = Clustering.objects.get(project=styles)
    assert clustering.status == "done" and len(clustering.labels) == 40
    html = response.content.decode()
    assert "Clustered 40 documents into 2 clusters." in html
    assert html.count('data-col="size">20<') == 2 and 'id="cluster-chart"' in html
    assert "Diverse batches: <b>off</b>" in html

    client.force_login(users["annotator"])
    assert client.get(url).status_code == 403  # model internals are for leads, also once computed


def test_large_projects_are_clustered_on_a_worker(
    styles, users, client, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(selectors, "SYNC_LIMIT", 10)
    sent = []
    monkeypatch.setattr(tasks.cluster, "delay", lambda clustering_id: sent.append(clustering_id))
    client.force_login(users["lead"])
    url = f"/projects/{styles.pk}/clusters/"
    assert b"Queued for a worker" in client.get(url).content

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, follow=True)
    queued = Clustering.objects.get(project=styles)
    assert queued.status == "queued" and sent == [queued.pk]
    assert "queued for a worker" in response.content.decode()
    assert 'id="clusters-pending"' in response.content.decode()
    # Asking again while it waits queues nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url)
    assert sent == [queued.pk] and Clustering.objects.count() == 1

    assert tasks.cluster(queued.pk) == "done: 2 clusters"
    assert tasks.cluster(queued.pk) == "not claimed"  # a repeated message does nothing
    page = client.get(url).content.decode()
    assert page.count('data-col="size">20<') == 2 and 'id="clusters-pending"' not in page
