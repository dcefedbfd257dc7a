"""The stylometric clusters page in a real browser: a lead recomputes the clusters and reads them."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from annotator.models import Document, Membership
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from corpus.synthetic import generate_notes
from learning.models import Clustering
from learning.services.retrain import train_and_rank
from tests.browser.conftest import CHROMIUM, SCREENSHOTS, log_in, make_user, screenshot

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]


def two_style_project(lead):
    """Spanish notes in short lines and English discharge summaries, 20 of each, with a current model."""
    spanish, english = generate_notes(20, seed=1), generate_notes(20, seed=2, language="en")
    labels = sorted({span.label for note in english for span in note.spans})
    project = create_project(name="Two styles", schema="MEDDOCAN", labels=labels, created_by=lead)
    set_membership(project=project, user=lead, role=Membership.Role.LEAD)
    # Five Spanish and two English notes are annotated: the annotated set leans to the Spanish cluster.
    for notes, gold in ((spanish, 5), (english, 2)):
        import_documents(project=project, documents=notes[:gold], annotated=True)
        import_documents(project=project, documents=notes[5:9], annotated=True, evaluation=True)
        import_documents(project=project, documents=notes[gold:5] + notes[9:], annotated=False)
    # Publishing notifies the project over Channels (async_to_sync), which cannot run in this thread while
    # Playwright's event loop is running in it.
    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(_train_in_thread, project).result()
    return project


def _train_in_thread(project) -> None:
    try:
        train_and_rank(project=project)
    finally:
        connection.close()


def cell(row, column: str) -> str:
    return row.locator(f'[data-col="{column}"]').inner_text().strip()


def test_a_lead_recomputes_the_clusters_and_reads_sizes_shares_and_scores(live_server, new_page, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    lead = make_user("lea")
    project = two_style_project(lead)
    page = new_page()
    log_in(page, live_server.url, "lea", f"/projects/{project.pk}/clusters/")
    assert page.locator("#no-clusters").is_visible()
    assert page.locator("#recompute-mode").inner_text().startswith("Runs here and now")
    assert page.locator("#diverse-batches b").inner_text() == "off"
    assert page.get_attribute("#diverse-batches a", "href") == f"/projects/{project.pk}/loop/#settings"

    page.click("#recompute-clusters")
    page.wait_for_selector("#cluster-table")
    page.wait_for_selector("#cluster-chart[data-ready=true]")
    assert page.evaluate("document.getElementById('cluster-chart').layout.separators") == ".,"  # js/charts.js's
    assert page.locator(".message").inner_text() == "Clustered 40 documents into 2 clusters."

    clustering = Clustering.objects.get(project=project)
    assert clustering.status == "done" and clustering.k == 2
    documents = Document.objects.filter(project=project)
    annotated = set(documents.filter(role="pool", status="submitted").values_list("pk", flat=True))
    evaluation = set(documents.filter(role="evaluation").values_list("pk", flat=True))
    rows = page.locator("#cluster-table tbody tr")
    assert rows.count() == 2
    # Equal sizes: the cluster of the first document (Spanish) is cluster 1.
    for i, (n_annotated, annotated_share) in enumerate([(5, "71.4 %"), (2, "28.6 %")]):
        row = rows.nth(i)
        label = int(row.get_attribute("data-cluster"))
        assert label == i
        members = {int(key) for key, c in clustering.labels.items() if c == label}
        assert cell(row, "size") == str(len(members)) == "20"
        assert cell(row, "share") == "50.0 %"
        assert cell(row, "annotated") == str(len(members & annotated)) == str(n_annotated)
        assert cell(row, "annotated-share") == annotated_share
        assert cell(row, "evaluation") == str(len(members & evaluation)) == "4"
        assert 0 <= float(cell(row, "f1")) <= 1
    assert page.locator("#dunn-table tr.chosen td").first.inner_text() == "2"
    assert page.locator("#cluster-means tbody tr").count() == 2
    assert page.locator("#cluster-means thead th").count() == 1 + len(clustering.kept_features)
    assert page.locator("#cluster-chart .bars path").count() >= 4  # two bars per cluster
    screenshot(page, "clusters")
    page.screenshot(path=str(SCREENSHOTS / "clusters-full-page.png"), full_page=True)
    assert page.script_errors == []
