"""The "People and costs" page and the release planner against the database of a seeded project: the
figures shown are those the logged records and model versions give, the plan is what ``plan()`` makes of
the same inputs, bad parameters are explained, and only a project's leads and admins see either page."""
from __future__ import annotations

import statistics

import pytest
from django.db import transaction
from django.test import Client, override_settings

from annotator.models import Annotation, Document
from annotator.selectors import gold_documents
from deid.core.release_planner import AttackerParameters, PublisherParameters, fit_learning_curve, plan
from learning.core.costs import fit_costs
from learning.models import ModelVersion
from tests.seeding import seed_dashboard_project

pytestmark = pytest.mark.django_db

PASSWORD = "pw-people"


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker):
    """One seeded project for the module (about 10 s), in a transaction rolled back at the end: each test
    runs in a savepoint inside it, and nothing the seeding queues (a retrain) is ever committed."""
    fast_hashing = override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
    with django_db_blocker.unblock(), transaction.atomic():
        with fast_hashing:
            seeded = seed_dashboard_project(name="People", password=PASSWORD, batches=3, batch_size=6,
                                            simulate=False)
        yield seeded
        transaction.set_rollback(True)


@pytest.fixture
def lead(seeded) -> Client:
    client = Client()
    client.force_login(seeded.lead)
    return client


def human_records(project) -> list[Annotation]:
    return list(Annotation.objects.filter(document__project=project, document__role="pool", state="submitted",
                                          source="human").select_related("annotator", "document"))


def average_record_seconds(records) -> float:
    """The overall fit (seconds ≈ a·tokens + b·FN + c·FP) read at the mean record."""
    fit = fit_costs([r.document.n_tokens for r in records], [r.fn_fixes for r in records],
                    [r.fp_fixes for r in records], [r.active_seconds for r in records])
    return fit.predict(statistics.mean(r.document.n_tokens for r in records),
                       statistics.mean(r.fn_fixes for r in records), statistics.mean(r.fp_fixes for r in records))


def expected_plan(project, *, hourly_rate=40.0, attacker=None, max_documents="pool", **publisher):
    """The plan worked out here from the database, the way the planner page says it works it out."""
    versions = list(ModelVersion.objects.filter(project=project, status="ready").order_by("created_at"))
    sizes = [v.n_documents for v in versions]
    cost = average_record_seconds(human_records(project)) / 3600 * hourly_rate
    gold = gold_documents(project=project)
    annotated = Document.objects.filter(project=project, role="pool", annotations__state="submitted").distinct().count()
    return cost, plan(
        precision_curve=fit_learning_curve(sizes, [v.metrics["entity"]["p"] for v in versions]),
        recall_curve=fit_learning_curve(sizes, [v.metrics["entity"]["r"] for v in versions]),
        annotated_documents=annotated,
        phi_per_document=statistics.mean(len(d.spans) for d in gold),
        documents_shared=Document.objects.filter(project=project).count(),
        publisher=PublisherParameters(**{"budget": 2000, "cost_per_document": cost, "fine_per_false_claim": 1,
                                         **publisher}),
        attacker=attacker or AttackerParameters(budget=2000, cost_per_document=10, value_per_identifier=5,
                                                fine_per_false_claim=10),
        max_documents=Document.objects.filter(project=project, role="pool").count() if max_documents == "pool"
        else max_documents,
    )


# ------------------------------------------------------------------------------------------- people


def test_people_rows_are_the_logged_records(seeded, lead):
    response = lead.get(f"/projects/{seeded.project.pk}/people/")
    assert response.status_code == 200
    records = human_records(seeded.project)
    assert len(records) == 18
    rows = {row.name: row for row in response.context["annotators"]}
    assert set(rows) == {"people-ana", "people-bea"}
    for name, row in rows.items():
        own = [r for r in records if r.annotator.username == name]
        seconds = [r.active_seconds for r in own]
        assert row.records == len(own) == 9
        assert row.active_hours == pytest.approx(sum(seconds) / 3600)
        assert row.records_per_hour == pytest.approx(9 / (sum(seconds) / 3600))
        assert row.minutes_per_record == pytest.approx(statistics.mean(seconds) / 60)
        assert row.median_minutes_per_record == pytest.approx(statistics.median(seconds) / 60)
        assert row.fn_fixes_per_record == pytest.approx(statistics.mean(r.fn_fixes for r in own))
        assert row.fp_fixes_per_record == pytest.approx(statistics.mean(r.fp_fixes for r in own))
        assert row.relabels_per_record == pytest.approx(statistics.mean(r.relabels for r in own))
        assert row.fit is not None and row.fit.n_records == 9  # nine records: a fit of one's own
    overall = response.context["overall"]
    assert overall.records == 18
    assert overall.records_per_hour == pytest.approx(18 / (sum(r.active_seconds for r in records) / 3600))
    # Seeded at 0.15 s per word (~1.3 tokens a word) and 9 s per missed PHI: the fit finds that order.
    assert 0.05 < overall.fit.seconds_per_token < 0.3 and overall.fit.se_per_token > 0
    assert 0.5 < overall.fit.r2 <= 1
    seconds = average_record_seconds(records)
    cost = response.context["cost"]
    assert cost.seconds == pytest.approx(seconds)
    assert cost.money == pytest.approx(seconds / 3600 * 40)
    assert cost.money_se == pytest.approx(statistics.stdev(r.active_seconds for r in records) / 18 ** 0.5 / 3600 * 40)
    html = response.content.decode()
    assert f'data-kpi="cost">{seconds / 3600 * 40:.2f}<' in html
    assert f"{overall.fit.seconds_per_token:.3f} <span class=\"se\">± {overall.fit.se_per_token:.3f}</span>" in html
    assert "vendor/plotly/plotly.min.js" in html and 'id="people-data"' in html


def test_people_hourly_rate_scales_the_cost_and_a_bad_rate_is_explained(seeded, lead):
    url = f"/projects/{seeded.project.pk}/people/"
    seconds = average_record_seconds(human_records(seeded.project))
    response = lead.get(url, {"rate": "90"})
    assert response.context["cost"].money == pytest.approx(seconds / 3600 * 90)
    assert response.context["overall"].average_record_cost == pytest.approx(seconds / 3600 * 90)
    for bad in ("-3", "abc", "nan"):
        response = lead.get(url, {"rate": bad})
        assert response.status_code == 200
        assert response.context["form"].errors["rate"]
        assert response.context["cost"].money == pytest.approx(seconds / 3600 * 40)  # the default meanwhile
        assert "the figures below use 40.00" in response.content.decode()


# ------------------------------------------------------------------------------------------ planner


def shown(response) -> dict:
    result = response.context["result"]
    return {key: outcome.best_alpha for key, outcome in result.plan.outcomes.items()}


def test_default_plan_is_plan_of_the_measured_inputs(seeded, lead):
    response = lead.get(f"/projects/{seeded.project.pk}/release-planner/")
    assert response.status_code == 200
    result = response.context["result"]
    cost, expected = expected_plan(seeded.project)
    assert result.cost_source == "measured" and result.cost_per_document == pytest.approx(cost)
    assert result.phi_source == "measured"
    assert (result.documents_shared, result.max_documents, result.annotated_documents) == (58, 48, 26)
    assert result.plan.alphas == expected.alphas == list(range(26, 49))
    assert result.plan.precision == pytest.approx(expected.precision)
    assert result.plan.recall_upper == pytest.approx(expected.recall_upper)
    assert shown(response) == {key: o.best_alpha for key, o in expected.outcomes.items()}
    for key, outcome in expected.outcomes.items():
        assert result.plan.outcomes[key].publisher_payoffs == pytest.approx(outcome.publisher_payoffs)
        assert result.plan.outcomes[key].attacker_payoffs == pytest.approx(outcome.attacker_payoffs)
    assert result.plan.recommendation == expected.recommendation
    html = response.content.decode()
    assert expected.recommendation.replace("'", "&#x27;") in html
    assert f'data-kpi="cost">{cost:.2f}<' in html
    for key, outcome in expected.outcomes.items():
        best = "" if outcome.best_alpha is None else str(outcome.best_alpha)
        assert f'data-policy="{key}" data-best-alpha="{best}"' in html
    assert 'id="planner-data"' in html


def test_parameters_from_the_query_string_are_played(seeded, lead):
    url = f"/projects/{seeded.project.pk}/release-planner/"
    attacker = AttackerParameters(budget=300, cost_per_document=4, value_per_identifier=20, fine_per_false_claim=30)
    response = lead.get(url, {"attacker_budget": "300", "attacker_cost": "4", "value_per_identifier": "20",
                              "attacker_fine": "30", "hourly_rate": "60", "max_documents": ""})
    cost, expected = expected_plan(seeded.project, hourly_rate=60, attacker=attacker, max_documents=None)
    result = response.context["result"]
    assert result.cost_per_document == pytest.approx(cost)
    assert result.plan.alphas[-1] == int(2000 // cost)  # no cap: as many as the budget pays for
    assert shown(response) == {key: o.best_alpha for key, o in expected.outcomes.items()}
    assert result.plan.recommendation == expected.recommendation

    # An entered c_p and i replace the measured ones.
    response = lead.get(url, {"cost_per_document": "12.5", "phi_per_document": "10"})
    result = response.context["result"]
    assert (result.cost_source, result.cost_per_document, result.phi_source, result.phi_per_document) == (
        "entered", 12.5, "entered", 10.0)
    assert result.plan.alphas == list(range(26, 49))  # 2000 / 12.5 = 160 > 48 in the pool

    # Almost free annotation and no cap: α stops at a size that keeps the grid's arithmetic sound.
    response = lead.get(url, {"cost_per_document": "1e-9", "max_documents": ""})
    assert response.context["result"].plan.alphas[-1] == 10_000_000


@pytest.mark.parametrize(("query", "message"), [
    ({"publisher_budget": "-5"}, "greater than or equal to 0"),
    ({"attacker_cost": "abc"}, "Enter a number."),
    ({"hourly_rate": "nan"}, "Enter a number."),
    ({"documents_shared": "0"}, "greater than or equal to 1"),
    ({"value_per_identifier": "1e300"}, "less than or equal to"),
    ({"publisher_budget": "10"}, "raise the budget or lower the cost per document"),
    ({"max_documents": "5"}, "Documents available to annotate (5) cannot be fewer than the 26 already annotated."),
    ({"cost_per_document": "0", "max_documents": ""}, "the budget sets no limit"),
])
def test_bad_parameters_are_explained_not_crashed_on(seeded, lead, query, message):
    response = lead.get(f"/projects/{seeded.project.pk}/release-planner/", query)
    assert response.status_code == 200
    assert response.context["result"] is None
    html = response.content.decode()
    assert 'id="planner-errors"' in html
    assert message in html.replace("&#x27;", "'")
    assert 'id="planner-data"' not in html


# ------------------------------------------------------------------------- empty projects, access


def test_a_project_without_enough_models_says_so(users, projects):
    project = projects["A"]
    for n, (p, r) in ((5, (0.8, 0.7)), (10, (0.85, 0.8)), (10, (0.86, 0.79))):
        ModelVersion.objects.create(project=project, tagger_kind="crf", status="ready", n_documents=n,
                                    metrics={"entity": {"p": p, "r": r, "f1": 0}})
    ModelVersion.objects.create(project=project, tagger_kind="crf", status="failed", n_documents=20, metrics={})
    client = Client()
    client.force_login(users["lead"])
    response = client.get(f"/projects/{project.pk}/release-planner/", {"value_per_identifier": "-1"})
    assert response.status_code == 200
    assert response.context["result"] is None
    html = response.content.decode()
    assert "Not enough of a learning curve yet" in html
    assert response.context["inputs"].curve_sizes == 2  # 5 and 10 documents; the failed model does not count
    assert "at least <b>3</b> different numbers of documents" in html
    response = client.get(f"/projects/{project.pk}/people/")
    assert response.status_code == 200
    assert response.context["overall"] is None
    assert "No timed records yet" in response.content.decode()


@pytest.mark.parametrize("page", ["people", "release-planner"])
def test_only_leads_and_admins_see_the_pages(users, projects, page):
    url = f"/projects/{projects['A'].pk}/{page}/"
    assert Client().get(url).status_code == 302  # to the login page
    expected = {"outsider": 404, "annotator": 403, "lead": 200, "admin": 200}
    for role, status in expected.items():
        client = Client()
        client.force_login(users[role])
        assert client.get(url).status_code == status, role
