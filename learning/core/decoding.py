"""From per-token marginals to the labels a model shows: token-wise, and as one BIO-consistent sequence.

Two decodings of a document's marginals (an array (tokens, labels), label order as in ``labels_``):

- **Token-wise** (:func:`decode_tokenwise`): every token takes its most probable label, or, with a recall
  bias (τ_main, τ_alt) (ALGORITHMS.md §3), a token whose most probable label is O but with
  P(O) < τ_main is relabelled as its most probable PHI label when that label's marginal is ≥ τ_alt; a
  relabelled ``I-X`` whose left neighbour is neither ``B-X`` nor ``I-X`` becomes ``B-X``. This is the rule
  the thresholds are tuned with (``learning.core.recall_bias``). Decided token by token, it may produce
  sequences no tagger would (``O I-X``, ``B-X I-Y``), which read back as an entity cut into pieces.

- **BIO-consistent** (:func:`decode`, constrained posterior decoding): the label sequence with the highest
  sum of per-token scores among the valid ones, found by Viterbi over the whole document. A sequence is
  valid when every ``I-X`` follows ``B-X`` or ``I-X``; a document does not open with ``I-X`` (where the
  label set has no ``B-X``, ``I-X`` may open a span: there is no other way to tag X). The score of label
  l on token t is log P(l | x)_t; with a recall bias two changes write the thresholds' intent into it:

  * on every token the token-wise rule shows as PHI (its most probable label, or the one the thresholds
    relabel it to), O is not a candidate (score −∞): what the model or the thresholds call PHI is shown as
    PHI whatever its neighbours, so the token-level decisions the thresholds were tuned on are all kept;
  * on a token the thresholds relabel to ``I-X``, ``B-X`` scores as much as ``I-X``: the thresholds choose
    the type X, and whether the token opens or continues an X is left to the sequence (the token-wise
    rule's repair, written as a score).

  Without a recall bias any label may be dropped or added where that makes the sequence valid at the
  lowest cost; with one, tokens can only be added to the PHI the token-wise rule shows.

- **Per-label thresholds**: a recall bias is either one pair (τ_main, τ_alt) for every PHI type or a mapping
  from PHI type to its pair (``{"NOMBRE": (0.9, 0.01), ...}``). With a mapping, a token is judged by the pair
  of the type the rule would relabel it to (the type of its most probable PHI label), so each type's pair
  decides alone over the tokens that could become that type (this is what lets
  ``learning.core.recall_bias.tune_recall_bias_per_label`` tune the types one by one); a type the mapping
  does not name is never relabelled. Everything else — the repair, the scores, the Viterbi — is the same.

  With these scores the token-wise labels score highest token by token, so wherever they already form a
  valid sequence they are a best valid sequence, and they are returned as they are. Elsewhere the decoder
  mends the sequence at the cheapest place: ``B-X I-X O I-X I-X`` where the third token's P(I-X) is a close
  second to P(O) becomes one X, not two. Among equally good predecessors the token-wise label is kept.
  (An inner token whose ``B-X`` is more probable than its ``I-X`` still opens a second X: ``B-X I-X B-X``
  is valid, and the marginals alone cannot tell it from two adjacent entities.)

:func:`decode_many` decodes many documents (a shard of the pool) at once: those whose token-wise labels are
not valid share one Viterbi, with exactly the labels :func:`decode` gives each of them.

The span confidence and possible-miss rules that read these labels are in ``learning.core.pre_annotation``.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from corpus.bio import OUTSIDE, bio_to_spans
from corpus.text import Token
from corpus.types import Span

__all__ = [
    "RecallBiasThresholds",
    "allowed_transitions",
    "decode",
    "decode_many",
    "decode_tokenwise",
    "decoded_spans",
    "decoded_tags",
    "is_bio_valid",
    "label_thresholds",
    "outside_index",
    "phi_candidates",
]

#: The floor under a marginal before its logarithm: a zero marginal is very unlikely, not impossible.
_FLOOR = np.finfo(np.float64).tiny

#: A recall bias: one (τ_main, τ_alt) for every PHI type, or a pair per PHI type (module docstring).
RecallBiasThresholds = tuple[float, float] | Mapping[str, tuple[float, float]]


def outside_index(labels: Sequence[str]) -> int:
    """The column of ``"O"`` in ``labels``; ``ValueError`` when the label set has none."""
    try:
        return list(labels).index(OUTSIDE)
    except ValueError:
        raise ValueError(f"the label set has no {OUTSIDE!r}: {list(labels)}") from None


def _as_marginals(marginals: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    m = np.asarray(marginals, dtype=np.float64)
    if m.ndim != 2 or m.shape[1] != len(labels):
        raise ValueError(f"marginals of shape {m.shape} do not match {len(labels)} labels")
    return m


def phi_candidates(marginals: np.ndarray, o_index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token: the argmax label, P(O) and the index of the most probable PHI label."""
    m = np.asarray(marginals, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"marginals must be a (tokens, labels) array, got shape {m.shape}")
    if m.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), m[:, o_index], np.zeros(0, dtype=np.int64)
    if o_index == 0 and m.shape[1] > 1:
        # One argmax over the other columns instead of a masked copy and two argmaxes, with the same ties:
        # a row whose other columns are all -inf has column 0 as its "PHI" label (O is -inf too when
        # masked), and column 0 is the argmax where it reaches the others' maximum (first index) or is NaN.
        best_phi = m[:, 1:].argmax(axis=1) + 1
        top_phi = m[np.arange(m.shape[0]), best_phi]
        best_phi[top_phi == -np.inf] = 0
        argmax = np.where((m[:, 0] >= top_phi) | np.isnan(m[:, 0]), 0, best_phi)
    else:
        argmax = m.argmax(axis=1)
        masked = m.copy()
        masked[:, o_index] = -np.inf
        best_phi = masked.argmax(axis=1)
    return argmax, m[:, o_index], best_phi


def label_thresholds(labels: Sequence[str], recall_bias: RecallBiasThresholds) -> tuple[np.ndarray, np.ndarray]:
    """(τ_main, τ_alt) per column of ``labels``: the pair of the column's PHI type. A type a per-type mapping
    does not name gets (0, ∞), which relabels nothing; the O column's pair is never read."""
    if not isinstance(recall_bias, Mapping):
        tau_main, tau_alt = recall_bias
        return np.full(len(labels), float(tau_main)), np.full(len(labels), float(tau_alt))
    tau_main = np.zeros(len(labels))
    tau_alt = np.full(len(labels), np.inf)
    for j, label in enumerate(labels):
        pair = recall_bias.get(label[2:]) if label != OUTSIDE else None
        if pair is not None:
            tau_main[j], tau_alt[j] = pair
    return tau_main, tau_alt


def _relabelled(m: np.ndarray, labels: Sequence[str], recall_bias: RecallBiasThresholds | None):
    """(labels chosen token by token before any repair, the most probable PHI labels, the mask of the tokens
    the thresholds relabel) — the §3 rule, with the pair of each token's most probable PHI type."""
    if recall_bias is None:
        argmax = m.argmax(axis=1) if m.shape[0] else np.zeros(0, dtype=np.int64)
        return argmax, argmax, np.zeros(m.shape[0], dtype=bool)
    tau_main, tau_alt = label_thresholds(labels, recall_bias)
    o = outside_index(labels)
    argmax, p_o, best_phi = phi_candidates(m, o)
    if len(labels) < 2:
        return argmax, best_phi, np.zeros(m.shape[0], dtype=bool)
    relabel = (
        (argmax == o) & (p_o < tau_main[best_phi]) & (m[np.arange(m.shape[0]), best_phi] >= tau_alt[best_phi])
    )
    return np.where(relabel, best_phi, argmax), best_phi, relabel


def _repaired(chosen: np.ndarray, relabel: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """A relabelled ``I-X`` whose left neighbour is neither ``B-X`` nor ``I-X`` becomes ``B-X``."""
    rows = np.flatnonzero(relabel)
    if rows.shape[0] == 0:
        return chosen.copy()
    opener = _bio_structure(tuple(labels)).opener[chosen[rows]]
    rows, opener = rows[opener >= 0], opener[opener >= 0]
    # The left neighbour as chosen: a repair only turns an I-X into the B-X of the same X, so whether the
    # neighbour is a B-X or an I-X does not depend on its own repair.
    previous = chosen[np.maximum(rows - 1, 0)]
    continues = (rows > 0) & ((previous == opener) | (previous == chosen[rows]))
    out = chosen.copy()
    out[rows[~continues]] = opener[~continues]
    return out


def decode_tokenwise(
    marginals: np.ndarray, labels: Sequence[str], recall_bias: RecallBiasThresholds | None = None
) -> np.ndarray:
    """Label indices (into ``labels``) decided token by token: the argmax, or the recall-bias rule."""
    m = _as_marginals(marginals, labels)
    chosen, _, relabel = _relabelled(m, labels, recall_bias)
    return _repaired(chosen, relabel, labels)


def allowed_transitions(labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(allowed, opens)``: ``allowed[i, j]`` when label j may follow label i, ``opens[j]`` when a document
    may start with label j."""
    structure = _bio_structure(tuple(labels))
    return structure.allowed.copy(), structure.opens.copy()


class _BioStructure(NamedTuple):
    allowed: np.ndarray  # (labels, labels) bool, as allowed_transitions
    opens: np.ndarray  # (labels,) bool
    transition: np.ndarray  # (labels, labels): 0 where allowed, -inf elsewhere
    opening: np.ndarray  # (labels,): 0 where a document may open, -inf elsewhere
    opener: np.ndarray  # (labels,): the column of B-X for an I-X whose B-X is a label, -1 for the others


@lru_cache(maxsize=64)
def _bio_structure(labels: tuple[str, ...]) -> _BioStructure:
    """What decoding needs of a label set, built once per label set (arrays read-only)."""
    index = {label: i for i, label in enumerate(labels)}
    n = len(labels)
    allowed = np.ones((n, n), dtype=bool)
    opens = np.ones(n, dtype=bool)
    opener = np.full(n, -1, dtype=np.intp)
    for j, label in enumerate(labels):
        if not label.startswith("I-") or f"B-{label[2:]}" not in index:
            continue
        kind = label[2:]
        opener[j] = index[f"B-{kind}"]
        allowed[:, j] = False
        allowed[opener[j], j] = True
        allowed[j, j] = True
        opens[j] = False
    structure = _BioStructure(allowed, opens, np.where(allowed, 0.0, -np.inf), np.where(opens, 0.0, -np.inf), opener)
    for array in structure:
        array.flags.writeable = False
    return structure


def is_bio_valid(indices: np.ndarray, labels: Sequence[str]) -> bool:
    """Whether the label indices form a valid BIO sequence (see the module's docstring)."""
    chosen = np.asarray(indices, dtype=np.intp)
    if chosen.shape[0] == 0:
        return True
    structure = _bio_structure(tuple(labels))
    return bool(structure.opens[chosen[0]] and structure.allowed[chosen[:-1], chosen[1:]].all())


def _scores(
    m: np.ndarray, labels: Sequence[str], recall_bias: RecallBiasThresholds | None, chosen: np.ndarray,
    best_phi: np.ndarray, relabel: np.ndarray,
) -> np.ndarray:
    """Per-token label scores: log marginals, with the recall bias written in (module docstring)."""
    scores = np.log(np.maximum(m, _FLOOR))
    if recall_bias is None:
        return scores
    o = outside_index(labels)
    scores[chosen != o, o] = -np.inf
    rows = np.flatnonzero(relabel)
    opener = _bio_structure(tuple(labels)).opener
    inside = rows[opener[best_phi[rows]] >= 0]
    scores[inside, opener[best_phi[inside]]] = scores[inside, best_phi[inside]]
    return scores


def _viterbi(scores: np.ndarray, labels: Sequence[str], preferred: np.ndarray) -> np.ndarray:
    """The valid sequence of highest total score; ties between predecessors go to ``preferred``'s label."""
    n, n_labels = scores.shape
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    structure = _bio_structure(tuple(labels))
    transition = structure.transition
    columns = np.arange(n_labels)
    back = np.zeros((n, n_labels), dtype=np.intp)
    keep = np.zeros((n, n_labels), dtype=bool)
    candidates = np.empty((n_labels, n_labels))
    delta = scores[0] + structure.opening
    for t in range(1, n):
        np.add(delta[:, None], transition, out=candidates)  # (previous, current)
        best = candidates.argmax(axis=0, out=back[t])
        delta = candidates[best, columns]
        np.equal(candidates[preferred[t - 1]], delta, out=keep[t])
        delta += scores[t]
    # Where the preferred label is among the best predecessors, it is the one kept.
    back[1:][keep[1:]] = np.broadcast_to(preferred[:-1, None], (n - 1, n_labels))[keep[1:]]
    path = np.empty(n, dtype=np.intp)
    last = int(delta.argmax())
    current = int(preferred[-1]) if delta[preferred[-1]] == delta[last] else last
    path[-1] = current
    pointers = back.tolist()
    for t in range(n - 1, 0, -1):
        current = pointers[t][current]
        path[t - 1] = current
    return path


def decode(
    marginals: np.ndarray, labels: Sequence[str], recall_bias: RecallBiasThresholds | None = None
) -> np.ndarray:
    """Label indices (into ``labels``) of the best valid BIO sequence; ``recall_bias`` is (τ_main, τ_alt) or a
    pair per PHI type.

    Identical to :func:`decode_tokenwise` wherever that is already a valid sequence.
    """
    return decode_many([marginals], labels, recall_bias)[0]


def decode_many(
    marginals: Sequence[np.ndarray], labels: Sequence[str], recall_bias: RecallBiasThresholds | None = None
) -> list[np.ndarray]:
    """:func:`decode` of each document. The documents whose token-wise labels are not a valid sequence share
    one Viterbi that steps through all of them at once: the same labels, ties included, in less time than
    one Viterbi per document (the steps cost little more for many documents than for one)."""
    out: list[np.ndarray | None] = []
    pending: list[tuple[int, np.ndarray, np.ndarray]] = []
    for m in marginals:
        m = _as_marginals(m, labels)
        chosen, best_phi, relabel = _relabelled(m, labels, recall_bias)
        tokenwise = _repaired(chosen, relabel, labels)
        if is_bio_valid(tokenwise, labels):
            out.append(tokenwise)
        else:
            # Ties go to the labels chosen before the repair: a relabelled I-X continues an X where it can.
            pending.append((len(out), _scores(m, labels, recall_bias, chosen, best_phi, relabel), chosen))
            out.append(None)
    # Together where that saves steps (the longest document sets their number), and only scores without NaN
    # or +inf, for which the two recursions are the same; the others one by one.
    together = [item for item in pending if bool((item[1] < np.inf).all())]
    lengths = [scores.shape[0] for _, scores, _ in together]
    if len(together) < 2 or sum(lengths) < 1.5 * max(lengths):
        together = []
    if together:
        paths = _viterbi_together([scores for _, scores, _ in together], [chosen for _, _, chosen in together],
                                  _bio_structure(tuple(labels)))
        for (i, _, _), path in zip(together, paths):
            out[i] = path
    for i, scores, chosen in pending:
        if out[i] is None:
            out[i] = _viterbi(scores, labels, chosen)
    return out


def _viterbi_together(
    scores: list[np.ndarray], preferred: list[np.ndarray], structure: _BioStructure
) -> list[np.ndarray]:
    """:func:`_viterbi` of several documents (scores without NaN or +inf) in one pass over their positions.

    The same recursion, written for the structure of BIO: a label that may follow any label (O, B-X, an I-X
    without B-X) takes the best of all previous labels, the same for all of them; an I-X whose B-X is a label
    takes the better of B-X and I-X. So a step is a few operations on (documents, labels) arrays instead of
    (labels, labels) ones per document; the sums and the ties (the preferred label, else the first best) are
    those of :func:`_viterbi`, so the paths are identical.
    """
    inner = np.flatnonzero(structure.opener >= 0)  # the I-X whose B-X is a label
    opener = structure.opener[inner]
    first_of_two = np.minimum(opener, inner)
    lengths = np.array([s.shape[0] for s in scores], dtype=np.intp)
    order = np.argsort(-lengths, kind="stable")  # longest first: the documents still going are a prefix
    n_docs, width, n_labels = len(scores), int(lengths.max()), scores[0].shape[1]
    steps = np.zeros((width, n_docs, n_labels))
    wanted = np.zeros((width, n_docs), dtype=np.intp)
    for slot, i in enumerate(order.tolist()):
        steps[: lengths[i], slot] = scores[i]
        wanted[: lengths[i], slot] = preferred[i]
    going = (lengths[order][None, :] > np.arange(width)[:, None]).sum(axis=1)

    best_any = np.zeros((width, n_docs), dtype=np.intp)  # the first best previous label
    keeps_wanted = np.zeros((width, n_docs), dtype=bool)  # ... unless the preferred one is as good
    from_opener = np.zeros((width, n_docs, inner.shape[0]))  # an I-X's two candidates: B-X and I-X
    from_inner = np.zeros((width, n_docs, inner.shape[0]))
    rows = np.arange(n_docs)
    delta = steps[0] + structure.opening
    for t in range(1, width):
        k = going[t]
        previous = delta[:k]
        best = previous.argmax(axis=1)
        top = previous[rows[:k], best]
        best_any[t, :k] = best
        keeps_wanted[t, :k] = previous[rows[:k], wanted[t - 1, :k]] == top
        opened, continued = previous[:, opener], previous[:, inner]
        from_opener[t, :k], from_inner[t, :k] = opened, continued
        current = steps[t, :k] + top[:, None]
        current[:, inner] = steps[t, :k][:, inner] + np.maximum(opened, continued)
        delta[:k] = current

    # Back pointers, as _viterbi keeps them: the preferred previous label where it is among the best.
    before = np.zeros_like(wanted)
    before[1:] = wanted[:-1]
    back_any = np.where(keeps_wanted, before, best_any)
    top = np.maximum(from_opener, from_inner)
    best = np.where(from_opener > from_inner, opener, np.where(from_inner > from_opener, inner, first_of_two))
    liked = before[:, :, None]
    keep = ((liked == opener) & (from_opener == top)) | ((liked == inner) & (from_inner == top)) | (top == -np.inf)
    back_inner = np.where(keep, liked, best)
    column = np.full(n_labels, -1)
    column[inner] = np.arange(inner.shape[0])
    column = column.tolist()

    paths: list[np.ndarray] = [np.empty(0, dtype=np.intp)] * n_docs
    for slot, i in enumerate(order.tolist()):
        n, last_delta, liked_last = int(lengths[i]), delta[slot], int(preferred[i][-1])
        last = int(last_delta.argmax())
        current = liked_last if last_delta[liked_last] == last_delta[last] else last
        path = np.empty(n, dtype=np.intp)
        path[-1] = current
        any_pointers, inner_pointers = back_any[:n, slot].tolist(), back_inner[:n, slot].tolist()
        for t in range(n - 1, 0, -1):
            current = any_pointers[t] if column[current] < 0 else inner_pointers[t][column[current]]
            path[t - 1] = current
        paths[i] = path
    return paths


def decoded_tags(
    marginals: np.ndarray, labels: Sequence[str], recall_bias: RecallBiasThresholds | None = None
) -> list[str]:
    """BIO tags per token of :func:`decode`."""
    return [labels[i] for i in decode(marginals, labels, recall_bias).tolist()]


def decoded_spans(
    tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str],
    recall_bias: RecallBiasThresholds | None = None,
) -> list[Span]:
    """Character spans of one document from :func:`decode`."""
    if len(tokens) != np.asarray(marginals).shape[0]:
        raise ValueError(f"{len(tokens)} tokens but marginals for {np.asarray(marginals).shape[0]}")
    return bio_to_spans(tokens, decoded_tags(marginals, labels, recall_bias))
