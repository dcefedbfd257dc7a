"""Settings described once: a parameter's name, type, range, default and one line of help.

A tagger lists its parameters in ``PARAMETERS`` beside its ``__init__`` (and the ones a person never sets,
such as a feature cache, in ``INTERNAL_PARAMETERS``); a query strategy kind lists them in
``learning.core.strategies``; the self-training policy in ``learning.core.self_training``. Forms, the command
line and documentation are built from these descriptions, so a range or a default is written in one place.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

__all__ = ["Param", "defaults", "overrides"]


@dataclass(frozen=True)
class Param:
    """One setting: ``type`` is ``bool``, ``int``, ``float`` or ``str``; ``minimum``/``maximum`` bound a number
    (inclusive; ``None`` is unbounded); ``choices`` are the values a ``str`` may take; ``title`` is what a person
    reads where the name does not say it (the papers' symbols)."""

    name: str
    type: type
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    title: str = ""

    def __post_init__(self) -> None:
        if self.type not in (bool, int, float, str):
            raise TypeError(f"parameter {self.name!r}: type must be bool, int, float or str, not {self.type!r}")
        if self.choices and self.default not in self.choices:
            raise ValueError(f"parameter {self.name!r}: default {self.default!r} is not one of its choices")
        if self.minimum is not None and self.default < self.minimum:
            raise ValueError(f"parameter {self.name!r}: default {self.default!r} is below {self.minimum!r}")
        if self.maximum is not None and self.default > self.maximum:
            raise ValueError(f"parameter {self.name!r}: default {self.default!r} is above {self.maximum!r}")

    @property
    def label(self) -> str:
        """``title``, else the name as a person reads it: ``max_iterations`` → ``Max iterations``."""
        if self.title:
            return self.title
        words = self.name.replace("_", " ")
        return words[:1].upper() + words[1:]


def defaults(params: Iterable[Param]) -> dict[str, Any]:
    """``{name: default}`` of ``params``."""
    return {p.name: p.default for p in params}


def overrides(params: Iterable[Param], values: Mapping[str, Any], *, base: Mapping[str, Any] | None = None,
              kept: Iterable[str] = ()) -> dict[str, Any]:
    """The ``values`` worth storing: those that differ from ``base`` (the parameters' defaults unless given), and
    those named in ``kept`` (a setting stored before stays stored, even at its default value)."""
    base = defaults(params) if base is None else base
    kept = set(kept)
    return {p.name: values[p.name] for p in params
            if p.name in values and (values[p.name] != base.get(p.name) or p.name in kept)}
