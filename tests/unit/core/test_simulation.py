import numpy as np
import pytest

from learning.core.simulation import aulc, docs_to, plot_results, simulate
from learning.core.taggers.unigram import UnigramTagger
from corpus.text import tokenize
from corpus.types import Document, Span

NAMES = ["Juan", "Ana", "Luis", "Eva", "Rosa", "Pablo", "Marta", "Jorge", "Lucia", "Sara", "Tomas", "Irene"]
CITIES = ["Madrid", "Lugo", "Soria", "Cadiz", "Vigo", "Avila", "Teruel"]


def corpus(n, offset=0):
    docs = []
    for i in range(n):
        name = NAMES[(i + offset) % len(NAMES)]
        city = CITIES[(i * 3 + offset) % len(CITIES)]
        text = f"{name} vive en {city} desde hace {i} años."
        spans = (Span(0, len(name), "NAME"), Span(text.index(city), text.index(city) + len(city), "LOC"))
        docs.append(Document(text, spans, f"d{offset}-{i}"))
    return docs


TRAIN = corpus(30)
EVAL = corpus(12, offset=5)


def run(strategies=("random", "LCUB_6"), **kw):
    args = dict(
        tagger_factory=UnigramTagger, strategies=list(strategies), batch=3, initial=2, iterations=4, runs=2, seed=7
    )
    args.update(kw)
    return simulate(TRAIN, EVAL, **args)


def test_aulc_and_docs_to_by_hand():
    assert aulc([10, 20, 30], [0.5, 0.7, 0.9]) == pytest.approx((10 * 0.6 + 10 * 0.8) / 20)
    assert aulc([10], [0.4]) == pytest.approx(0.4)
    assert docs_to([10, 20, 30], [0.5, 0.85, 0.9], 0.8) == 20
    assert docs_to([10, 20, 30], [0.5, 0.85, 0.9], 0.9) == 30
    assert docs_to([10, 20, 30], [0.5, 0.85, 0.9], 0.95) is None


def test_curve_shape_and_summary():
    result = run()
    assert set(result["strategies"]) == {"random", "LCUB_6"}
    for curve in result["strategies"].values():
        assert curve["docs"] == [2, 5, 8, 11, 14]
        assert len(curve["f1_mean"]) == len(curve["f1_sd"]) == len(curve["recall_mean"]) == 5
        assert set(curve["docs_to"]) == {"0.8", "0.85", "0.9"}
        assert set(curve["per_type_f1"]) == {"LOC", "NAME"}
        assert curve["aulc"] == pytest.approx(aulc(curve["docs"], curve["f1_mean"]))
        assert curve["final"]["f1"] == curve["f1_mean"][-1]
        f1 = np.array(curve["runs"]["f1"])
        np.testing.assert_allclose(f1.mean(axis=0), curve["f1_mean"])
        np.testing.assert_allclose(f1.std(axis=0, ddof=1), curve["f1_sd"])
        for order in curve["runs"]["selected"]:
            assert len(order) == 14 and len(set(order)) == 14
    assert result["strategies"]["random"]["aulc_vs_random"] == 1.0
    lcub = result["strategies"]["LCUB_6"]
    assert lcub["aulc_vs_random"] == pytest.approx(lcub["aulc"] / result["strategies"]["random"]["aulc"])


def test_same_initial_batch_for_every_strategy_and_reproducible():
    result = run(strategies=("random", "lc-sum", "ROI_2"))
    firsts = {name: [order[:2] for order in c["runs"]["selected"]] for name, c in result["strategies"].items()}
    assert firsts["random"] == firsts["lc-sum"] == firsts["ROI_2"]
    assert firsts["random"][0] != firsts["random"][1]  # runs differ
    f1_first = {name: [f[0] for f in c["runs"]["f1"]] for name, c in result["strategies"].items()}
    assert f1_first["random"] == f1_first["lc-sum"] == f1_first["ROI_2"]
    again = run(strategies=("random", "lc-sum", "ROI_2"))
    assert again["strategies"] == result["strategies"]
    # A strategy's curve does not depend on its neighbours.
    alone = run(strategies=("lc-sum",))["strategies"]["lc-sum"]
    beside = dict(result["strategies"]["lc-sum"])
    del beside["aulc_vs_random"]
    assert alone == beside


def test_pool_running_out_and_progress():
    seen = []
    result = simulate(
        TRAIN[:8], EVAL, tagger_factory=UnigramTagger, strategies=["random"], batch=4, initial=3,
        iterations=10, runs=1, seed=0, progress=seen.append,
    )
    assert result["strategies"]["random"]["docs"] == [3, 7, 8]
    assert result["strategies"]["random"]["f1_sd"] == [0.0, 0.0, 0.0]
    assert [p["done"] for p in seen] == [1, 2, 3] and seen[-1]["total"] == 3
    assert seen[-1]["docs"] == 8


class HardEasyTagger:
    """Unsure (0.5) on every token of documents named 'hard…', sure elsewhere; predicts nothing."""

    labels_ = ["O", "B-X"]

    def fit(self, docs):
        return self

    def predict_marginals(self, docs):
        rows = {True: [0.5, 0.5], False: [1.0, 0.0]}
        return [np.array([rows[d.name.startswith("hard")]] * len(tokenize(d.text))) for d in docs]

    def predict(self, docs):
        return [[] for _ in docs]


def test_uncertainty_strategy_takes_the_unsure_documents_first():
    pool = [Document(f"easy text {i}", (), f"easy{i}") for i in range(10)]
    pool += [Document(f"hard text {i}", (), f"hard{i}") for i in range(4)]
    result = simulate(
        pool, [Document("x", ())], tagger_factory=HardEasyTagger, strategies=["LCUB_6", "random"],
        batch=2, initial=2, iterations=2, runs=3, seed=1,
    )
    for order in result["strategies"]["LCUB_6"]["runs"]["selected"]:
        hard_left = {i for i in range(10, 14) if i not in order[:2]}
        assert set(order[2 : 2 + len(hard_left)]) == hard_left
    random_orders = result["strategies"]["random"]["runs"]["selected"]
    assert any(set(order[2:6]) != set(range(10, 14)) for order in random_orders)


def test_errors():
    with pytest.raises(ValueError, match="fewer than the initial batch"):
        simulate(TRAIN[:2], EVAL, tagger_factory=UnigramTagger, strategies=["random"], batch=1, initial=3,
                 iterations=1, runs=1, seed=0)
    with pytest.raises(ValueError, match="once"):
        run(strategies=("LCUB_6", "lcub_6"))


def test_plot_results(tmp_path):
    path = tmp_path / "curves.png"
    plot_results(run(), str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
