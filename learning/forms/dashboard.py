"""The simulation a lead asks for from the dashboard: which strategies, batch sizes, how long and how often.

The form checks what it can see alone (names, numbers, the amount of training it asks for); whether the
project has enough annotated documents is checked by :func:`learning.services.simulations.request_simulation`.
"""
from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from learning.core.strategies import PRESETS

DEFAULT_STRATEGIES = ["random", "LCUB_6", "ROI_2"]
MAX_BATCH_SIZES = 4
MAX_BATCH = 200
#: Models a simulation may train (runs × strategies × batch sizes × (iterations + 1)), so that one request
#: cannot keep a worker busy for hours.
MAX_MODELS = 1000


def _strategy_label(name: str) -> str:
    """"LCUB_6 · θ 0.6": the preset and the parameters that make it (ALGORITHMS.md §1)."""
    params = dict(PRESETS[name].params)
    if not params:
        return name
    if params.get("nc_fn") == params.get("nc_fp") and "nc_fn" in params:
        params = {"NC": params.pop("nc_fn"), **{k: v for k, v in params.items() if k != "nc_fp"}}
    symbols = {"theta": "θ", "rho": "ρ", "c_t": "c"}
    return f"{name} · {', '.join(f'{symbols.get(k, k)} {v:g}' for k, v in params.items())}"


class BatchSizesField(forms.CharField):
    """Whole numbers separated by commas or spaces, e.g. "5, 10"."""

    def to_python(self, value):
        text = (value or "").strip()
        if not text:
            return []
        parts = [p for p in re.split(r"[,\s;]+", text) if p]
        sizes = []
        for part in parts:
            if not part.isdigit():
                raise forms.ValidationError(gettext("%(part)r is not a whole number; write sizes like 5, 10") % {"part": part})
            sizes.append(int(part))
        return sizes

    def validate(self, value):
        super().validate(value)
        if any(size < 1 or size > MAX_BATCH for size in value):
            raise forms.ValidationError(gettext("each batch size must be between 1 and %(most)s") % {"most": MAX_BATCH})
        if len(set(value)) > MAX_BATCH_SIZES:
            raise forms.ValidationError(gettext("at most %(most)s batch sizes at a time") % {"most": MAX_BATCH_SIZES})

    def prepare_value(self, value):
        return ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else value


class SimulationForm(forms.Form):
    strategies = forms.MultipleChoiceField(
        label=_("Strategies"), choices=[(name, _strategy_label(name)) for name in PRESETS],
        widget=forms.CheckboxSelectMultiple, initial=DEFAULT_STRATEGIES,
        help_text=_("random is the baseline the others are compared with"),
        error_messages={"required": "choose at least one strategy"},
    )
    batch_sizes = BatchSizesField(label=_("Batch sizes"), initial=[5, 10], help_text=_("e.g. 5, 10"),
                                  widget=forms.TextInput(attrs={"size": 8}))
    initial = forms.IntegerField(label=_("Initial random documents"), min_value=1, max_value=500, initial=10)
    iterations = forms.IntegerField(label=_("Iterations"), min_value=1, max_value=50, initial=10,
                                    help_text=_("batches added after the initial documents"))
    runs = forms.IntegerField(label=_("Runs"), min_value=1, max_value=10, initial=3,
                              help_text=_("repetitions with other random starts: the spread"))
    seed = forms.IntegerField(label=_("Seed"), min_value=0, max_value=2**31 - 1, initial=0, required=False)

    def clean(self):
        data = super().clean()
        needed = [data.get(k) for k in ("strategies", "batch_sizes", "iterations", "runs")]
        if all(needed):
            strategies, sizes, iterations, runs = needed
            models = runs * len(strategies) * len(set(sizes)) * (iterations + 1)
            if models > MAX_MODELS:
                raise forms.ValidationError(
                    gettext("this asks for %(models)s models to be trained; at most %(most)s — choose fewer runs, "
                            "strategies, batch sizes or iterations") % {"models": models, "most": MAX_MODELS}
                )
        return data

    def simulation_request(self) -> dict:
        """The keyword arguments of :func:`learning.services.simulations.request_simulation` (besides project, user)."""
        data = self.cleaned_data
        return {
            "strategies": list(data["strategies"]), "batch_sizes": list(data["batch_sizes"]),
            "initial": data["initial"], "iterations": data["iterations"], "runs": data["runs"],
            "seed": data["seed"] if data.get("seed") is not None else 0,
        }
