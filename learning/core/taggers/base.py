"""What every tagger offers, and the conversions between marginals, tags and spans they share.

A tagger is a scikit-learn style estimator over :class:`~corpus.types.Document` objects:

* ``fit(docs) -> self`` learns from the documents' gold spans;
* ``predict_marginals(docs) -> list[np.ndarray]``: per document an array (n_tokens, n_labels) whose rows
  sum to 1, tokens being ``tokenize(doc.text)`` and columns following ``labels_`` ('O' included);
* ``predict_tags(docs) -> list[list[str]]`` and ``predict(docs) -> list[list[Span]]``.

Everything downstream (query strategies, self-training, recall bias, metrics) works from those arrays.
:class:`Tagger` is that contract as a protocol (what callers check against); :class:`BaseTagger` is the
base class the project's taggers share: parameters from ``__init__`` (``get_params``/``set_params``, a
``repr`` of the non-default ones, :func:`clone`) and argmax prediction from the marginals.
"""
from __future__ import annotations

import inspect
import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence, TypeVar, runtime_checkable

from corpus.bio import OUTSIDE, bio_labels, bio_to_spans, label_of, spans_to_bio
from corpus.text import Token, tokenize
from corpus.types import Document, Span
from learning.core.params import Param

if TYPE_CHECKING:  # numpy is imported where a tagger computes, not by the web processes that list taggers
    import numpy as np

__all__ = [
    "Tagger",
    "BaseTagger",
    "clone",
    "NotFittedError",
    "marginals_to_tags",
    "marginals_to_spans",
    "gold_tags",
    "labels_from_tags",
    "training_threads",
]


class NotFittedError(RuntimeError):
    """A prediction was asked of a tagger that has not been fitted."""


@runtime_checkable
class Tagger(Protocol):
    labels_: list[str]

    def fit(self, docs: Sequence[Document]) -> "Tagger": ...

    def predict(self, docs: Sequence[Document]) -> list[list[Span]]: ...

    def predict_tags(self, docs: Sequence[Document]) -> list[list[str]]: ...

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]: ...

    def tokens(self, docs: Sequence[Document]) -> list[list[Token]]: ...


class BaseTagger(ABC):
    """Base class of the project's taggers, in the manner of scikit-learn's ``BaseEstimator``.

    A subclass takes its parameters as explicit arguments of ``__init__`` and stores each under its own
    name, doing nothing else there; learning happens in ``fit``, whose results are attributes ending in
    ``_``.  It implements ``fit`` and ``predict_marginals``; ``predict_tags`` and ``predict`` here take
    the most probable label of every token, and a tagger with a better decoder (Viterbi) overrides them.

    ``PARAMETERS`` describes the parameters a person may set (type, range, default, help; the settings form
    is built from it) and ``INTERNAL_PARAMETERS`` names the others, which the program sets; between them they
    cover ``__init__``.
    """

    PARAMETERS: ClassVar[tuple[Param, ...]] = ()
    INTERNAL_PARAMETERS: ClassVar[frozenset[str]] = frozenset()

    labels_: list[str]

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The parameter names of ``__init__``, in signature order."""
        init = cls.__init__
        if init is object.__init__:
            return []
        names = []
        for p in inspect.signature(init).parameters.values():
            if p.name == "self" or p.kind == p.VAR_KEYWORD:
                continue
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(
                    f"{cls.__name__}.__init__ takes *{p.name}; a tagger's parameters must be named explicitly"
                )
            names.append(p.name)
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The tagger's parameters by name, as passed to ``__init__``.

        ``deep`` is there for scikit-learn compatibility; no tagger holds nested estimators, so it
        changes nothing.
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> "BaseTagger":
        """Set parameters by name and return the tagger; an unknown name raises ``ValueError``.

        The new values take effect at the next ``fit``.
        """
        accepted = self._get_param_names()
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise ValueError(
                f"{type(self).__name__} has no parameter(s) {', '.join(unknown)}; "
                f"it takes: {', '.join(accepted) or 'none'}"
            )
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            name: p.default
            for name, p in inspect.signature(type(self).__init__).parameters.items()
            if p.default is not p.empty
        }
        shown = [
            f"{name}={value!r}"
            for name, value in self.get_params(deep=False).items()
            if name not in defaults or not _same_value(value, defaults[name])
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` unless ``fit`` has set some fitted (``..._``) attribute."""
        if not any(name.endswith("_") and not name.startswith("__") for name in vars(self)):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit(docs) first")

    @abstractmethod
    def fit(self, docs: Sequence[Document]) -> "BaseTagger":
        """Learn from the documents' gold spans; return the tagger."""

    @abstractmethod
    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]:
        """Per document, an array (n_tokens, n_labels) of P(label | token), columns in ``labels_`` order."""

    def tokens(self, docs: Sequence[Document]) -> list[list[Token]]:
        """The tokens of each document, those the rows of ``predict_marginals`` stand for:
        ``tokenize(doc.text)`` (a tagger that keeps them already returns the ones it kept)."""
        return [tokenize(doc.text) for doc in docs]

    def predict_tags(self, docs: Sequence[Document]) -> list[list[str]]:
        """The most probable label of every token of each document."""
        return [marginals_to_tags(m, self.labels_) for m in self.predict_marginals(docs)]

    def predict(self, docs: Sequence[Document]) -> list[list[Span]]:
        """Spans read from the most probable label of every token of each document."""
        return [
            marginals_to_spans(tokenize(doc.text), m, self.labels_)
            for doc, m in zip(docs, self.predict_marginals(docs))
        ]


def _same_value(value: Any, default: Any) -> bool:
    if value is default:
        return True
    if type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # arrays and other values without a single truth value
        return False


_T = TypeVar("_T", bound=BaseTagger)


def clone(tagger: _T) -> _T:
    """A fresh, unfitted tagger of the same class with the same parameters.

    Fitted attributes are not copied.  Parameter values are passed on as they are, not deep-copied, so a
    clone shares the (process-wide) feature cache and gazetteers of its original, as a tagger built twice
    from the same arguments would; ``set_params`` on one does not touch the other.
    """
    params = tagger.get_params(deep=False)
    fresh = type(tagger)(**params)
    for name, value in params.items():
        if getattr(fresh, name) is not value:
            raise RuntimeError(
                f"{type(tagger).__name__}.__init__ does not store parameter {name!r} as given; "
                "parameters must be stored unchanged under their own names"
            )
    return fresh


def marginals_to_tags(marginals: np.ndarray, labels: Sequence[str]) -> list[str]:
    """The most probable label of every token (ties go to the label listed first)."""
    if marginals.shape[0] == 0:
        return []
    best = marginals.argmax(axis=1)
    return [labels[i] for i in best.tolist()]


def marginals_to_spans(tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str]) -> list[Span]:
    """Spans read from the per-token most probable labels."""
    return bio_to_spans(tokens, marginals_to_tags(marginals, labels))


def gold_tags(doc: Document, tokens: Sequence[Token] | None = None) -> list[str]:
    """BIO tags of a document's gold spans over its tokens (misaligned spans claim whole tokens)."""
    tokens = tokenize(doc.text) if tokens is None else tokens
    return spans_to_bio(tokens, doc.spans)[0]


def training_threads() -> int:
    """Threads a fit may use: ``DEIDLOOP_TRAINING_THREADS``, else the processors this process may run on.

    One fit runs at a time in a process (a retrain, a de-identification model); scoring runs in shards on as
    many processes, one thread each."""
    configured = os.environ.get("DEIDLOOP_TRAINING_THREADS", "").strip()
    if configured:
        return max(1, int(configured))
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def labels_from_tags(tag_sequences: Sequence[Sequence[str]]) -> list[str]:
    """The label order taggers use: 'O', then B-/I- per type in sorted type order, only labels seen."""
    seen = {t for seq in tag_sequences for t in seq}
    types = sorted({label_of(t) for t in seen if t != OUTSIDE})
    return [lab for lab in bio_labels(types) if lab == OUTSIDE or lab in seen]
