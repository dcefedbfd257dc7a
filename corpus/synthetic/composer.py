"""Shared machinery of the synthetic notes: writing text with exact spans, compiled templates, composers."""
from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Sequence

from faker import Faker

from corpus.types import Span


class NoteWriter:
    """Accumulates text; a PHI value's span is recorded from the current length as it is appended."""

    __slots__ = ("parts", "spans", "length")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[Span] = []
        self.length = 0

    def text(self, value: str) -> None:
        self.parts.append(value)
        self.length += len(value)

    def phi(self, value: str, label: str) -> None:
        start = self.length
        self.parts.append(value)
        self.length += len(value)
        self.spans.append(Span(start, self.length, label))


_SLOT = re.compile(r"\{(\w+)\}")


_LITERAL, _NUMBER, _METHOD = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Template:
    """A sentence with ``{slot}`` holes, split once into steps: a literal, a numeric filler or a slot method."""

    steps: tuple[tuple[int, object], ...]
    words: int


def compile_template(template: str, composer: type["Composer"]) -> Template:
    parts = _SLOT.split(template)
    steps: list[tuple[int, object]] = []
    for position, part in enumerate(parts):
        if position % 2 == 0:
            if part:
                steps.append((_LITERAL, part))
        elif part in composer.NUMBERS:
            steps.append((_NUMBER, composer.NUMBERS[part]))
        elif callable(getattr(composer, "_s_" + part, None)):
            steps.append((_METHOD, "_s_" + part))
        else:
            raise LookupError(f"synthetic note template uses an unknown slot {{{part}}}: {template!r}")
    literal_words = sum(len(text.split()) for text in parts[0::2])
    return Template(steps=tuple(steps), words=literal_words + 2 * (len(parts) // 2))


def ascii_fold(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", folded.lower())


@dataclass
class Draw:
    """Draws items of a pool without repeating any until the pool is used up."""

    items: list
    rng: random.Random
    _queue: list = field(default_factory=list)

    def __call__(self):
        if not self._queue:
            self._queue = list(self.items)
            self.rng.shuffle(self._queue)
        return self._queue.pop()


class Composer:
    """Shared machinery: slots are methods named ``_s_<slot>``, numeric fillers come from ``NUMBERS``."""

    NUMBERS: dict[str, tuple[float, float, int]] = {}
    DECIMAL_MARK = "."

    def __init__(self, *, rng: random.Random, faker: Faker) -> None:
        self.rng = rng
        self.faker = faker
        self.w = NoteWriter()

    @classmethod
    def compile_all(cls, templates: Sequence[str]) -> tuple[Template, ...]:
        return tuple(compile_template(template, cls) for template in templates)

    def render(self, template: Template) -> None:
        text = self.w.text
        for kind, value in template.steps:
            if kind == _LITERAL:
                text(value)
            elif kind == _NUMBER:
                text(self._number(*value))
            else:
                getattr(self, value)()

    def render_paragraph(self, templates: Sequence[Template]) -> None:
        for position, template in enumerate(templates):
            if position:
                self.w.text(" ")
            self.render(template)

    def _number(self, low: float, high: float, decimals: int) -> str:
        if decimals == 0:
            return str(self.rng.randint(int(low), int(high)))
        value = f"{self.rng.uniform(low, high):.{decimals}f}"
        return value.replace(".", self.DECIMAL_MARK)

    def _digits(self, count: int) -> str:
        return str(self.rng.randrange(10 ** (count - 1), 10 ** count))

    def _plan(self, sections: Sequence[tuple[Sequence[Template], int, int]], words: int) -> list[list[Template]]:
        """Pick sentences per section: its minimum, then more at random (up to its maximum) until ``words``.

        Chosen sentences keep the order of their pool, so a pool written in narrative order reads in order.
        """
        rng = self.rng
        chosen: list[list[int]] = []
        spare: list[list[int]] = []
        for pool, minimum, maximum in sections:
            order = list(range(len(pool)))
            rng.shuffle(order)
            take = min(minimum, len(pool))
            chosen.append(order[:take])
            spare.append(order[take:min(maximum, len(pool))])
            words -= sum(pool[i].words for i in order[:take])
        open_sections = [index for index, rest in enumerate(spare) if rest]
        while words > 0 and open_sections:
            section = rng.choice(open_sections)
            pick = spare[section].pop()
            chosen[section].append(pick)
            words -= sections[section][0][pick].words
            if not spare[section]:
                open_sections.remove(section)
        return [[pool[i] for i in sorted(indices)] for (pool, _low, _high), indices in zip(sections, chosen)]

    def _date_between(self, start: dt.date, end: dt.date) -> dt.date:
        if end <= start:
            return start
        return start + dt.timedelta(days=self.rng.randrange((end - start).days + 1))
