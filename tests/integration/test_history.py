"""A project annotated batch by batch through the real services: one model version per retrain, the costs
fitted from the logged times, and a simulation on its own gold."""
from __future__ import annotations

import pytest

from learning.selectors.measured_costs import cost_fits
from learning.models import ModelVersion
from tests.seeding import SECONDS_PER_TOKEN, seed_dashboard_project

pytestmark = pytest.mark.django_db


def test_a_seeded_history():
    seeded = seed_dashboard_project(password="pw", batches=3, batch_size=6)
    versions = list(ModelVersion.objects.filter(project=seeded.project).order_by("created_at"))
    assert [v.n_documents for v in versions] == [8, 14, 20, 26]
    assert all(v.metrics["entity"]["f1"] > 0.5 for v in versions)
    assert "mcnemar_vs_previous" not in versions[0].metrics
    assert versions[-1].metrics["mcnemar_vs_previous"]["previous"] == versions[-2].pk
    assert versions[-1].annotator_hours > versions[1].annotator_hours > 0

    fits = cost_fits(project=seeded.project)
    overall = fits["overall"]
    assert fits["records"] == 18 and overall.n_records == 18
    # Times were made as ~1.3 tokens per word × 0.15 s + 9 s per FN fix (+5 s, ±10 %): the fit finds the
    # per-token cost near what went in (the tokenizer's count differs from the word count used).
    assert overall.seconds_per_token == pytest.approx(SECONDS_PER_TOKEN, rel=0.5)
    assert set(fits["annotators"]) == {"dashboard-ana", "dashboard-bea"}

    results = seeded.simulation.results["5"]
    assert seeded.simulation.status == "done"
    assert set(results["strategies"]) == {"random", "LCUB_6"}
    assert results["strategies"]["random"]["docs"] == [5, 10, 15, 20]
