"""Django form fields built from the learning core's parameter descriptions (``learning.core.params.Param``), so
that a range, a default and its explanation are written once, beside the class they belong to."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from django import forms
from django.utils.translation import gettext

from learning.core.params import Param


def _number(value: float) -> str:
    return f"{value:,g}"


def _range_messages(param: Param) -> dict[str, str]:
    low, high = param.minimum, param.maximum
    if low is not None and high is not None:
        bounds = gettext("%(name)s must be between %(low)s and %(high)s") % {
            "name": gettext(param.label), "low": _number(low), "high": _number(high)}
        return {"min_value": bounds, "max_value": bounds}
    if low is not None:
        return {"min_value": gettext("%(name)s must be at least %(low)s") % {"name": gettext(param.label), "low": _number(low)}}
    if high is not None:
        return {"max_value": gettext("%(name)s must be at most %(high)s") % {"name": gettext(param.label), "high": _number(high)}}
    return {}


def field_for(param: Param, *, initial: Any = None) -> forms.Field:
    """The form field of ``param``, showing ``initial`` (its default when None)."""
    # The core describes a setting in English; learning.forms.parameter_texts marks those texts for translation.
    common = {"label": gettext(param.label), "help_text": gettext(param.help),
              "initial": param.default if initial is None else initial}
    if param.type is bool:
        return forms.BooleanField(required=False, **common)
    if param.choices:
        return forms.ChoiceField(choices=[(choice, choice) for choice in param.choices], **common)
    if param.type is str:
        return forms.CharField(max_length=200, **common)
    bounds = {"min_value": param.minimum, "max_value": param.maximum, "error_messages": _range_messages(param)}
    if param.type is int:
        return forms.IntegerField(**bounds, **common)
    return forms.FloatField(**bounds, widget=forms.NumberInput(attrs={"step": "any"}), **common)


def add_fields(form: forms.BaseForm, prefix: str, params: Iterable[Param], values: Mapping[str, Any]) -> list[str]:
    """Add a field per parameter to ``form`` (named ``PREFIX-NAME``), showing ``values`` where they are given;
    returns the new field names in order."""
    names = []
    for param in params:
        name = f"{prefix}-{param.name}"
        form.fields[name] = field_for(param, initial=values.get(param.name))
        names.append(name)
    return names


def as_posted(param: Param, value: Any) -> str | None:
    """``value`` as a browser posts it in the field of ``param`` (None: not posted, an unticked box)."""
    if param.type is bool:
        return "on" if value else None
    return str(value)
