"""Taggers by name, for the command line, the Celery tasks and project settings.

``make_tagger("crf", max_iterations=50)`` returns a fresh, unfitted tagger; ``tagger_factory(...)`` returns
a callable that makes one each time it is called (what simulation and self-training take): a
:func:`~learning.core.taggers.base.clone` of a prototype checked up front.  The heavy
taggers are imported only when asked for, so naming the unigram tagger never loads torch.
"""
from __future__ import annotations

import importlib
import json
from functools import partial
from typing import Any, Callable

from learning.core.taggers.base import BaseTagger, clone

__all__ = [
    "LIVE_DEFAULTS", "TAGGERS", "UnknownTaggerError", "live_params", "make_tagger", "parse_params", "tagger_class",
    "tagger_factory",
]

# name -> (module, class)
TAGGERS: dict[str, tuple[str, str]] = {
    "unigram": ("learning.core.taggers.unigram", "UnigramTagger"),
    "crf": ("learning.core.taggers.crf", "CRFTagger"),
    "flair": ("learning.core.taggers.flair_tagger", "BiLSTMCRFTagger"),
}
_ALIASES = {"bilstm-crf": "flair", "bilstm_crf": "flair", "bilstmcrf": "flair"}

#: What the live loop sets unless a project says otherwise: a CRF retrain continues from the current model.
#: The dashboard's simulations use the same, so their curves are what the loop would produce.
LIVE_DEFAULTS: dict[str, dict[str, Any]] = {"crf": {"warm_start": True, "cold_refit": "background"}}


class UnknownTaggerError(ValueError):
    """A tagger name or parameter that does not exist."""


def _canonical(name: str) -> str:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in TAGGERS:
        raise UnknownTaggerError(f"unknown tagger {name!r}; choose one of: {', '.join(TAGGERS)}")
    return key


def tagger_class(name: str) -> type[BaseTagger]:
    module, cls = TAGGERS[_canonical(name)]
    return getattr(importlib.import_module(module), cls)


def live_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` over the live loop's defaults for the tagger called ``name``."""
    return {**LIVE_DEFAULTS.get(_canonical(name), {}), **params}


def make_tagger(name: str, *, seed: int | None = None, **params: Any) -> BaseTagger:
    """A fresh tagger called ``name`` with ``params``; ``seed`` goes to taggers that take one.

    Unknown parameters raise :class:`UnknownTaggerError` naming the ones the tagger takes.
    """
    cls = tagger_class(name)
    accepted = cls._get_param_names()
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise UnknownTaggerError(
            f"tagger {name!r} takes no parameter(s) {', '.join(unknown)}; it takes: {', '.join(accepted) or 'none'}"
        )
    if seed is not None and "seed" in accepted and "seed" not in params:
        params["seed"] = seed
    return cls(**params)


def tagger_factory(name: str, *, seed: int | None = None, **params: Any) -> Callable[[], BaseTagger]:
    """A callable returning a fresh, unfitted ``make_tagger(name, seed=seed, **params)`` at each call.

    The name and parameters are checked now, so a typo fails before any training starts; each call
    returns a :func:`~learning.core.taggers.base.clone` of that checked prototype.
    """
    return partial(clone, make_tagger(name, seed=seed, **params))


def parse_params(items: list[str]) -> dict[str, Any]:
    """Tagger parameters from ``NAME=VALUE`` text: ``["max_iterations=50"]`` -> ``{"max_iterations": 50}``.

    VALUE is read as JSON when it can be (numbers, booleans, lists), as text otherwise.
    """
    params: dict[str, Any] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise UnknownTaggerError(f"write tagger parameters as NAME=VALUE, got {item!r}")
        try:
            params[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[name.strip()] = value
    return params
