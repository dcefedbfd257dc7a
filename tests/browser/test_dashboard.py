"""The learning dashboard in a real browser: plotly charts of a seeded project whose figures are the stored
ones, the metric / axis / PHI type switches, a model version opened from its point, and a simulation
started from the page, run by a real Celery worker and drawn over the live curve without a reload."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.db import connections, transaction

from learning.core.simulation import DOCS_TO_TARGETS
from learning.models import ModelVersion, RetrainJob, SimulationRun
from tests.browser.conftest import CHROMIUM, PASSWORD, SCREENSHOTS, log_in, screenshot, wait_for_true
from tests.integration.celery_worker import Worker
from tests.seeding import seed_dashboard_project

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

TRACES = """Array.from(document.getElementById('curve-chart').data).map(t => ({
    kind: t.meta.kind, strategy: t.meta.strategy || null, name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))"""


def seed(**kwargs):
    """``seed_dashboard_project`` in a thread of its own, in one transaction.

    The thread: its services announce models through ``async_to_sync``, which refuses the thread where
    Playwright's event loop runs. The transaction: what a submission does once committed (queue a retrain
    for the workers when a batch is complete) waits until the seeding is over, so the seeding's own
    retrains run in place, one model version per batch, as in a test without committed transactions.
    """
    def work():
        try:
            with transaction.atomic():
                return seed_dashboard_project(password=PASSWORD, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        seeded = pool.submit(work).result()
    assert not RetrainJob.objects.filter(status__in=RetrainJob.ACTIVE).exists()
    return seeded


def traces(page, kind: str) -> list[dict]:
    return [t for t in page.evaluate(TRACES) if t["kind"] == kind]


def renders(page) -> int:
    return int(page.get_attribute("#curve-chart", "data-renders") or 0)


def choose(page, control: str, value: str) -> None:
    """Pick an option of a chart control and wait for the chart to be drawn again."""
    before = renders(page)
    page.select_option(f"#curve-{control}", value)
    wait_for_true(page, f"Number(document.getElementById('curve-chart').dataset.renders) > {before}")


def chart_title(page) -> str:
    return page.text_content("#curve-chart .gtitle")  # an SVG text


def full_page_screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def open_dashboard(page, base_url: str, username: str, project_id: int) -> None:
    log_in(page, base_url, username, f"/projects/{project_id}/dashboard/")
    page.wait_for_selector("#curve-chart .main-svg")
    wait_for_true(page, "Number(document.getElementById('curve-chart').dataset.renders) >= 1")


def test_dashboard_of_a_seeded_project_shows_the_stored_figures(live_server, new_page):
    seeded = seed()
    project, simulation = seeded.project, seeded.simulation
    versions = list(ModelVersion.objects.filter(project=project).order_by("created_at"))
    current = ModelVersion.objects.get(project=project, is_current=True)
    assert len(versions) == 4 and current == versions[-1] and simulation.status == SimulationRun.Status.DONE
    sim = simulation.results["5"]["strategies"]

    page = new_page()
    open_dashboard(page, live_server.url, seeded.lead.username, project.pk)
    page.wait_for_selector("#types-chart .main-svg")
    page.wait_for_selector("#curve-chart .main-svg")
    # Both charts write numbers as the page's language does (the charts' shared settings, js/charts.js).
    assert page.evaluate("['curve-chart', 'types-chart'].map(id => document.getElementById(id).layout.separators)"
                         ) == [".,", ".,"]

    # The headline figures are the current model's.
    entity = current.metrics["entity"]
    assert page.inner_text('[data-figure="entity_f1"]') == f"{entity['f1']:.3f}"
    assert page.inner_text('[data-figure="entity_p"]') == f"{entity['p']:.3f}"
    assert page.inner_text('[data-figure="token_f1"]') == f"{current.metrics['token']['f1']:.3f}"
    assert page.inner_text('[data-figure="leakage"]') == f"{100 * current.metrics['leakage']:.2f} %"
    assert page.inner_text('[data-figure="n_documents"]') == str(current.n_documents)
    test = current.metrics["mcnemar_vs_previous"]
    verdict = page.get_attribute("#mcnemar", "data-verdict")
    assert verdict == ("better" if test["pvalue"] < 0.05 and test["a_only"] > test["b_only"] else
                       "worse" if test["pvalue"] < 0.05 and test["a_only"] < test["b_only"] else "indistinguishable")
    assert f"Model #{current.pk} against model #{test['previous']}" in page.inner_text("#mcnemar")
    assert f"{test['a_only']} evaluation tokens are right only with the new model" in page.inner_text("#mcnemar")

    # The live curve: entity F1 against documents, one point per model version, with the simulation over it.
    live = traces(page, "live")[0]
    assert live["x"] == [v.n_documents for v in versions]
    assert live["y"] == pytest.approx([v.metrics["entity"]["f1"] for v in versions], abs=1e-12)
    assert page.locator("#curve-chart .scatterlayer .trace:last-child .points path").count() == 4
    simulated = traces(page, "simulation")
    assert [t["strategy"] for t in simulated] == ["random", "LCUB_6"]
    for trace in simulated:
        assert trace["x"] == sim[trace["strategy"]]["docs"]
        assert trace["y"] == pytest.approx(sim[trace["strategy"]]["f1_mean"], abs=1e-12)
    assert len(traces(page, "band")) == 4  # mean ± sd of 2 runs: an upper and a lower edge per strategy
    assert page.input_value("#curve-overlay") == f"{simulation.pk}:5"
    assert chart_title(page) == "Dashboard: Entity F1 against training documents · all PHI types"

    # The documents-to-F1 table is the simulation's, row by row.
    for name, curve in sim.items():
        row = page.locator(f'#docs-to-table tr[data-strategy="{name}"]')
        cells = [row.locator(f'td[data-target="{i}"]').inner_text() for i in range(len(DOCS_TO_TARGETS))]
        assert cells == [str(curve["docs_to"][f"{t:g}"]) if curve["docs_to"][f"{t:g}"] is not None
                         else "not reached" for t in DOCS_TO_TARGETS]
        assert f"{curve['final']['f1']:.3f} ± {curve['f1_sd'][-1]:.3f}" in row.inner_text()
    full_page_screenshot(page, "dashboard-00-full-page")
    screenshot(page, "dashboard-01-overview")

    # The chart as a PNG and as an SVG for a report, kept beside the screenshots.
    for fmt in ("png", "svg"):
        with page.expect_download() as info:
            page.click(f'#curve .dash-downloads [data-download="{fmt}"]')
        download = info.value
        assert download.suggested_filename == f"learning-curve-{project.pk}.{fmt}"
        saved = SCREENSHOTS / f"dashboard-learning-curve.{fmt}"
        download.save_as(saved)
        content = saved.read_bytes()
        if fmt == "png":
            assert content.startswith(b"\x89PNG")
        else:
            assert content.lstrip().startswith(b"<svg")
            assert b"Entity F1 against training documents" in content and b"LCUB_6 (simulated" in content

    # Token F1: the live curve changes; simulations measure entity scores only, and the page says so.
    choose(page, "metric", "token_f1")
    assert traces(page, "live")[0]["y"] == pytest.approx([v.metrics["token"]["f1"] for v in versions], abs=1e-12)
    assert traces(page, "simulation") == []
    assert "Simulations measure entity precision, recall and F1" in page.inner_text("#curve-note")
    # Leakage against annotator-hours.
    choose(page, "metric", "leakage")
    choose(page, "x", "annotator_hours")
    live = traces(page, "live")[0]
    assert live["x"] == pytest.approx([v.annotator_hours for v in versions])
    assert live["y"] == pytest.approx([v.metrics["leakage"] for v in versions], abs=1e-12)
    assert chart_title(page) == "Dashboard: Leakage against annotator-hours · all PHI types"
    page.locator("#curve").scroll_into_view_if_needed()
    screenshot(page, "dashboard-02-leakage-by-hours")
    choose(page, "x", "n_tokens")
    assert traces(page, "live")[0]["x"] == [v.n_tokens for v in versions]

    # One PHI type: per type only entity scores exist, so leakage gives way to entity recall.
    phi = "FAMILIARES_SUJETO_ASISTENCIA"
    choose(page, "x", "n_documents")
    choose(page, "type", phi)
    assert page.input_value("#curve-metric") == "entity_r"
    assert page.locator('#curve-metric option[value="token_f1"]').is_disabled()
    assert traces(page, "live")[0]["y"] == pytest.approx([v.metrics["per_type"][phi]["r"] for v in versions])
    choose(page, "metric", "entity_f1")
    assert traces(page, "live")[0]["y"] == pytest.approx([v.metrics["per_type"][phi]["f1"] for v in versions])
    simulated = traces(page, "simulation")
    assert [t["y"] for t in simulated] == [pytest.approx(sim[t["strategy"]]["per_type_f1"][phi]) for t in simulated]
    assert chart_title(page) == f"Dashboard: Entity F1 against training documents · {phi}"
    screenshot(page, "dashboard-03-one-phi-type")

    # Clicking a type in the per-type chart draws that type's curve.
    page.locator("#types").scroll_into_view_if_needed()
    screenshot(page, "dashboard-04-per-type")
    before = renders(page)
    bars = page.locator("#types-chart .barlayer .point")
    assert bars.count() == len(current.metrics["per_type"])
    box = bars.nth(0).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_for_true(page, f"Number(document.getElementById('curve-chart').dataset.renders) > {before}")
    first_type = [label for label in project.labels if label in current.metrics["per_type"]][0]
    assert page.input_value("#curve-type") == first_type

    # Back to all types; clicking the second model's point opens that model version.
    choose(page, "type", "")
    page.locator("#curve").scroll_into_view_if_needed()
    point = page.locator("#curve-chart .scatterlayer .trace:last-child .points path").nth(1).bounding_box()
    x, y = point["x"] + point["width"] / 2, point["y"] + point["height"] / 2
    page.mouse.move(x, y)
    page.wait_for_selector("#curve-chart .hoverlayer .hovertext")
    assert f"Model #{versions[1].pk}" in page.text_content("#curve-chart .hoverlayer")
    screenshot(page, "dashboard-05-hover")
    page.mouse.click(x, y)
    page.wait_for_url(f"**/projects/{project.pk}/models/{versions[1].pk}/")
    version = versions[1]
    for level in ("entity", "entity_binary", "token", "token_type"):
        cells = page.locator(f'#metrics-table tr[data-level="{level}"] td.num').all_inner_texts()
        assert cells == [f"{version.metrics[level][k]:.3f}" for k in ("p", "r", "f1")]
    rows = page.locator("#per-type-table tbody tr")
    assert rows.count() == len(version.metrics["per_type"])
    row = page.locator(f'#per-type-table tr[data-type="{phi}"] td').all_inner_texts()
    scores = version.metrics["per_type"][phi]
    leaked = version.metrics["leaked_by_type"][phi]
    assert row == [phi, f"{scores['p']:.3f}", f"{scores['r']:.3f}", f"{scores['f1']:.3f}", str(scores["support"]),
                       f"{leaked['leaked']} / {leaked['gold']}"]
    assert page.inner_text('#training-table [data-field="gold"]') == str(len(version.gold_document_ids))
    assert page.inner_text('#training-table [data-field="n_tokens"]') == str(version.n_tokens)
    assert page.inner_text('#time-table [data-field="train_seconds"]') == f"{version.train_seconds:.1f} s"
    assert page.locator("#mcnemar-table td").all_inner_texts() == [
        str(version.metrics["mcnemar_vs_previous"][k]) for k in ("both", "a_only", "b_only", "neither")]
    full_page_screenshot(page, "dashboard-06-model-version")
    assert page.script_errors == []


def test_a_simulation_started_in_the_browser_is_followed_and_overlaid(live_server, new_page, tmp_path):
    seeded = seed(name="Simulated", batches=1, simulate=False)
    project = seeded.project
    # A CRF with fewer L-BFGS iterations keeps the worker's nine models quick; the curves' shape is not tested.
    project.tagger = {"kind": "crf", "params": {"max_iterations": 30}}
    project.save()
    worker = Worker(queue=settings.CELERY_TASK_DEFAULT_QUEUE, data_dir=tmp_path / "data",
                    log_path=tmp_path / "worker.log", processes=1).start()
    try:
        page = new_page()
        open_dashboard(page, live_server.url, seeded.lead.username, project.pk)
        assert page.locator("#no-simulation").is_visible()
        assert traces(page, "simulation") == []
        # Random, LCUB_6 and ROI_2 are ticked by default.
        assert page.locator('#simulation-form input[name="strategies"]:checked').evaluate_all(
            "inputs => inputs.map(i => i.value)") == ["random", "LCUB_6", "ROI_2"]
        page.fill("#id_batch_sizes", "5")
        page.fill("#id_initial", "5")
        page.fill("#id_iterations", "2")
        page.fill("#id_runs", "1")
        page.locator("#simulation-form").scroll_into_view_if_needed()
        screenshot(page, "dashboard-07-simulation-form")
        page.click("#simulation-form button[type=submit]")
        page.wait_for_url("**/dashboard/?simulation=*")
        run = SimulationRun.objects.get(project=project)
        assert (run.strategies, run.batch_sizes, run.initial, run.iterations, run.runs) == (
            ["random", "LCUB_6", "ROI_2"], [5], 5, 2, 1)
        page.wait_for_selector("#curve-chart .main-svg")
        # From here on the page is never reloaded: the progress and the results arrive into it.
        page.evaluate("""() => {
            window.__sameDocument = true;
            window.__progress = [];
            setInterval(() => {
                const bar = document.querySelector('#simulation-run progress');
                const last = window.__progress[window.__progress.length - 1];
                if (bar && bar.value !== last) window.__progress.push(bar.value);
            }, 50);
        }""")
        page.locator("#simulation").scroll_into_view_if_needed()
        screenshot(page, "dashboard-08-simulation-queued")
        page.wait_for_selector('#simulation-run[data-status="done"]', timeout=120_000)
        wait_for_true(page, f"document.getElementById('curve-chart').dataset.overlay === '{run.pk}:5'")
        assert page.evaluate("window.__sameDocument") is True
        progress = page.evaluate("window.__progress")
        assert progress[-1] == 100 and progress == sorted(progress)
        assert "done: 9 models trained and measured" in page.inner_text("#simulation-progress")

        run.refresh_from_db()
        assert run.status == SimulationRun.Status.DONE
        curves = run.results["5"]["strategies"]
        simulated = traces(page, "simulation")
        assert [t["strategy"] for t in simulated] == ["random", "LCUB_6", "ROI_2"]
        for trace in simulated:
            assert trace["x"] == curves[trace["strategy"]]["docs"]
            assert trace["y"] == pytest.approx(curves[trace["strategy"]]["f1_mean"], abs=1e-12)
        assert traces(page, "band") == []  # one run: no spread to draw
        for name, curve in curves.items():
            cells = [page.inner_text(f'#docs-to-table tr[data-strategy="{name}"] td[data-target="{i}"]')
                     for i in range(len(DOCS_TO_TARGETS))]
            assert cells == [str(curve["docs_to"][f"{t:g}"]) if curve["docs_to"][f"{t:g}"] is not None
                             else "not reached" for t in DOCS_TO_TARGETS]
        screenshot(page, "dashboard-09-simulation-done")
        page.locator("#curve").scroll_into_view_if_needed()
        screenshot(page, "dashboard-10-simulation-overlaid")
        assert page.script_errors == []
    finally:
        worker.stop()
