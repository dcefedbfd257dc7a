"""The agreement page in a real browser: its figures are the database's, its charts render, and the record in
disagreement is the one marked."""
from __future__ import annotations

import pytest

from learning.selectors.agreement import project_agreement
from tests.browser.conftest import CHROMIUM, log_in, screenshot, seed_double_annotation, wait_for_true

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]
NAME, DATE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS"
RECORDS = [  # (name, text, ana's spans, olga's spans)
    ("r1", "Ana Ruiz, visto el 17/03/2009.", [(0, 8, NAME), (19, 29, DATE)], [(0, 3, NAME), (19, 29, DATE)]),
    ("r2", "Luis Gil, visto el 18/03/2009.", [(0, 8, NAME), (19, 29, DATE)], [(0, 8, NAME), (19, 29, DATE)]),
    ("r3", "Eva Sanz, vista el 19/03/2009.", [(0, 8, NAME)], [(0, 8, NAME), (19, 29, DATE)]),
]


def test_the_agreement_page_shows_the_databases_figures_and_draws_its_charts(live_server, new_page):
    project = seed_double_annotation(name="Agreement", prefix="agree", records=RECORDS)
    expected = project_agreement(project=project)
    page = new_page()
    log_in(page, live_server.url, "agree-lead", f"/projects/{project.pk}/agreement/")
    try:
        wait_for_true(page, "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2", timeout=15_000)
    finally:
        screenshot(page, "agreement")
    overall = expected["summary"]["overall"]
    for key in ("strict_f1", "relaxed_f1", "kappa", "alpha"):
        assert page.locator(f'[data-kpi="{key}"]').inner_text() == f"{overall[key]:.3f}", key
    # r1: Ana against Ana Ruiz; r3: a date one of them missed; r2 in full agreement
    assert page.locator('[data-kpi="records"]').inner_text() == "3" and expected["summary"]["unanimous"] == 1
    marked = [row.get_attribute("data-document") for row in page.locator("#agreement-records tr.disagreement").all()]
    assert sorted(int(d) for d in marked) == sorted(r["id"] for r in expected["records"] if not r["unanimous"])
    assert len(marked) == 2
    date_row = page.locator(f'#agreement-labels tr[data-label="{DATE}"] td')
    assert date_row.nth(1).inner_text() == "5" and date_row.nth(2).inner_text() == f"{4 / 5:.3f}"
    assert page.script_errors == []
