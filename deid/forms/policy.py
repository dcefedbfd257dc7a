"""The de-identification settings of a project: the model that finds the PHI, one strategy per PHI label, and
the surrogates' settings."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import Project
from deid.core.conceal import STRATEGIES
from deid.services.policy import default_strategies, project_strategies

STRATEGY_HELP = {
    "keep": _("left as written"),
    "pseudo": _("a realistic surrogate (Eva → Mary)"),
    "class": _("the label in brackets ([NAME])"),
    "mask": _("letters → X, digits → 9"),
    "remove": _("every sentence holding it is deleted"),
}
PREFIX = "conceal__"


MODEL_CHOICES = [
    ("loop", _("the loop's current model")),
    ("ensemble", _("the ensemble of the CRF and the BiLSTM-CRF, trained apart (below): fewer PHI missed")),
]


class PolicyForm(forms.Form):
    deid_model = forms.ChoiceField(
        label=_("Model that finds the PHI"), choices=MODEL_CHOICES,
        help_text=_("for text de-identified with the model (page, API, command); exports of the gold need none"),
    )
    surrogate_scope = forms.ChoiceField(
        label=_("Surrogate scope"), choices=[("document", _("per document")), ("project", _("per project"))],
        help_text=_("Pseudo: one surrogate per value within each document (documents cannot be linked), or within "
                  "the whole project."),
    )
    age_bucket = forms.IntegerField(
        required=False, min_value=1, max_value=150, label=_("Age bucket"),
        help_text=_("Pseudo: ages of this many years or more become '90+' (empty: keep every age)."),
    )
    review_confidence = forms.FloatField(
        min_value=0, max_value=1, label=_("Review confidence"),
        help_text=_("De-identified spans the model is less sure of than this are listed in the report for review."),
    )

    def __init__(self, project: Project, *args, **kwargs):
        self.project = project
        initial = {"surrogate_scope": project.surrogate_scope, "age_bucket": project.age_bucket,
                   "review_confidence": project.review_confidence,
                   "deid_model": (project.deid_tagger or {}).get("kind", "loop")}
        strategies = project_strategies(project)
        self.defaults = default_strategies(project)
        for label, strategy in strategies.items():
            initial[PREFIX + label] = strategy
        super().__init__(*args, initial=initial, **kwargs)
        choices = [(name, f"{name} — {STRATEGY_HELP[name]}") for name in STRATEGIES]
        for label in strategies:
            self.fields[PREFIX + label] = forms.ChoiceField(choices=choices, label=label)

    def label_rows(self) -> list[dict]:
        return [{"label": name.removeprefix(PREFIX), "field": self[name],
                 "default": self.defaults[name.removeprefix(PREFIX)]}
                for name in self.fields if name.startswith(PREFIX)]

    def setting_fields(self):
        return [self[name] for name in ("surrogate_scope", "age_bucket", "review_confidence")]

    def deid_tagger(self) -> dict:
        """The project's ``deid_tagger`` with the model chosen (its other parameters kept)."""
        return {**(self.project.deid_tagger or {}), "kind": self.cleaned_data["deid_model"]}

    def strategies(self) -> dict[str, str]:
        return {name.removeprefix(PREFIX): value for name, value in self.cleaned_data.items()
                if name.startswith(PREFIX)}
