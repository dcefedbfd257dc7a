"""The project's CRF trainer: its statistics, its gradient, its optimum against crfsuite's, warm starts."""
from __future__ import annotations

import copy
import itertools
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from corpus.bio import spans_to_bio
from learning.core.features import FeatureCache
from learning.core.lexicon import token_spans
from learning.core.marginals import chain_backward, chain_forward, chain_statistics
from learning.core.taggers.base import labels_from_tags
from learning.core.taggers.crf import CRFTagger
from learning.core.taggers.crf_lbfgs import (
    FREQUENT_ATTRIBUTE_TOKENS, CRFWeights, Objective, carried_steps, columns_losing_weights, feature_expectations,
    fit_weights, known_start, label_ids, label_ids_of_runs, model_expectations, owlqn, training_set,
    training_set_of_runs, warm_start,
)
from corpus.types import Document, Span

from learning.core._compat.crfsuite import model_file_bytes

from .meddocan import read_split
from .test_crf import synthetic_docs


def brute_force(unary: np.ndarray, transition: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """log Z, marginals and summed pairwise marginals of one short chain by enumerating every path."""
    n_pos, n_labels = unary.shape
    paths = list(itertools.product(range(n_labels), repeat=n_pos))
    scores = np.array([unary[np.arange(n_pos), p].sum() + sum(transition[a, b] for a, b in zip(p, p[1:]))
                       for p in paths])
    log_z = float(np.log(np.exp(scores - scores.max()).sum()) + scores.max())
    prob = np.exp(scores - log_z)
    post = np.zeros((n_pos, n_labels))
    edges = np.zeros((n_labels, n_labels))
    for p, q in zip(paths, prob):
        post[np.arange(n_pos), p] += q
        for a, b in zip(p, p[1:]):
            edges[a, b] += q
    return log_z, post, edges


def time_major(unary: np.ndarray) -> np.ndarray:
    """Sequences x positions x labels laid out as the chain statistics read them: positions x sequences."""
    return np.ascontiguousarray(np.swapaxes(unary, 0, 1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chain_statistics_equal_enumeration_over_padded_batches(dtype):
    rng = np.random.default_rng(0)
    lengths = np.array([4, 1, 3, 2])
    unary = rng.normal(0, 2, size=(4, 4, 3))  # sequence, position, label
    transition = rng.normal(0, 2, size=(3, 3))
    log_z, post, edges = chain_statistics(time_major(unary).astype(dtype), lengths, transition)
    want_edges = np.zeros((3, 3))
    tolerance = 1e-9 if dtype == np.float64 else 2e-5
    for i, n in enumerate(lengths):
        z, p, e = brute_force(unary[i, :n], transition)
        assert log_z[i] == pytest.approx(z, rel=tolerance)
        np.testing.assert_allclose(post[:n, i], p, atol=tolerance * 10)
        assert not post[n:, i].any()
        want_edges += e
    np.testing.assert_allclose(edges, want_edges, atol=tolerance * 10)


def test_chain_statistics_survive_extreme_scores():
    rng = np.random.default_rng(1)
    unary = rng.normal(0, 1, size=(2, 3, 3))
    transition = np.array([[0.0, -2000.0, 5.0], [3.0, 0.0, -900.0], [1.0, 1.0, 0.0]])
    unary[1, 1] = [-500.0, 0.0, 1.0]  # far below the others, the first label is no shift to exponentiate by
    log_z, post, edges = chain_statistics(time_major(unary), np.array([3, 3]), transition)
    for i in range(2):
        z, p, e = brute_force(unary[i], transition)
        assert log_z[i] == pytest.approx(z)
        np.testing.assert_allclose(post[:, i], p, atol=1e-9)
    assert np.isfinite(edges).all() and edges.sum() == pytest.approx(4.0)


def test_scores_far_above_the_first_labels_are_scaled_by_their_rows_maximum_not_sent_to_log_space():
    rng = np.random.default_rng(2)
    unary = rng.normal(0, 1, size=(2, 4, 3))
    unary[0, 2] = [-100.0, 0.0, 1.0]  # e^101 overflows float32
    transition = rng.normal(0, 1, size=(3, 3))
    forward = chain_forward(time_major(unary).astype(np.float32), np.array([4, 3]), transition)
    assert not forward.bad.any()  # the scaled recursion held
    log_z, post, _ = chain_backward(forward)
    for i, n in enumerate([4, 3]):
        z, p, _ = brute_force(unary[i, :n], transition)
        assert log_z[i] == pytest.approx(z, rel=1e-5)
        np.testing.assert_allclose(post[:n, i], p, atol=1e-5)


def test_the_forward_half_alone_gives_log_z_even_where_the_scaled_recursion_underflows():
    rng = np.random.default_rng(3)
    unary = rng.normal(0, 1, size=(3, 3, 3))
    # From label 0 only label 1 may follow; the second sequence starts 800 nats surer of label 0 than of the
    # others, and its label 1 then scores 3000 nats below the rest: the scaled forward step underflows to zero
    # there, and log Z is recomputed in log space.
    transition = np.array([[-5000.0, 0.0, -5000.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    unary[1, 0] = [800.0, 0.0, 0.0]
    unary[1, 1, 1] = -3000.0
    forward = chain_forward(time_major(unary), np.array([3, 3, 2]), transition)
    log_z, post, _ = chain_statistics(time_major(unary), np.array([3, 3, 2]), transition)
    assert forward.bad.tolist() == [False, True, False]
    for i, n in enumerate([3, 3, 2]):
        z, p, _ = brute_force(unary[i, :n], transition)
        assert forward.log_z[i] == pytest.approx(z) and log_z[i] == pytest.approx(z)
        np.testing.assert_allclose(post[:n, i], p, atol=1e-9)


def problem(docs, cache=None, scope=None, labels=None):
    tagger = CRFTagger(feature_cache=cache or FeatureCache(), vocabulary_scope=scope)
    feats = tagger.features(docs)
    tags = [spans_to_bio(f.tokens, d.spans)[0] for d, f in zip(docs, feats)]
    labels = labels_from_tags(tags) if labels is None else labels
    return training_set(feats, label_ids(tags, labels), labels)


def test_label_ids_from_the_gold_runs_are_those_of_the_bio_tags():
    docs = read_split("train")[:30]
    tagger = CRFTagger(feature_cache=FeatureCache())
    feats = tagger.features(docs)
    tags = [spans_to_bio(f.tokens, d.spans)[0] for d, f in zip(docs, feats)]
    runs = [token_spans(f.tokens, d.spans) for d, f in zip(docs, feats)]
    known = ["O", "B-ZZZ", "I-ZZZ"]  # a label the documents do not have, kept (a model's labels)
    labels, ids = label_ids_of_runs([f.n_tokens for f in feats], runs, known)
    assert labels == labels_from_tags(tags + [known])
    np.testing.assert_array_equal(ids, label_ids(tags, labels))
    assert any(end - first == 1 for doc_runs in runs for first, end, _ in doc_runs)  # B- alone, no I-


def test_gradient_equals_finite_differences_on_meddocan_notes():
    data = problem(read_split("train")[:3])
    objective = Objective(data, c2=0.05, dtype=np.float64)
    rng = np.random.default_rng(2)
    w = rng.normal(0, 0.3, data.n_features)
    _, grad = objective(w)
    n_state = data.feature_rows.shape[0]
    picks = np.concatenate([rng.choice(n_state, 12, replace=False), n_state + rng.choice(len(data.labels) ** 2, 6)])
    for k in picks:
        step = np.zeros_like(w)
        step[k] = 1e-5
        numeric = (objective(w + step)[0] - objective(w - step)[0]) / 2e-5
        assert grad[k] == pytest.approx(numeric, rel=1e-4, abs=1e-5), k


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_objective_on_several_threads_is_the_same_to_the_last_bit(dtype):
    data = problem(read_split("train")[:40])
    assert len(data.buckets) > 3
    w = np.random.default_rng(5).normal(0, 0.3, data.n_features)
    one = Objective(data, c2=0.05, dtype=dtype)
    three = Objective(data, c2=0.05, dtype=dtype, threads=3)
    try:
        assert len(three._blocks) == 3 and len(three._columns) == 3
        value, grad = one(w)
        threaded_value, threaded_grad = three(w)
    finally:
        three.close()
    assert threaded_value == value
    assert np.array_equal(threaded_grad, grad)


def test_the_observed_counts_are_the_features_crfsuite_would_make():
    docs = synthetic_docs(6, seed=3)
    data = problem(docs)
    # Every (attribute, label) pair occurs in the training tokens; the counts add up to the attribute entries.
    assert (data.observed > 0).all()
    assert data.observed.sum() == data.matrix.nnz
    n_chains = sum(1 for positions, inside, lengths in data.buckets for _ in lengths)
    assert data.observed_transitions.sum() == data.matrix.shape[0] - n_chains


def crfsuite_objective(data, tagger: CRFTagger) -> float:
    w = warm_start(data, CRFWeights(tagger.attributes_, tagger.labels_, tagger.state_weights_,
                                    tagger.transition_weights_))
    value, _ = Objective(data, tagger.c2, dtype=np.float64)(w)
    return value + tagger.c1 * float(np.abs(w).sum())


def test_a_cold_fit_reaches_crfsuites_optimum_and_weights():
    docs = read_split("train")[:12]
    cache = FeatureCache()
    # Both trainers on the cached features alone (``problem``'s): without the gold lexicon's marks.
    reference = CRFTagger(c1=0.1, c2=0.05, max_iterations=400, epsilon=1e-8, gold_lexicon=False,
                          feature_cache=cache).fit(docs)
    data = problem(docs, cache)
    ours = fit_weights(data, c1=0.1, c2=0.05, max_iterations=400, epsilon=1e-10, dtype=np.float64)
    theirs = crfsuite_objective(data, reference)
    assert ours.objective == pytest.approx(theirs, rel=2e-4)
    # The objective is strictly convex (c2 > 0): the same optimum means the same weights.
    mine = warm_start(data, ours)
    crfsuite = warm_start(data, CRFWeights(reference.attributes_, reference.labels_, reference.state_weights_,
                                           reference.transition_weights_))
    assert np.corrcoef(mine, crfsuite)[0, 1] > 0.995
    assert np.abs(mine - crfsuite).max() < 0.1 * np.abs(crfsuite).max()
    both = (mine != 0) | (crfsuite != 0)
    assert ((mine != 0) == (crfsuite != 0))[both].mean() > 0.9  # L1 zeroes (nearly) the same weights


def test_owlqn_solves_a_lasso_exactly():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(40, 10))
    truth = np.array([3.0, 0, 0, -2.0, 0, 0, 0, 1.5, 0, 0])
    b = a @ truth + rng.normal(0, 0.01, 40)

    def smooth(x):
        r = a @ x - b
        return 0.5 * float(r @ r), a.T @ r

    x, value, iterations, _, _ = owlqn(smooth, np.zeros(10), c1=1.0, max_iterations=500, epsilon=1e-14)
    # Optimality of the lasso: |gradient| <= c1 where x is zero, gradient = -c1 sign(x) elsewhere.
    grad = smooth(x)[1]
    assert np.all(np.abs(grad[x == 0]) <= 1.0 + 1e-5)
    np.testing.assert_allclose(grad[x != 0], -np.sign(x[x != 0]), atol=1e-5)
    assert set(np.flatnonzero(x)) == {0, 3, 7}


def test_a_warm_fit_given_the_last_fits_step_scale_needs_no_backtracking_to_start():
    docs = synthetic_docs(8, seed=5)
    cache = FeatureCache()
    first = fit_weights(problem(docs, cache), c1=0.1, c2=0.05, max_iterations=50, dtype=np.float64)
    assert first.step_scale is not None and first.step_scale > 0
    grown = problem(docs + synthetic_docs(2, seed=6), cache)

    def evaluations(scale):
        objective = Objective(grown, 0.05, np.float64)
        x, value, _, _, _ = owlqn(objective, warm_start(grown, first), c1=0.1, max_iterations=3, epsilon=0.0,
                               initial_scale=scale)
        return objective.calls, value

    scaled_calls, scaled_value = evaluations(first.step_scale)
    unit_calls, unit_value = evaluations(None)
    assert scaled_calls == 4  # the start, then one trial per iteration
    assert unit_calls > scaled_calls  # the unit first step overshoots and is halved
    assert scaled_value <= unit_value * 1.001


def test_a_fit_reports_how_many_times_it_evaluated_the_objective():
    data = problem(synthetic_docs(6, seed=3), FeatureCache())
    fitted = fit_weights(data, c1=0.1, c2=0.05, max_iterations=5, epsilon=0.0, dtype=np.float64)
    objective = Objective(data, 0.05, np.float64)
    owlqn(objective, np.zeros(data.n_features), c1=0.1, max_iterations=5, epsilon=0.0)
    assert fitted.iterations == 5
    assert fitted.evaluations == objective.calls >= fitted.iterations + 1  # the start, then each trial step
    # The gradient only where a step is kept, and not at the last point: the start and iterations 1-4.
    assert fitted.gradients == objective.gradients == fitted.iterations


def test_a_value_then_its_gradient_is_the_objective_called_whole():
    data = problem(synthetic_docs(6, seed=3), FeatureCache())
    objective = Objective(data, 0.05, np.float64)
    rng = np.random.default_rng(6)
    w, other = rng.normal(0, 0.3, data.n_features), rng.normal(0, 0.3, data.n_features)
    value, grad = objective(w)
    objective.value(other)  # a trial step given up: its gradient is never taken
    assert objective.value(w) == value
    np.testing.assert_array_equal(objective.gradient(), grad)
    with pytest.raises(RuntimeError):
        objective.gradient()  # once per value


def test_in_single_precision_the_frequent_attributes_counts_are_summed_in_runs_in_double_precision():
    data = problem(read_split("train")[:150])
    held = np.bincount(data.matrix.indices, minlength=data.matrix.shape[1])
    assert held.max() > 40 * FREQUENT_ATTRIBUTE_TOKENS  # sums of tens of thousands of marginals
    w = np.random.default_rng(3).normal(0, 0.3, data.n_features)
    single, exact = Objective(data, 0.05, np.float32)(w)[1], Objective(data, 0.05, np.float64)(w)[1]
    # Summed token after token in single precision, the largest counts were off by 0.03 here.
    assert np.abs(single - exact).max() < 0.01


def test_expectations_put_together_are_the_objective_and_its_gradient():
    docs = read_split("train")[:12]
    data = problem(docs)
    rng = np.random.default_rng(8)
    w = rng.normal(0, 0.3, data.n_features)
    w[: data.feature_rows.shape[0]][rng.random(data.feature_rows.shape[0]) < 0.5] = 0.0  # L1 zeroes many
    objective = Objective(data, c2=0.05, dtype=np.float64)
    value, grad = objective(w)
    whole = objective.expectations(*objective.unpack(w))
    start = known_start(data, w, 0.05, [(1.0, whole)])
    assert start[0] == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(start[1], grad, rtol=1e-9, atol=1e-9)
    # Documents in two parts, and a part given and taken away again: the same sums.
    first, rest = (problem(part, labels=data.labels) for part in (docs[:5], docs[5:]))
    parts = [(1.0, feature_expectations(part, data, w, dtype=np.float64)) for part in (first, rest)]
    start = known_start(data, w, 0.05, [*parts, (-1.0, parts[0][1]), (1.0, parts[0][1])])
    assert start[0] == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(start[1], grad, rtol=1e-7, atol=1e-7)
    # A model's own weights on documents whose features are all the model's give the same expectations as
    # the same weights laid on the training set's features.
    model = CRFWeights(data.attributes, data.labels, *objective.unpack(w))
    by_model = model_expectations(first, model, dtype=np.float64)
    np.testing.assert_allclose(by_model.counts, parts[0][1].counts, rtol=1e-12, atol=1e-12)
    assert by_model.log_z == pytest.approx(parts[0][1].log_z, rel=1e-12)
    # Other labels: nothing to put together.
    other = CRFWeights(data.attributes, data.labels[::-1], *objective.unpack(w))
    assert model_expectations(first, other) is None
    fewer = problem(docs[:2])
    assert fewer.labels != data.labels
    assert known_start(fewer, np.zeros(fewer.n_features), 0.05, [(1.0, whole)]) is None
    assert feature_expectations(fewer, data, w) is None


def test_a_first_pass_given_as_a_function_is_put_together_beside_the_set_up_and_spares_the_first_pass():
    docs = read_split("train")[:10]
    data = problem(docs)
    w = np.random.default_rng(9).normal(0, 0.1, data.n_features)
    objective = Objective(data, c2=0.05)
    first = known_start(data, w, 0.05, [(1.0, objective.expectations(*objective.unpack(w)))])
    objective.close()
    options = dict(c1=0.1, c2=0.05, max_iterations=3, init=w, threads=2)
    given, later, none = (fit_weights(data, start=start, **options) for start in (first, lambda: first, lambda: None))
    plain = fit_weights(data, **options)
    assert given.known_start and later.known_start and not none.known_start and not plain.known_start
    np.testing.assert_array_equal(later.state, given.state)
    assert later.evaluations == given.evaluations == plain.evaluations - 1
    np.testing.assert_array_equal(none.state, plain.state)

    def failing():
        raise RuntimeError("no first pass")

    with pytest.raises(RuntimeError, match="no first pass"):
        fit_weights(data, start=failing, **options)


def _meddocan_grown(cache):
    """A warm-started CRF fitted cold on 100 MEDDOCAN training records then warm on 102, with the 107 it fits on
    next (the five new ones add no label, and the lexicon marks some of the 102 anew)."""
    docs = read_split("train")[:107]
    tagger = CRFTagger(max_iterations=15, feature_cache=cache, warm_start=True).fit(docs[:100])
    return tagger.fit(docs[:102]), docs


@pytest.fixture(scope="module")
def grown():
    cache = FeatureCache()
    first, docs = _meddocan_grown(cache)
    second, _ = _meddocan_grown(cache)  # the same model again, fitted the same way, as a reference
    return first, second, docs


def test_a_warm_fits_first_pass_put_together_from_prepared_expectations_is_its_own(grown):
    tagger, _, docs = grown
    continued = tagger.copy_to_continue()
    assert continued.prepare_next_fit() and not continued.prepare_next_fit()  # prepared once
    assert getattr(tagger.copy_to_continue(), "_prepared", None) is None  # it went with the first copy
    feats, _, runs = continued._training_features(docs)
    before, after = continued._extended
    assert any(after.features[after.index[key]] is not before.features[k] for key, k in before.index.items())
    data = training_set_of_runs(feats, runs, continued.labels_)
    previous = CRFWeights(continued.attributes_, continued.labels_, continued.state_weights_,
                          continued.transition_weights_)
    rows = continued._vocabulary_rows(continued._extractor())[1]
    init = warm_start(data, previous, rows)
    start = continued._known_start(data, init, previous, rows)
    assert start is not None and continued._prepared is None  # used once
    close_to_the_objective(start, data, init, continued.c2)


def close_to_the_objective(start, data, w, c2) -> None:
    exact = Objective(data, c2, np.float64)(w)
    single = Objective(data, c2, np.float32)(w)  # what the fit computes otherwise
    assert start[0] == pytest.approx(exact[0], rel=1e-5)
    # As close to the exact gradient as the fit's own single-precision one (large counts round in float32).
    assert np.abs(start[1] - exact[1]).max() <= 1.5 * np.abs(single[1] - exact[1]).max() + 1e-3


def test_documents_holding_an_attribute_that_loses_a_weight_are_passed_over_again(grown):
    tagger, _, docs = grown
    probe = tagger.copy_to_continue()
    feats, _, runs = probe._training_features(docs)
    data = training_set_of_runs(feats, runs, probe.labels_)
    # A weight the next training set has no feature for (as when only a record's former marks had the pair):
    # large, on an attribute of the model that a few tokens of records unchanged since the last fit hold, for a
    # label it is never seen with.
    before, after = probe._extended
    unchanged = np.zeros(len(feats), dtype=bool)
    for key, k in before.index.items():
        unchanged[after.index[key]] = after.features[after.index[key]] is before.features[k]
    token_of_document = np.repeat(unchanged, [f.n_tokens for f in feats])
    by_column = data.matrix.tocsc()
    held = np.diff(by_column.indptr)
    in_unchanged = np.array([token_of_document[by_column.indices[a:b]].all()
                             for a, b in zip(by_column.indptr[:-1], by_column.indptr[1:])])
    rows = probe._vocabulary_rows(probe._extractor())[1]
    column = int(np.flatnonzero((held >= 3) & (held <= 6) & in_unchanged
                                & (rows[data.vocabulary_ids] < len(probe.attributes_)))[0])
    row = int(rows[data.vocabulary_ids[column]])
    label = next(k for k in range(len(data.labels))
                 if not np.any((data.feature_rows == column) & (data.feature_cols == k)))
    weights = tagger.state_weights_.copy()
    weights[row, label] = 8.0
    previous = CRFWeights(tagger.attributes_, tagger.labels_, weights, tagger.transition_weights_)
    assert columns_losing_weights(data, previous, rows).tolist() == [column]
    assert columns_losing_weights(data, CRFWeights(tagger.attributes_, tagger.labels_, tagger.state_weights_,
                                                   tagger.transition_weights_), rows).tolist() == []
    continued = tagger.copy_to_continue()
    continued.state_weights_ = weights  # the model had that weight: its expectations are prepared with it
    assert continued.prepare_next_fit()
    continued._training_features(docs)
    init = warm_start(data, previous, rows)
    start = continued._known_start(data, init, previous, rows)
    assert start is not None
    close_to_the_objective(start, data, init, continued.c2)


def test_a_warm_fit_from_prepared_expectations_passes_once_less_and_fits_the_same_model(grown):
    tagger, reference, docs = grown
    prepared, plain = tagger.copy_to_continue(), reference.copy_to_continue()
    assert prepared.prepare_next_fit()
    prepared.fit(docs)
    plain.fit(docs)
    assert prepared.fit_prepared_ and not plain.fit_prepared_
    assert prepared.fit_iterations_ == plain.fit_iterations_
    assert prepared.fit_evaluations_ == plain.fit_evaluations_ - 1
    assert prepared.fit_gradients_ == plain.fit_gradients_ - 1
    # The same up to the rounding of single-precision sums taken in another order.
    np.testing.assert_allclose(prepared.transition_weights_, plain.transition_weights_, atol=1e-2)
    dev = read_split("dev")[:20]
    same = sum(a == b for a, b in zip(prepared.predict(dev), plain.predict(dev)))
    assert same >= 19
    # Nothing of it is saved with the model, and a fit with other labels does not use it.
    assert pickle.loads(pickle.dumps(prepared))._prepared is None
    again = prepared.copy_to_continue()
    assert again.prepare_next_fit()
    odd = Document("Paciente: Juan Nadie, teléfono 600 000 000.", (Span(11, 21, "NOMBRE_SUJETO_ASISTENCIA"),
                                                                 Span(32, 43, "NUMERO_TELEFONO_NUEVO")))
    again.fit(docs + [odd])
    assert not again.fit_prepared_ and again.fit_kind_ == "warm"


def test_warm_start_keeps_known_weights_and_starts_new_features_at_zero():
    # A vocabulary of these documents only (the process's shared one depends on which tests ran before), so
    # the new documents' new attributes have ids past the first documents' ones.
    docs, scope = synthetic_docs(8, seed=5), "warm-start-of-grown-documents"
    cache = FeatureCache()
    data = problem(docs, cache, scope)
    first = fit_weights(data, c1=0.1, c2=0.05, max_iterations=50, dtype=np.float64)
    grown = problem(docs + synthetic_docs(3, seed=6), cache, scope)
    init = warm_start(grown, first)
    n_state = grown.feature_rows.shape[0]
    row = {a: i for i, a in enumerate(first.attributes)}
    col = {lab: i for i, lab in enumerate(first.labels)}
    for k in range(n_state):
        attribute, label = grown.attributes[grown.feature_rows[k]], grown.labels[grown.feature_cols[k]]
        known = attribute in row and label in col
        assert init[k] == (first.state[row[attribute], col[label]] if known else 0.0)
    assert init[n_state:].reshape(len(grown.labels), -1).sum() == pytest.approx(first.transition.sum())
    # Given the previous model's rows by vocabulary id (ids past their end are new), the same start.
    row_by_id = np.full(int(data.vocabulary_ids.max()) + 1, len(first.attributes))
    for attribute, vocabulary_id in zip(data.attributes, data.vocabulary_ids.tolist()):
        row_by_id[vocabulary_id] = row.get(attribute, len(first.attributes))
    assert row_by_id.shape[0] <= grown.vocabulary_ids.max()
    np.testing.assert_array_equal(warm_start(grown, first, row_by_id), init)


def by_name(data, vector) -> dict:
    """The entries of a vector over ``data``'s features, named: (attribute, label) and (label, label)."""
    n_state, labels = data.feature_rows.shape[0], data.labels
    named = {(data.attributes[r], labels[c]): vector[k]
             for k, (r, c) in enumerate(zip(data.feature_rows.tolist(), data.feature_cols.tolist()))}
    transitions = vector[n_state:].reshape(len(labels), len(labels))
    named.update({("->", a, b): transitions[i, j] for i, a in enumerate(labels) for j, b in enumerate(labels)})
    return named


@pytest.mark.parametrize("change", ["a label comes in before the earlier ones", "a label of the earlier fit is gone"])
def test_an_earlier_fits_curvature_is_laid_out_on_the_features_of_other_documents(change):
    cache, scope = FeatureCache(), f"curvature {change}"
    docs = synthetic_docs(8, seed=5)
    age = Document("Edad: 54 años. Nombre: Pedro", [Span(6, 8, "AGE")], name="age")
    first_docs, later_docs = (docs, docs + synthetic_docs(3, seed=6) + [age]) if change.startswith("a label comes") \
        else (docs + [age], docs[:6] + synthetic_docs(3, seed=6))
    data = problem(first_docs, cache, scope)
    first = fit_weights(data, c1=0.1, c2=0.05, max_iterations=6, epsilon=0.0, dtype=np.float64)
    assert len(first.curvature.steps) == 5  # a step from every point with a gradient: all but the last
    # On the same documents, the very steps.
    for (s, y, sy), (s_first, y_first) in zip(carried_steps(data, first.curvature), first.curvature.steps,
                                              strict=True):
        np.testing.assert_array_equal(s, s_first)
        np.testing.assert_array_equal(y, y_first)
        assert sy == pytest.approx(float(s_first @ y_first)) and sy > 0
    # On other documents, each feature takes the entries of the same attribute and label; the new ones none.
    later = problem(later_docs, cache, scope)
    carried = carried_steps(later, first.curvature)
    assert len(carried) == len(first.curvature.steps)
    labels_gone = set(data.labels) - set(later.labels)
    assert labels_gone == ({"B-AGE"} if "gone" in change else set())
    with_age = later if "comes" in change else data
    assert with_age.labels.index("B-AGE") < with_age.labels.index("B-DATE")
    for (s, y, sy), (s_first, y_first) in zip(carried, first.curvature.steps):
        for vector, earlier in ((s, s_first), (y, y_first)):
            before = by_name(data, earlier)
            assert by_name(later, vector) == {name: before.get(name, 0.0) for name in by_name(later, vector)}
        assert sy == pytest.approx(float(s @ y))
    laid, before = by_name(later, carried[0][0]), by_name(data, first.curvature.steps[0][0])
    assert any(name[0] != "->" for name in set(laid) - set(before))  # new features, zero above


def test_a_warm_fit_starts_from_the_curvature_the_last_one_learnt_in_its_process():
    cache = FeatureCache()
    docs = synthetic_docs(40, seed=11)
    tagger = CRFTagger(max_iterations=20, feature_cache=cache, warm_start=True).fit(docs[:30])
    assert getattr(tagger, "_curvature", None) is None  # crfsuite's fit: none
    tagger.fit(docs[:33])
    assert tagger.fit_iterations_ == tagger.warm_iterations and tagger._curvature is not None
    assert tagger.fit_carried_steps_ == 0
    learnt = tagger._curvature[1]
    assert len(learnt.steps) == tagger.warm_iterations - 1
    # In the same process the next fit continues from it, one iteration fewer, and adds its own steps.
    following = tagger.copy_to_continue()
    assert following._warm_iterations(36) == tagger.warm_iterations - 1
    following.fit(docs[:36])
    assert following.fit_iterations_ == tagger.warm_iterations - 1
    assert following.fit_carried_steps_ == len(learnt.steps)
    assert len(following._curvature[1].steps) == len(learnt.steps) + tagger.warm_iterations - 2
    assert tagger._curvature[1] is learnt  # the model it continued from is as it was
    # A tagger read back elsewhere (pickled) has none: the vocabulary ids that name its features are this
    # process's. It fits as after a cold fit.
    elsewhere = pickle.loads(pickle.dumps(tagger))
    assert elsewhere._curvature is None
    elsewhere.feature_cache = cache
    assert elsewhere._warm_iterations(36) == tagger.warm_iterations
    # Nor does a curvature learnt on another vocabulary (another project's features) carry.
    other = tagger.copy_to_continue()
    other._curvature = (object(), learnt)
    assert other._carried_curvature(following.features(docs[:1])[0].vocabulary) is None
    assert other._curvature is None


def test_a_warm_fit_after_scoring_reads_the_models_rows_and_fits_the_same_weights():
    cache = FeatureCache()
    docs = synthetic_docs(30, seed=0)
    first = CRFTagger(max_iterations=40, feature_cache=cache, warm_start=True).fit(docs[:25])
    fresh = copy.deepcopy(first)
    fresh.feature_cache = cache
    first.predict_marginals(synthetic_docs(3, seed=2))  # scoring makes the rows by vocabulary id
    continued = first.copy_to_continue()
    assert continued._vocab_rows[1] is first._vocab_rows[1]
    assert continued._vocab_rows[0] is continued._training_features(docs)[0][0].vocabulary  # so they are read
    continued.fit(docs)
    fresh.fit(docs)
    assert continued.attributes_ == fresh.attributes_
    np.testing.assert_array_equal(continued.state_weights_, fresh.state_weights_)
    np.testing.assert_array_equal(continued.transition_weights_, fresh.transition_weights_)
    # The fit leaves the new model's rows by vocabulary id: scoring with them is scoring with looked-up ones.
    looked_up = continued.copy_to_continue()
    looked_up._vocab_rows = None
    test = synthetic_docs(4, seed=3)
    for kept, found in zip(continued.predict_marginals(test), looked_up.predict_marginals(test)):
        np.testing.assert_array_equal(kept, found)


def test_a_warm_started_tagger_refits_with_its_own_trainer_and_decodes_like_crfsuite():
    cache = FeatureCache()
    docs = synthetic_docs(30, seed=0)
    tagger = CRFTagger(max_iterations=40, feature_cache=cache, warm_start=True).fit(docs[:25])
    assert tagger.crf_ is not None  # a first fit is crfsuite's
    before = copy.deepcopy(tagger)
    tagger.fit(docs)
    assert tagger.crf_ is None and 1 <= tagger.fit_iterations_ <= tagger.warm_iterations
    assert tagger.fit_evaluations_ >= tagger.fit_iterations_ + 1
    assert tagger.fit_gradients_ == tagger.fit_iterations_
    test = synthetic_docs(5, seed=1)
    assert tagger.predict(test) == [sorted(d.spans) for d in test]
    # The batched Viterbi decodes exactly as crfsuite's tagger does, on real notes.
    notes = read_split("dev")[:8]
    assert before.predict_tags(notes) == before.predict_tags_reference(notes)


def test_the_refit_policy_fits_from_zero_periodically_and_longer_when_the_documents_grow():
    cache = FeatureCache()
    docs = synthetic_docs(40, seed=7)
    tagger = CRFTagger(max_iterations=20, feature_cache=cache, warm_start=True, refit_every=2, refit_growth=0.5)
    kinds, budgets = [], []
    for n in (20, 22, 24, 26, 28, 45):
        budgets.append(tagger._warm_iterations(n))
        tagger.fit(docs[:n] if n <= 40 else docs + synthetic_docs(n - 40, seed=8))
        kinds.append(tagger.fit_kind_)
    # cold first; two warm fits; cold (refit_every); then warm, with four times the iterations once the
    # documents have grown by half since the last cold fit (45 > 26 * 1.5)
    assert kinds == ["cold", "warm", "warm", "cold", "warm", "warm"]
    assert budgets[4:] == [tagger.warm_iterations, 4 * tagger.warm_iterations]
    assert CRFTagger(feature_cache=cache).fit(docs[:20]).fit(docs[:22]).fit_kind_ == "cold"  # no warm_start


def test_a_tiny_first_model_makes_only_the_burst_after_it_longer_not_every_later_warm_fit():
    cache = FeatureCache()
    docs = synthetic_docs(30, seed=7)
    tagger = CRFTagger(max_iterations=20, feature_cache=cache, warm_start=True, cold_refit="background").fit(docs[:5])
    budgets = []
    for n in (10, 15, 20, 25, 30):
        budgets.append(tagger._warm_iterations(n))
        tagger.fit(docs[:n])
    # 10 > 5 * 1.5 is a burst; after that each batch of 5 grows the documents by less than half of the
    # previous fit's, although they are six times the cold fit's by the end (whose base is due meanwhile). Each
    # of those continues from the curvature the warm fit before it learnt, so takes one iteration fewer.
    assert budgets == [4 * tagger.warm_iterations] + [tagger.warm_iterations - 1] * 4
    assert tagger.cold_fit_due(30) and tagger.fitted_documents_ == 30 and tagger.cold_documents_ == 5


def test_with_cold_refits_in_the_background_the_fit_stays_warm_and_says_a_cold_fit_is_due():
    cache = FeatureCache()
    docs = synthetic_docs(40, seed=7)
    tagger = CRFTagger(max_iterations=20, feature_cache=cache, warm_start=True, refit_every=2, refit_growth=0.5,
                       cold_refit="background")
    kinds, due = [], []
    for n in (20, 22, 24, 26):
        tagger.fit(docs[:n])
        kinds.append(tagger.fit_kind_)
        due.append(tagger.cold_fit_due(n + 2))
    assert kinds == ["cold", "warm", "warm", "warm"]  # never cold in the fit once there is a model
    assert due == [False, False, True, True] and tagger.warm_fits_ == 3
    # Documents grown by half since the last cold fit make one due as well, warm fits or not.
    fresh = CRFTagger(max_iterations=20, feature_cache=cache, warm_start=True, cold_refit="background").fit(docs[:20])
    assert not fresh.cold_fit_due(30) and fresh.cold_fit_due(31)
    assert not CRFTagger(feature_cache=cache).fit(docs[:20]).cold_fit_due(40)  # no warm_start: every fit is cold
    with pytest.raises(ValueError, match="cold_refit must be one of inline, background, not 'later'"):
        CRFTagger(cold_refit="later")


def test_a_simulation_round_continues_from_a_copy_of_the_previous_model():
    from learning.core.simulation import _refit

    cache = FeatureCache()
    docs = synthetic_docs(30, seed=9)
    first = CRFTagger(max_iterations=20, feature_cache=cache, warm_start=True).fit(docs[:20])
    weights = first.state_weights_.copy()
    following = _refit(first, lambda: CRFTagger(feature_cache=cache, warm_start=True), docs[:25])
    assert following is not first and following.fit_kind_ == "warm" and following.feature_cache is cache
    assert first.fit_kind_ == "cold" and np.array_equal(first.state_weights_, weights)  # shared by strategies
    cold = _refit(CRFTagger(max_iterations=20, feature_cache=cache).fit(docs[:20]),
                  lambda: CRFTagger(max_iterations=20, feature_cache=cache), docs[:25])
    assert cold.fit_kind_ == "cold"
    # A cold fit due (which the live loop runs in the background) is fitted from zero, one round sooner.
    settings = dict(max_iterations=20, feature_cache=cache, warm_start=True, cold_refit="background", refit_every=1)
    warmed = _refit(CRFTagger(**settings).fit(docs[:20]), lambda: CRFTagger(**settings), docs[:22])
    assert warmed.fit_kind_ == "warm" and warmed.cold_fit_due(25)
    assert _refit(warmed, lambda: CRFTagger(**settings), docs[:25]).fit_kind_ == "cold"


def test_a_saved_tagger_is_read_back_without_scikit_learn_until_crfsuite_itself_is_asked_for(tmp_path):
    """crfsuite's own model travels in a saved tagger but is unpickled on first use: a process that loads the
    model to predict or to continue from it does not import scikit-learn (a second in a cold worker)."""
    docs = synthetic_docs(20, seed=3)
    tagger = CRFTagger(max_iterations=20, feature_cache=FeatureCache(), warm_start=True).fit(docs)
    assert tagger.crf_ is not None
    saved = tmp_path / "model.pickle"
    saved.write_bytes(pickle.dumps(tagger))
    expected = [m.tolist() for m in tagger.predict_marginals(docs)]
    (tmp_path / "docs.pickle").write_bytes(pickle.dumps(docs))
    # (both files are this test's own, in its private temporary folder)
    script = f"""
import json, pickle, sys
tagger = pickle.loads(open({str(saved)!r}, "rb").read())
docs = pickle.loads(open({str(tmp_path / "docs.pickle")!r}, "rb").read())
marginals = [m.tolist() for m in tagger.predict_marginals(docs)]
before = "sklearn" in sys.modules
same = tagger.predict_tags_reference(docs) == tagger.predict_tags(docs)
print(json.dumps([before, "sklearn" in sys.modules, same, marginals]))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3]).stdout
    before, after, same, marginals = json.loads(out.strip().splitlines()[-1])
    assert (before, after, same) == (False, True, True)
    assert np.allclose(np.concatenate(marginals), np.concatenate(expected), atol=1e-5)
    # A warm fit leaves no crfsuite model; a copy keeps whatever there is.
    assert copy.deepcopy(tagger).crf_ is not None
    tagger.fit(synthetic_docs(25, seed=3))
    assert tagger.crf_ is None and pickle.loads(pickle.dumps(tagger)).crf_ is None


def test_a_tagger_saved_with_crfsuites_model_as_a_plain_attribute_reads_back_and_saves_it_pickled():
    """Models saved before crfsuite's model travelled pickled hold it as ``crf_`` itself."""
    docs = synthetic_docs(20, seed=4)
    tagger = CRFTagger(max_iterations=20, feature_cache=FeatureCache()).fit(docs)
    crf = tagger.crf_
    older = {**tagger.__getstate__(), "crf_": crf}
    older.pop("_crf_pickled")
    revived = CRFTagger.__new__(CRFTagger)
    revived.__setstate__(older)
    assert "crf_" not in vars(revived) and "_crf" not in vars(revived)
    assert model_file_bytes(revived.crf_) == model_file_bytes(crf)
    assert revived.predict_tags_reference(docs) == revived.predict_tags(docs)
    assert "_crf_pickled" in revived.__getstate__()


def test_a_process_that_fits_and_loads_models_and_ends_without_finalisers_leaves_no_model_file(tmp_path):
    """crfsuite keeps a live model in a temporary file (attributes made of the training records' words) that
    only its finaliser removes; a worker's pool process ends by ``os._exit``, running none."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    script = """
import os, pickle
from learning.core.features import FeatureCache
from learning.core.taggers.crf import CRFTagger
from tests.unit.core.test_crf import synthetic_docs
docs = synthetic_docs(20, seed=5)
fitted = CRFTagger(max_iterations=15, feature_cache=FeatureCache(), warm_start=True).fit(docs)
loaded = pickle.loads(pickle.dumps(fitted))
loaded.predict_marginals(docs)
loaded.fit(synthetic_docs(22, seed=5))
print(len(os.listdir(os.environ["TMPDIR"])), flush=True)
os._exit(0)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3], env={**os.environ, "TMPDIR": str(scratch)})
    assert out.stdout.split() == ["0"]
    assert not list(scratch.iterdir())
