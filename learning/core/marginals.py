"""Linear-chain forward-backward: per-token label marginals from unary and transition scores.

Scores are log-potentials: the score of a label path y_1..y_T is
``start[y_1] + sum_t unary[t, y_t] + sum_t transition[y_t, y_{t+1}] + end[y_T]`` and its probability is
proportional to ``exp(score)``.  The result is ``P(y_t = l | x)`` for every position and label.

The recursion runs on exponentiated potentials that are renormalised at every position, which is the
log-space recursion with the log normalisers kept aside: each step is one small matrix product instead of
a log-sum-exp over an (L, L) array, so a batch of B sentences costs T products of (B, L) by (L, L).  When
potentials are so extreme that a whole row underflows (differences beyond ~700 nats), the affected
sequences are recomputed with an explicit log-sum-exp recursion.
"""
from __future__ import annotations

import numpy as np

__all__ = ["forward_backward", "forward_backward_batch", "forward_backward_log"]


def _as_vector(x: np.ndarray | None, n_labels: int, name: str) -> np.ndarray:
    if x is None:
        return np.zeros(n_labels)
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (n_labels,):
        raise ValueError(f"{name} must have shape ({n_labels},), got {x.shape}")
    return x


def forward_backward(
    unary: np.ndarray,
    transition: np.ndarray,
    start: np.ndarray | None = None,
    end: np.ndarray | None = None,
) -> np.ndarray:
    """Marginals (T, L) of one sequence; ``transition[i, j]`` scores label i followed by label j."""
    unary = np.asarray(unary, dtype=np.float64)
    if unary.ndim != 2:
        raise ValueError(f"unary must be (T, L), got shape {unary.shape}")
    return forward_backward_batch(unary[None], np.array([unary.shape[0]]), transition, start, end)[0]


def forward_backward_batch(
    unary: np.ndarray,
    lengths: np.ndarray,
    transition: np.ndarray,
    start: np.ndarray | None = None,
    end: np.ndarray | None = None,
) -> np.ndarray:
    """Marginals (B, T, L) of B padded sequences; sequence b uses positions ``[0, lengths[b])``.

    Padding positions (``t >= lengths[b]``) are ignored on input and are zero in the output.  Sequences of
    similar length should be batched together so that little work is spent on padding.
    """
    unary = np.asarray(unary, dtype=np.float64)
    if unary.ndim != 3:
        raise ValueError(f"unary must be (B, T, L), got shape {unary.shape}")
    n_seq, n_pos, n_labels = unary.shape
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.shape[0] != n_seq:
        raise ValueError(f"{n_seq} sequences but {lengths.shape[0]} lengths")
    if np.any(lengths < 0) or np.any(lengths > n_pos):
        raise ValueError(f"lengths must lie in [0, {n_pos}]")
    transition = np.asarray(transition, dtype=np.float64)
    if transition.shape != (n_labels, n_labels):
        raise ValueError(f"transition must be ({n_labels}, {n_labels}), got {transition.shape}")
    start_v = _as_vector(start, n_labels, "start")
    end_v = _as_vector(end, n_labels, "end")
    out = np.zeros((n_seq, n_pos, n_labels))
    if n_seq == 0 or n_pos == 0 or n_labels == 0:
        return out

    # Exponentiate with shifts: a constant per position (or per matrix) cancels in the normalisation.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        u = unary.copy()
        u[:, 0, :] += start_v
        u -= u.max(axis=2, keepdims=True)
        np.exp(u, out=u)
        trans_exp = np.exp(transition - transition.max())
        end_exp = np.exp(end_v - end_v.max())
        post = _scaled_posteriors(u, lengths, trans_exp, end_exp)
    mask = np.arange(n_pos)[None, :] < lengths[:, None]
    post[~mask] = 0.0
    out = post

    bad = ~np.isfinite(out).all(axis=(1, 2))
    if bad.any():
        for i in np.flatnonzero(bad):
            n = int(lengths[i])
            out[i] = 0.0
            if n:
                out[i, :n] = forward_backward_log(unary[i, :n], transition, start_v, end_v)
    return out


def _scaled_posteriors(
    u: np.ndarray, lengths: np.ndarray, trans_exp: np.ndarray, end_exp: np.ndarray
) -> np.ndarray:
    n_seq, n_pos, n_labels = u.shape
    # Forward: alpha[t] ∝ P(y_t, x_1..t), each row normalised to sum 1.
    alpha = np.empty_like(u)
    a = u[:, 0, :]
    a = a / a.sum(axis=1, keepdims=True)
    alpha[:, 0, :] = a
    for t in range(1, n_pos):
        nxt = (a @ trans_exp) * u[:, t, :]
        nxt /= nxt.sum(axis=1, keepdims=True)
        alpha[:, t, :] = nxt
        a = nxt

    # Backward: beta[t] ∝ P(x_t+1..T | y_t), starting from ``end`` at each sequence's last position.
    beta = np.empty_like(u)
    last = lengths - 1
    end_row = end_exp / end_exp.sum()
    b = np.broadcast_to(end_row, (n_seq, n_labels)).copy()
    beta[:, n_pos - 1, :] = b
    trans_exp_t = trans_exp.T
    for t in range(n_pos - 2, -1, -1):
        nb = (u[:, t + 1, :] * b) @ trans_exp_t
        nb /= nb.sum(axis=1, keepdims=True)
        restart = last == t
        if restart.any():
            nb[restart] = end_row
        beta[:, t, :] = nb
        b = nb

    post = alpha * beta
    post /= post.sum(axis=2, keepdims=True)
    return post


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def forward_backward_log(
    unary: np.ndarray,
    transition: np.ndarray,
    start: np.ndarray | None = None,
    end: np.ndarray | None = None,
) -> np.ndarray:
    """Marginals (T, L) by the plain log-space recursion (slower; exact for any range of scores)."""
    unary = np.asarray(unary, dtype=np.float64)
    n_pos, n_labels = unary.shape
    transition = np.asarray(transition, dtype=np.float64)
    start_v = _as_vector(start, n_labels, "start")
    end_v = _as_vector(end, n_labels, "end")
    if n_pos == 0:
        return np.zeros((0, n_labels))
    log_alpha = np.empty((n_pos, n_labels))
    log_beta = np.empty((n_pos, n_labels))
    log_alpha[0] = unary[0] + start_v
    for t in range(1, n_pos):
        log_alpha[t] = _logsumexp(log_alpha[t - 1][:, None] + transition, axis=0) + unary[t]
    log_beta[-1] = end_v
    for t in range(n_pos - 2, -1, -1):
        log_beta[t] = _logsumexp(transition + (unary[t + 1] + log_beta[t + 1])[None, :], axis=1)
    log_post = log_alpha + log_beta
    log_post -= _logsumexp(log_post, axis=1)[:, None]
    return np.exp(log_post)
