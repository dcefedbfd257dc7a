from __future__ import annotations

import itertools

import numpy as np
import pytest

from learning.core.marginals import (
    forward_backward, forward_backward_batch, forward_backward_log, forward_backward_time_major,
)


def brute_force(unary, transition, start, end):
    """Marginals by enumerating every label path."""
    n_pos, n_labels = unary.shape
    marg = np.zeros((n_pos, n_labels))
    for path in itertools.product(range(n_labels), repeat=n_pos):
        score = start[path[0]] + end[path[-1]]
        score += sum(unary[t, y] for t, y in enumerate(path))
        score += sum(transition[a, b] for a, b in zip(path, path[1:]))
        for t, y in enumerate(path):
            marg[t, y] += np.exp(score)
    return marg / marg.sum(axis=1, keepdims=True)


def test_hand_worked_two_tokens_two_labels():
    # Paths (y1, y2) with scores: (0,0)=0, (0,1)=log 2, (1,0)=log 3, (1,1)=log 4 -> weights 1, 2, 3, 4.
    unary = np.zeros((2, 2))
    transition = np.log([[1.0, 2.0], [3.0, 4.0]])
    marg = forward_backward(unary, transition)
    # P(y1=0) = (1+2)/10, P(y2=0) = (1+3)/10.
    np.testing.assert_allclose(marg, [[0.3, 0.7], [0.4, 0.6]], atol=1e-15)


def test_three_tokens_three_labels_against_enumeration():
    rng = np.random.default_rng(7)
    unary = rng.normal(size=(3, 3))
    transition = rng.normal(size=(3, 3))
    start, end = rng.normal(size=3), rng.normal(size=3)
    expected = brute_force(unary, transition, start, end)
    for got in (forward_backward(unary, transition, start, end), forward_backward_log(unary, transition, start, end)):
        np.testing.assert_allclose(got, expected, atol=1e-12)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    no_start_end = brute_force(unary, transition, np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(forward_backward(unary, transition), no_start_end, atol=1e-12)


def test_batch_with_padding_matches_single_sequences():
    rng = np.random.default_rng(1)
    n_labels = 5
    lengths = [4, 1, 7, 0, 6]
    transition = rng.normal(size=(n_labels, n_labels))
    start, end = rng.normal(size=n_labels), rng.normal(size=n_labels)
    batch = np.full((len(lengths), 7, n_labels), np.nan)  # padding must not leak
    seqs = []
    for i, n in enumerate(lengths):
        seqs.append(rng.normal(size=(n, n_labels)) * 3)
        batch[i, :n] = seqs[-1]
    out = forward_backward_batch(batch, np.array(lengths), transition, start, end)
    assert out.shape == (5, 7, n_labels)
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(out[i, :n], forward_backward_log(seqs[i], transition, start, end), atol=1e-12)
        assert np.all(out[i, n:] == 0.0)


def test_extreme_scores_fall_back_to_log_space():
    rng = np.random.default_rng(3)
    unary = rng.normal(size=(6, 4)) * 2000.0
    transition = rng.normal(size=(4, 4)) * 2000.0
    transition[0, :] = -np.inf  # forbidden transitions are allowed too
    transition[0, 0] = 0.0
    got = forward_backward(unary, transition)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, forward_backward_log(unary, transition), atol=1e-12)


def test_shape_errors():
    with pytest.raises(ValueError):
        forward_backward(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError):
        forward_backward_batch(np.zeros((2, 3, 2)), np.array([3, 4]), np.zeros((2, 2)))
    assert forward_backward(np.zeros((0, 2)), np.zeros((2, 2))).shape == (0, 2)


def test_float32_scores_give_the_float64_marginals_within_float32_rounding():
    rng = np.random.default_rng(11)
    n_labels, lengths = 9, np.array([5, 1, 30, 0, 17])
    batch = rng.normal(size=(5, 30, n_labels)) * 4
    transition = rng.normal(size=(n_labels, n_labels)) * 2
    exact = forward_backward_batch(batch, lengths, transition)
    fast = forward_backward_batch(batch.astype(np.float32), lengths, transition)
    assert fast.dtype == np.float32
    assert np.abs(fast - exact).max() < 1e-5
    inside = np.arange(30)[None, :] < lengths[:, None]
    np.testing.assert_allclose(fast.sum(axis=2)[inside], 1.0, atol=1e-5)
    assert np.all(fast[~inside] == 0.0)


def test_time_major_batches_are_the_batches_transposed():
    rng = np.random.default_rng(12)
    n_labels, lengths = 4, np.array([3, 6, 0, 6])
    batch = rng.normal(size=(4, 6, n_labels))
    transition, start, end = rng.normal(size=(n_labels, n_labels)), rng.normal(size=n_labels), rng.normal(size=n_labels)
    steps = forward_backward_time_major(batch.transpose(1, 0, 2), lengths, transition, start, end)
    np.testing.assert_allclose(steps.transpose(1, 0, 2), forward_backward_batch(batch, lengths, transition, start, end),
                               atol=1e-15)
    with pytest.raises(ValueError):
        forward_backward_time_major(batch.transpose(1, 0, 2), lengths[:3], transition)


def test_float32_extreme_scores_fall_back_to_log_space():
    rng = np.random.default_rng(3)
    unary = (rng.normal(size=(6, 4)) * 2000.0).astype(np.float32)
    transition = rng.normal(size=(4, 4)) * 2000.0
    got = forward_backward_batch(unary[None], np.array([6]), transition)[0]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, forward_backward_log(unary.astype(np.float64), transition), atol=1e-6)


def test_scores_far_above_the_first_label_are_shifted_by_their_maximum():
    # Shifting by the first label's score would overflow float32 here (e^150); the row maximum does not.
    rng = np.random.default_rng(13)
    unary = rng.normal(size=(1, 8, 4))
    unary[0, 3:, 2] += 150.0
    transition = rng.normal(size=(4, 4))
    got = forward_backward_batch(unary.astype(np.float32), np.array([8]), transition)[0]
    assert np.abs(got - forward_backward_log(unary[0], transition)).max() < 1e-5
