"""Self-training with selection (ALGORITHMS.md §2), for any tagger.

The unlabelled documents are cut into sentences. Each iteration the current model tags the remaining
sentences; a sentence is selected when every token's marginal for its predicted label (the argmax) is at
or above the threshold of its kind — θ_PHI for tokens predicted PHI, θ_O for tokens predicted O. Selected
sentences join the training data as machine-labelled "silver" documents (never mixed into the gold list),
leave the pool, and a fresh model is trained on gold + silver. The loop stops when the pool is empty,
nothing is selected, or the development F1 has dropped ``patience`` times. Variant NS (``selection=False``)
adds every machine-labelled sentence at once and retrains once.

How the thresholds are set on the development set (cheap: one pass of the current model over D per
iteration, no extra training). D is cut into sentences like the pool, and every pair (θ_PHI, θ_O) of
:data:`THRESHOLD_GRID` is applied to it as if D were the pool. The machine labels of the D sentences a
pair selects are compared with gold, token by token: their PHI precision (predicted PHI tokens carrying
the gold BIO tag) and recall (gold PHI tokens predicted with that tag). θ_PHI mostly moves the precision
(a wrong PHI costs precision) and θ_O the recall (a wrong O costs recall), so the two are set apart. Among
the pairs whose selection reaches ``target_precision`` and ``target_recall`` — silver clearly better than
the model's average output — the one selecting the most D tokens wins (equal coverage: the stricter pair).
When no pair reaches the targets, nothing is selected and self-training stops: silver is only added when D
vouches for it. ``thresholds=(θ_PHI, θ_O)`` fixes both instead.

Silver sentences are :class:`~corpus.types.Document` values cut from their source documents, with
spans relative to the sentence and ``meta={"silver": True, "source": NAME, "offset": START}`` (START is
the sentence's character offset in the source). Their spans are the posterior (argmax) decoding of the
marginals, the labels the selection judged.

The returned model is the one with the best development F1 (entity level), the baseline included, and
``silver`` are the sentences it was trained on; ``history`` records every iteration.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from corpus.bio import OUTSIDE, spans_to_bio
from learning.core.metrics import evaluate
from learning.core.params import Param
from learning.core.taggers.base import marginals_to_spans
from corpus.text import Token, sentence_bounds, tokenize
from corpus.types import Document

__all__ = [
    "POLICY_PARAMETERS",
    "THRESHOLD_GRID",
    "SelfTrainingResult",
    "choose_thresholds",
    "cut_sentences",
    "select_confident",
    "self_train",
]

THRESHOLD_GRID = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99, 0.995, 0.999)

#: The live loop's self-training policy, as a lead sets it: how much of the pool is machine-labelled and how
#: :func:`self_train` (and the development split of ``learning.core.training``) runs.
POLICY_PARAMETERS = (
    Param("max_pool_documents", int, 300, "pool records drawn at random to take silver sentences from",
          minimum=1, maximum=100_000, title="Pool records to label"),
    Param("iterations", int, 1, "rounds of labelling the pool and retraining", minimum=1, maximum=20),
    Param("dev_fraction", float, 0.2, "share of the gold held out to set the thresholds and watch F1",
          minimum=0.05, maximum=0.5, title="Development share"),
    Param("selection", bool, True, "keep only sentences whose every token clears its threshold (off: add "
          "every machine-labelled sentence at once, variant NS)"),
    Param("target_precision", float, 0.99, "PHI precision the kept sentences must reach on the held-out gold",
          minimum=0.5, maximum=1.0),
    Param("target_recall", float, 0.98, "PHI recall the kept sentences must reach on the held-out gold",
          minimum=0.5, maximum=1.0),
)
_NEVER = math.inf  # a threshold no marginal reaches


@dataclass
class SelfTrainingResult:
    """Outcome of :func:`self_train`."""

    tagger: Any
    silver: list[Document]
    history: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    best_iteration: int = 0


def cut_sentences(docs: Sequence[Document]) -> list[Document]:
    """Every sentence of ``docs`` as its own document (text cut from the source, no spans)."""
    out: list[Document] = []
    for d_index, doc in enumerate(docs):
        tokens = tokenize(doc.text)
        source = doc.name or str(d_index)
        for i, j in sentence_bounds(doc.text, tokens):
            start, end = tokens[i].start, tokens[j - 1].end
            out.append(
                Document(
                    doc.text[start:end],
                    (),
                    f"{source}#{start}",
                    {"silver": True, "source": source, "offset": start},
                )
            )
    return out


def _confidence_by_kind(marginals: np.ndarray, o_index: int) -> tuple[float, float]:
    """The lowest confidence among tokens predicted PHI and among tokens predicted O (inf if none)."""
    if marginals.shape[0] == 0:
        return _NEVER, _NEVER
    predicted = marginals.argmax(axis=1)
    confidence = marginals.max(axis=1)
    is_o = predicted == o_index
    low_phi = float(confidence[~is_o].min()) if (~is_o).any() else _NEVER
    low_o = float(confidence[is_o].min()) if is_o.any() else _NEVER
    return low_phi, low_o


def select_confident(
    marginals: Sequence[np.ndarray], o_index: int, theta_phi: float, theta_o: float
) -> np.ndarray:
    """Indices of the sentences whose every token clears the threshold of its predicted kind."""
    keep = []
    for i, m in enumerate(marginals):
        m = np.asarray(m)
        if m.shape[0] == 0:
            continue
        low_phi, low_o = _confidence_by_kind(m, o_index)
        if (low_phi == _NEVER or low_phi >= theta_phi) and (low_o == _NEVER or low_o >= theta_o):
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


def choose_thresholds(
    marginals: Sequence[np.ndarray],
    gold_tags: Sequence[Sequence[str]],
    labels: Sequence[str],
    *,
    target_precision: float = 0.99,
    target_recall: float = 0.98,
) -> tuple[float, float]:
    """(θ_PHI, θ_O) from development sentences' marginals and gold BIO tags; see the module docstring.

    Returns ``(inf, inf)`` when no pair of the grid reaches both targets.
    """
    o_index = list(labels).index(OUTSIDE)
    names = np.asarray(labels, dtype=object)
    if len(marginals) != len(gold_tags):
        raise ValueError(f"{len(marginals)} sentences of marginals but {len(gold_tags)} of gold tags")
    stats = []  # per sentence: lowest PHI confidence, lowest O confidence, tp, predicted PHI, gold PHI, tokens
    for m, tags in zip(marginals, gold_tags):
        m = np.asarray(m, dtype=np.float64)
        if m.shape[0] != len(tags):
            raise ValueError(f"a sentence has {m.shape[0]} marginal rows but {len(tags)} gold tags")
        if m.shape[0] == 0:
            continue
        low_phi, low_o = _confidence_by_kind(m, o_index)
        predicted = names[m.argmax(axis=1)]
        gold = np.asarray(tags, dtype=object)
        is_phi = predicted != OUTSIDE
        stats.append((low_phi, low_o, int((is_phi & (predicted == gold)).sum()), int(is_phi.sum()),
                      int((gold != OUTSIDE).sum()), m.shape[0]))
    if not stats:
        return _NEVER, _NEVER
    low_phi, low_o, tp, n_pred, n_gold, n_tokens = (np.asarray(c, dtype=np.float64) for c in zip(*stats))
    best: tuple[float, float, float] | None = None  # (coverage, θ_PHI, θ_O)
    for theta_phi in THRESHOLD_GRID:
        for theta_o in THRESHOLD_GRID:
            chosen = (low_phi >= theta_phi) & (low_o >= theta_o)
            if not chosen.any():
                continue
            hits, predicted, wanted = tp[chosen].sum(), n_pred[chosen].sum(), n_gold[chosen].sum()
            precision = hits / predicted if predicted else 1.0
            recall = hits / wanted if wanted else 1.0
            if precision < target_precision or recall < target_recall:
                continue
            key = (float(n_tokens[chosen].sum()), theta_phi, theta_o)
            if best is None or key > best:
                best = key
    if best is None:
        return _NEVER, _NEVER
    return best[1], best[2]


def _sentence_rows(docs: Sequence[Document], tokens: Sequence[list[Token]]) -> list[list[tuple[int, int]]]:
    return [sentence_bounds(d.text, toks) for d, toks in zip(docs, tokens)]


def _shown(theta: float) -> float | None:
    return None if math.isinf(theta) else float(theta)


def _entity_f1(tagger: Any, dev: Sequence[Document], dev_tokens: list[list[Token]]) -> float:
    return float(evaluate(dev, tagger.predict(dev), dev_tokens)["entity"]["f1"])


def _silver(sentence: Document, tokens: list[Token], marginals: np.ndarray, labels: Sequence[str]) -> Document:
    spans = marginals_to_spans(tokens, np.asarray(marginals), labels)
    return Document(sentence.text, tuple(spans), sentence.name, sentence.meta)


def self_train(
    labelled: Sequence[Document],
    unlabelled: Sequence[Document],
    dev: Sequence[Document],
    *,
    tagger_factory: Callable[[], Any],
    selection: bool = True,
    thresholds: tuple[float, float] | None = None,
    target_precision: float = 0.99,
    target_recall: float = 0.98,
    patience: int = 3,
    max_iterations: int | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> SelfTrainingResult:
    """Self-train a tagger from ``labelled`` gold documents and ``unlabelled`` ones.

    ``tagger_factory()`` returns a fresh, unfitted tagger (``fit`` / ``predict`` / ``predict_marginals``
    with ``labels_``). ``dev`` (gold documents) chooses the thresholds and watches F1. Without ``dev``, only
    fixed ``thresholds`` or ``selection=False`` can run, the F1 stopping rule is off and the last model is
    returned. ``progress`` is called with each history entry; thresholds that no token can reach are
    recorded as ``None``.
    """
    if not labelled:
        raise ValueError("self-training needs at least one labelled document")
    if selection and thresholds is None and not dev:
        raise ValueError("self-training needs a development set to choose its thresholds (or fixed thresholds)")
    dev_tokens = [tokenize(d.text) for d in dev]
    dev_bounds = _sentence_rows(dev, dev_tokens)
    dev_gold_tags = []
    for d, toks, bounds in zip(dev, dev_tokens, dev_bounds):
        tags = spans_to_bio(toks, d.spans)[0]
        dev_gold_tags.extend(tags[i:j] for i, j in bounds)

    pool = cut_sentences(unlabelled)
    pool_tokens = [tokenize(s.text) for s in pool]
    gold = list(labelled)
    silver: list[Document] = []

    tagger = tagger_factory().fit(gold)
    dev_f1 = _entity_f1(tagger, dev, dev_tokens) if dev else 0.0
    history: list[dict[str, Any]] = [
        {"iteration": 0, "selected": 0, "silver": 0, "pool": len(pool), "dev_f1": dev_f1,
         "theta_phi": None, "theta_o": None}
    ]
    if progress:
        progress(history[-1])
    best = (dev_f1, 0, tagger, [])
    drops = 0
    stopped = "pool-empty"
    iteration = 0
    while pool:
        if max_iterations is not None and iteration >= max_iterations:
            stopped = "max-iterations"
            break
        iteration += 1
        labels = list(tagger.labels_)
        o_index = labels.index(OUTSIDE)
        marginals = tagger.predict_marginals(pool)
        if not selection:
            theta_phi = theta_o = 0.0
            chosen = np.arange(len(pool))
        else:
            if thresholds is not None:
                theta_phi, theta_o = thresholds
            else:
                dev_marginals = [
                    m[i:j] for m, bounds in zip(tagger.predict_marginals(dev), dev_bounds) for i, j in bounds
                ]
                theta_phi, theta_o = choose_thresholds(
                    dev_marginals, dev_gold_tags, labels,
                    target_precision=target_precision, target_recall=target_recall,
                )
            chosen = select_confident(marginals, o_index, theta_phi, theta_o)
        if chosen.size == 0:
            stopped = "nothing-selected"
            history.append(
                {"iteration": iteration, "selected": 0, "silver": len(silver), "pool": len(pool),
                 "dev_f1": dev_f1, "theta_phi": _shown(theta_phi), "theta_o": _shown(theta_o)}
            )
            if progress:
                progress(history[-1])
            break
        picked = set(chosen.tolist())
        silver = silver + [_silver(pool[i], pool_tokens[i], marginals[i], labels) for i in chosen]
        pool = [s for i, s in enumerate(pool) if i not in picked]
        pool_tokens = [t for i, t in enumerate(pool_tokens) if i not in picked]

        tagger = tagger_factory().fit(gold + silver)
        new_f1 = _entity_f1(tagger, dev, dev_tokens) if dev else 0.0
        if dev and new_f1 < dev_f1:
            drops += 1
        dev_f1 = new_f1
        history.append(
            {"iteration": iteration, "selected": len(picked), "silver": len(silver), "pool": len(pool),
             "dev_f1": dev_f1, "theta_phi": _shown(theta_phi), "theta_o": _shown(theta_o)}
        )
        if progress:
            progress(history[-1])
        if dev_f1 > best[0] or not dev:
            best = (dev_f1, iteration, tagger, silver)
        if not selection:
            stopped = "no-selection"
            break
        if drops >= patience:
            stopped = "dev-f1-dropped"
            break
    _, best_iteration, best_tagger, best_silver = best
    return SelfTrainingResult(best_tagger, list(best_silver), history, stopped, best_iteration)
