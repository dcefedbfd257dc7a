"""The release planner's parameters, as a GET form: a plan is a URL that can be bookmarked and shared.

Defaults and help texts come from ``deid.core.release_planner`` (the game's parameters) and ``learning.selectors.people``
(the hourly rate); the release's size and the documents available come from the project.
"""
from __future__ import annotations

from django import forms
from django.http import QueryDict
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from deid.core.release_planner import ATTACKER_DEFAULTS, PUBLISHER_DEFAULTS, AttackerParameters, ParameterDefault
from deid.selectors.planner import PlannerInputs, PlannerSettings
from learning.core.costs import MIN_RECORDS
from learning.selectors.people import DEFAULT_HOURLY_RATE, HOURLY_RATE_HELP

MAX_AMOUNT = 1e12  # no budget or price is larger; keeps the arithmetic far from overflow
MAX_DOCUMENTS = 10_000_000


def _amount(default: ParameterDefault | None = None, *, label: str = "", unit: str = "", help_text: str = "",
            required: bool = True) -> forms.FloatField:
    field = forms.FloatField(
        label=default.label if default else label, help_text=default.help if default else help_text,
        min_value=0, max_value=MAX_AMOUNT, required=required,
        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}),
    )
    field.unit = default.unit if default else unit
    return field


def _count(*, label: str, unit: str, help_text: str, min_value: int, required: bool = True) -> forms.IntegerField:
    field = forms.IntegerField(label=label, help_text=help_text, min_value=min_value, max_value=MAX_DOCUMENTS,
                               required=required)
    field.unit = unit
    return field


class PlannerForm(forms.Form):
    # The publisher: you.
    publisher_budget = _amount(PUBLISHER_DEFAULTS["budget"])
    hourly_rate = _amount(label=_("Hourly rate of annotation"), unit="money per active hour", help_text=HOURLY_RATE_HELP)
    cost_per_document = _amount(
        label=_("Cost per annotated document (c_p)"), unit="money per document", required=False,
        help_text=format_lazy(
            _("Leave blank to use the measured cost: the fitted active time of the project's average record at "
              "the hourly rate above. Before {records} records are timed the default is {default}: {help}"),
            records=MIN_RECORDS, default=f"{PUBLISHER_DEFAULTS['cost_per_document'].value:g}",
            help=PUBLISHER_DEFAULTS["cost_per_document"].help),
    )
    over_redaction_cost = _amount(PUBLISHER_DEFAULTS["fine_per_false_claim"])
    # The release.
    documents_shared = _count(
        label=_("Documents to share (β)"), unit="documents", min_value=1,
        help_text=_("How many de-identified documents the release holds; by default every document of the project."),
    )
    max_documents = _count(
        label=_("Documents available to annotate (largest α)"), unit="documents", min_value=0, required=False,
        help_text=_("The most training documents there could be; by default the project's pool. Leave blank to let "
                  "only the budget limit α (the curve is then extrapolated further)."),
    )
    phi_per_document = _amount(
        label=_("PHI instances per document (i)"), unit="identifiers per document", required=False,
        help_text=_("Leave blank to use the mean number of gold PHI spans per annotated document of the project."),
    )
    # The attacker.
    attacker_budget = _amount(ATTACKER_DEFAULTS["budget"])
    attacker_cost = _amount(ATTACKER_DEFAULTS["cost_per_document"])
    value_per_identifier = _amount(ATTACKER_DEFAULTS["value_per_identifier"])
    attacker_fine = _amount(ATTACKER_DEFAULTS["fine_per_false_claim"])

    GROUPS = (
        ("Publisher (you)", ("publisher_budget", "hourly_rate", "cost_per_document", "over_redaction_cost")),
        ("Release", ("documents_shared", "max_documents", "phi_per_document")),
        ("Attacker", ("attacker_budget", "attacker_cost", "value_per_identifier", "attacker_fine")),
    )

    @staticmethod
    def defaults(inputs: PlannerInputs) -> dict[str, str]:
        """The query string of the default plan for a project (what an empty query string means)."""
        values = {
            "publisher_budget": PUBLISHER_DEFAULTS["budget"].value,
            "hourly_rate": DEFAULT_HOURLY_RATE,
            "cost_per_document": "",
            "over_redaction_cost": PUBLISHER_DEFAULTS["fine_per_false_claim"].value,
            "documents_shared": max(inputs.project_documents, 1),
            "max_documents": max(inputs.pool_documents, inputs.annotated_documents),
            "phi_per_document": "",
            "attacker_budget": ATTACKER_DEFAULTS["budget"].value,
            "attacker_cost": ATTACKER_DEFAULTS["cost_per_document"].value,
            "value_per_identifier": ATTACKER_DEFAULTS["value_per_identifier"].value,
            "attacker_fine": ATTACKER_DEFAULTS["fine_per_false_claim"].value,
        }
        return {name: value if isinstance(value, str) else f"{value:g}" for name, value in values.items()}

    @classmethod
    def for_project(cls, inputs: PlannerInputs, query: QueryDict) -> PlannerForm:
        """A bound form: the project's defaults, overridden by what the query string gives."""
        data = cls.defaults(inputs)
        data.update({name: query.get(name, "").strip() for name in cls.base_fields if name in query})
        return cls(data)

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in self.GROUPS]

    def settings(self) -> PlannerSettings:
        """The cleaned parameters (call after ``is_valid()``)."""
        data = self.cleaned_data
        return PlannerSettings(
            publisher_budget=data["publisher_budget"],
            hourly_rate=data["hourly_rate"],
            cost_per_document=data["cost_per_document"],
            over_redaction_cost=data["over_redaction_cost"],
            documents_shared=data["documents_shared"],
            max_documents=data["max_documents"],
            phi_per_document=data["phi_per_document"],
            attacker=AttackerParameters(
                budget=data["attacker_budget"],
                cost_per_document=data["attacker_cost"],
                value_per_identifier=data["value_per_identifier"],
                fine_per_false_claim=data["attacker_fine"],
            ),
        )
