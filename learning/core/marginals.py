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

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ChainForward", "chain_backward", "chain_forward", "chain_statistics", "forward_backward",
    "forward_backward_batch", "forward_backward_log",
    "forward_backward_time_major", "length_batches",
]


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


#: How far above the shift a score may lie before its exponential risks overflowing a sum of a few dozen
#: products in float32 (e^60 ≈ 1e26; float32 ends at 3e38).
_SHIFT_HEADROOM = 60.0


def forward_backward_batch(
    unary: np.ndarray,
    lengths: np.ndarray,
    transition: np.ndarray,
    start: np.ndarray | None = None,
    end: np.ndarray | None = None,
) -> np.ndarray:
    """Marginals (B, T, L) of B padded sequences; sequence b uses positions ``[0, lengths[b])``.

    Padding positions (``t >= lengths[b]``) are ignored on input and are zero in the output.  Sequences of
    similar length should be batched together so that little work is spent on padding.  Works in the
    precision of ``unary``: float32 stays float32 (about half the time; marginals within ~1e-6 of float64's),
    anything else is computed in float64.
    """
    unary = _as_float(unary)
    if unary.ndim != 3:
        raise ValueError(f"unary must be (B, T, L), got shape {unary.shape}")
    # The recursion steps through positions: laid out time-major, each step reads one contiguous block.
    steps = np.ascontiguousarray(unary.transpose(1, 0, 2))
    return forward_backward_time_major(steps, lengths, transition, start, end).transpose(1, 0, 2)


def forward_backward_time_major(
    unary: np.ndarray,
    lengths: np.ndarray,
    transition: np.ndarray,
    start: np.ndarray | None = None,
    end: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`forward_backward_batch` for a batch laid out time-major: ``unary`` and the result are (T, B, L).

    For callers that gather their sequences into a padded batch themselves (a tagger's sentences, from all
    its tokens): they can build this layout directly.
    """
    unary = _as_float(unary)
    if unary.ndim != 3:
        raise ValueError(f"unary must be (T, B, L), got shape {unary.shape}")
    n_pos, n_seq, n_labels = unary.shape
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
    if n_seq == 0 or n_pos == 0 or n_labels == 0:
        return np.zeros(unary.shape, dtype=unary.dtype)

    inside = np.arange(n_pos)[:, None] < lengths[None, :]  # (T, B)
    # Exponentiate with shifts: a constant per position (or per matrix) cancels in the normalisation. The
    # first label's score is a shift as good as the row's maximum whenever no other score exceeds it by more
    # than _SHIFT_HEADROOM (one check over the whole batch), and far cheaper than a maximum over each row.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        u = unary - unary[:, :, :1]
        if not u.max() <= _SHIFT_HEADROOM:  # also when a score is not finite
            u = unary - unary.max(axis=2, keepdims=True)
        if start is not None:
            u[0] += start_v.astype(u.dtype)
            u[0] -= u[0].max(axis=1, keepdims=True)
        np.exp(u, out=u)
        trans_exp = np.exp(transition - transition.max()).astype(u.dtype)
        end_exp = np.exp(end_v - end_v.max()).astype(u.dtype)
        post, sums = _scaled_posteriors(u, lengths, trans_exp, end_exp)
    post[~inside] = 0.0

    # A row whose normaliser is not a positive number met an underflow or a score that is not finite:
    # its sequence is recomputed in log space.
    bad = ~((np.isfinite(sums) & (sums > 0)) | ~inside).all(axis=0)
    for i in np.flatnonzero(bad):
        n = int(lengths[i])
        post[:, i] = 0.0
        post[:n, i] = forward_backward_log(unary[:n, i], transition, start_v, end_v)
    return post


def _as_float(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype == np.float32 else x.astype(np.float64, copy=False)


def _scaled_posteriors(
    u: np.ndarray, lengths: np.ndarray, trans_exp: np.ndarray, end_exp: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Posteriors (T, B, L) from exponentiated potentials (T, B, L) and the sums their rows were divided by
    (T, B)."""
    n_pos, n_seq, n_labels = u.shape
    # Row sums as products with a vector of ones and divisions as products with reciprocals: on rows of a
    # few dozen labels both are several times faster than numpy's reductions and divisions.
    ones = np.ones(n_labels, dtype=u.dtype)
    # Forward: alpha[t] ∝ P(y_t, x_1..t), each row normalised to sum 1.
    alpha = np.empty_like(u)
    np.multiply(u[0], np.reciprocal(u[0] @ ones)[:, None], out=alpha[0])
    for t in range(1, n_pos):
        a = alpha[t]
        np.matmul(alpha[t - 1], trans_exp, out=a)
        a *= u[t]
        a *= np.reciprocal(a @ ones)[:, None]

    # Backward: beta[t] ∝ P(x_t+1..T | y_t), starting from ``end`` at each sequence's last position; alpha[t]
    # becomes the unnormalised posterior alpha[t] * beta[t] as soon as beta[t] is known.
    ending = [[] for _ in range(n_pos)]
    for i, n in enumerate(lengths.tolist()):
        if n:
            ending[n - 1].append(i)
    end_row = end_exp / end_exp.sum()
    trans_exp_t = np.ascontiguousarray(trans_exp.T)
    b = np.broadcast_to(end_row, (n_seq, n_labels)).copy()
    scratch = np.empty_like(b)
    alpha[n_pos - 1] *= b
    for t in range(n_pos - 2, -1, -1):
        np.multiply(u[t + 1], b, out=scratch)
        np.matmul(scratch, trans_exp_t, out=b)
        b *= np.reciprocal(b @ ones)[:, None]
        if ending[t]:
            b[ending[t]] = end_row
        alpha[t] *= b
    sums = alpha.reshape(-1, n_labels) @ ones
    alpha *= np.reciprocal(sums).reshape(n_pos, n_seq, 1)
    return alpha, sums.reshape(n_pos, n_seq)


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


def chain_statistics(
    unary: np.ndarray, lengths: np.ndarray, transition: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What training a CRF needs of B padded sequences laid out time-major, ``unary`` (T, B, L) (no start or
    end scores, as in crfsuite):

    ``(log_z, marginals, edges)``: the log partition function of each sequence (B,), the per-token marginals
    (T, B, L) (zero on padding) and the pairwise marginals ``P(y_t = i, y_t+1 = j | x)`` summed over every
    position of every sequence (L, L) — the expected transition counts.  Same scaled recursion as
    :func:`forward_backward_time_major`, with the normalisers kept for ``log_z``; sequences whose potentials
    are too extreme for it are recomputed in log space.  Works in the precision of ``unary`` (float32 halves
    the time; ``log_z`` is accumulated in float64 either way).

    It is :func:`chain_forward` then :func:`chain_backward`: a caller that may need ``log_z`` alone (a line
    search trying a step) runs the first half, and the second only when it needs the marginals.
    """
    return chain_backward(chain_forward(unary, lengths, transition))


@dataclass(slots=True)
class ChainForward:
    """The forward half of :func:`chain_statistics` on a batch of padded sequences: ``log_z`` per sequence, and
    what the backward half reads (the scaled potentials, forward vectors and their normalisers; None for an
    empty batch). Arrays are time-major: (T, B, L) and (T, B)."""

    unary: np.ndarray
    lengths: np.ndarray
    transition: np.ndarray
    log_z: np.ndarray
    inside: np.ndarray | None = None
    u: np.ndarray | None = None
    trans_exp: np.ndarray | None = None
    alpha: np.ndarray | None = None
    norms: np.ndarray | None = None
    bad: np.ndarray | None = None  # the sequences whose log_z was recomputed in log space


def chain_forward(unary: np.ndarray, lengths: np.ndarray, transition: np.ndarray) -> ChainForward:
    """The forward recursion of :func:`chain_statistics` on ``unary`` (T, B, L): ``log_z`` of each sequence
    (recomputed in log space where the scaled recursion fails), kept with what :func:`chain_backward` needs.

    Each step is one (B, L) by (L, L) product on contiguous rows; row sums are products with a vector of ones
    and divisions products with reciprocals, as in :func:`forward_backward_time_major`."""
    unary = _as_float(unary)
    transition = np.asarray(transition, dtype=unary.dtype)
    n_pos, n_seq, n_labels = unary.shape
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if n_seq == 0 or n_pos == 0:
        return ChainForward(unary, lengths, transition, np.zeros(n_seq))
    inside = np.arange(n_pos)[:, None] < lengths[None, :]  # (T, B)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # The first label's score as each row's shift, unless another lies too far above it (see
        # forward_backward_time_major); the shifts come back in log_z.
        shift = unary[:, :, 0].copy()
        u = unary - shift[:, :, None]
        if not u.max() <= _SHIFT_HEADROOM:
            shift = unary.max(axis=2)
            np.subtract(unary, shift[:, :, None], out=u)
        np.exp(u, out=u)
        top = transition.max()
        trans_exp = np.exp(transition - top)
        ones = np.ones(n_labels, dtype=u.dtype)
        alpha = np.empty_like(u)
        norms = np.empty((n_pos, n_seq), dtype=u.dtype)
        np.matmul(u[0], ones, out=norms[0])
        np.multiply(u[0], np.reciprocal(norms[0])[:, None], out=alpha[0])
        for t in range(1, n_pos):
            a = alpha[t]
            np.matmul(alpha[t - 1], trans_exp, out=a)
            a *= u[t]
            np.matmul(a, ones, out=norms[t])
            a *= np.reciprocal(norms[t])[:, None]
        steps = np.log(norms, dtype=np.float64) + shift + float(top)
        log_z = np.where(inside, steps, 0.0).sum(axis=0) - float(top)
    bad = ~np.isfinite(log_z)
    for i in np.flatnonzero(bad).tolist():
        log_z[i] = _log_z_log(unary[: int(lengths[i]), i].astype(np.float64), transition.astype(np.float64))
    return ChainForward(unary, lengths, transition, log_z, inside, u, trans_exp, alpha, norms, bad)


def chain_backward(forward: ChainForward) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rest of :func:`chain_statistics` from its forward half: ``(log_z, marginals, edges)``, sequences
    whose scaled recursion failed recomputed in log space. It overwrites the forward half's arrays."""
    unary, lengths, transition, inside = forward.unary, forward.lengths, forward.transition, forward.inside
    n_pos, n_seq, n_labels = unary.shape
    log_z = forward.log_z
    if n_seq == 0 or n_pos == 0:
        return log_z, np.zeros_like(unary), np.zeros((n_labels, n_labels))
    u, trans_exp, alpha, norms = forward.u, forward.trans_exp, forward.alpha, forward.norms
    ending = [[] for _ in range(n_pos)]
    for i, n in enumerate(lengths.tolist()):
        if n:
            ending[n - 1].append(i)
    ones = np.ones(n_labels, dtype=u.dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        flat = np.full(n_labels, 1.0 / n_labels, dtype=u.dtype)
        trans_exp_t = np.ascontiguousarray(trans_exp.T)
        beta = np.empty_like(u)
        beta[n_pos - 1] = flat
        scratch = np.empty((n_seq, n_labels), dtype=u.dtype)
        for t in range(n_pos - 2, -1, -1):
            b = beta[t]
            np.multiply(u[t + 1], beta[t + 1], out=scratch)
            np.matmul(scratch, trans_exp_t, out=b)
            b *= np.reciprocal(b @ ones)[:, None]
            if ending[t]:
                b[ending[t]] = flat  # a sequence ends here: its backward vectors start again
        post = alpha * beta
        sums = (post.reshape(-1, n_labels) @ ones).reshape(n_pos, n_seq)
        # Pairwise marginals of (t, t+1): alpha_t(i) E(i, j) u_t+1(j) beta_t+1(j), normalised per position by
        # norm_t+1 * <alpha_t+1, beta_t+1>; summed over all positions at once as one product.
        follows = inside[1:]
        left = alpha[:-1][follows] * np.reciprocal(norms[1:][follows] * sums[1:][follows])[:, None]
        right = np.multiply(u[1:], beta[1:], out=beta[1:])[follows]
        edges = ((left.T @ right) * trans_exp).astype(np.float64)
        post *= np.reciprocal(sums)[:, :, None]
    post[~inside] = 0.0
    bad = forward.bad | ~np.isfinite(post).all(axis=(0, 2))
    if bad.any() or not np.isfinite(edges).all():
        # Recompute the failed sequences exactly; the edge sums are recomputed whole (rare: extreme weights).
        log_z = log_z.copy()
        edges = np.zeros((n_labels, n_labels))
        for i in range(n_seq):
            n = int(lengths[i])
            seq_log_z, seq_post, seq_edges = _statistics_log(unary[:n, i].astype(np.float64),
                                                             transition.astype(np.float64))
            if bad[i]:
                log_z[i], post[:n, i] = seq_log_z, seq_post
            edges += seq_edges
    return log_z, post, edges


def _log_z_log(unary: np.ndarray, transition: np.ndarray) -> float:
    """log Z of one sequence by the log-space forward recursion."""
    if unary.shape[0] == 0:
        return 0.0
    return float(_logsumexp(_log_alpha(unary, transition)[-1], axis=0))


def _log_alpha(unary: np.ndarray, transition: np.ndarray) -> np.ndarray:
    """The log-space forward vectors of one non-empty sequence (n_pos, n_labels)."""
    log_alpha = np.empty(unary.shape)
    log_alpha[0] = unary[0]
    for t in range(1, unary.shape[0]):
        log_alpha[t] = _logsumexp(log_alpha[t - 1][:, None] + transition, axis=0) + unary[t]
    return log_alpha


def _statistics_log(unary: np.ndarray, transition: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """log Z, marginals and summed pairwise marginals of one sequence by the log-space recursion."""
    n_pos, n_labels = unary.shape
    if n_pos == 0:
        return 0.0, np.zeros((0, n_labels)), np.zeros((n_labels, n_labels))
    log_alpha = _log_alpha(unary, transition)
    log_beta = np.zeros((n_pos, n_labels))
    for t in range(n_pos - 2, -1, -1):
        log_beta[t] = _logsumexp(transition + (unary[t + 1] + log_beta[t + 1])[None, :], axis=1)
    log_z = float(_logsumexp(log_alpha[-1], axis=0))
    post = np.exp(log_alpha + log_beta - log_z)
    edges = np.zeros((n_labels, n_labels))
    for t in range(n_pos - 1):
        edges += np.exp(log_alpha[t][:, None] + transition + (unary[t + 1] + log_beta[t + 1])[None, :] - log_z)
    return log_z, post, edges


def length_batches(lengths: np.ndarray, max_padding: float, max_bucket_tokens: int):
    """Indices of chains grouped by similar length (padding at most ``max_padding``, at most
    ``max_bucket_tokens`` padded positions a group), shortest first: the batches of the forward-backward."""
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order].tolist()
    n = len(ordered)
    i = 0
    while i < n:
        shortest = ordered[i]
        limit = max(shortest + 1, int(shortest * (1.0 + max_padding)))
        j = i + 1
        while j < n and ordered[j] <= limit and (j - i + 1) * ordered[j] <= max_bucket_tokens:
            j += 1
        yield order[i:j]
        i = j
