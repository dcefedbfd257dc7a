"""The export form: format, concealment, evaluation set and records' statuses; a combination that cannot be
exported is refused next to the field it concerns (``deid.selectors.export``)."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import Document
from annotator.services.exports import EXPORT_FORMATS
from deid.selectors.export import FORMAT_NAMES, export_refusals

CONCEAL_CHOICES = [
    ("none", _("none — the gold standard as annotated")),
    ("pseudo", _("pseudo — realistic surrogates")),
    ("class", _("class — the label in brackets")),
    ("mask", _("mask — X for letters, 9 for digits")),
    ("remove", _("remove — delete sentences holding PHI")),
    ("project", _("project — the project's de-identification settings")),
]
#: The statuses an export starts with: records whose gold is final.
DEFAULT_STATUSES = [Document.Status.SUBMITTED, Document.Status.ADJUDICATED]


class ExportForm(forms.Form):
    format = forms.ChoiceField(label=_("Format"), choices=[(name, FORMAT_NAMES[name]) for name in EXPORT_FORMATS])
    conceal = forms.ChoiceField(
        choices=CONCEAL_CHOICES, initial="none", required=False, label=_("De-identify"),
        help_text=_("De-identified exports keep the annotations aligned to the new text and add a report.json."),
    )
    include_evaluation = forms.BooleanField(required=False, initial=True, label=_("Include the evaluation set"))
    statuses = forms.MultipleChoiceField(
        choices=Document.Status.choices, initial=DEFAULT_STATUSES, required=False,
        widget=forms.CheckboxSelectMultiple, label=_("Records' statuses"),
        help_text=_("Records with gold in these statuses (a record awaiting adjudication has gold only where the "
                  "project keeps agreed spans)."),
    )

    def __init__(self, *args, project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.project = project

    def clean_conceal(self) -> str:
        return self.cleaned_data.get("conceal") or "none"

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        refusals = export_refusals(
            project=self.project, fmt=cleaned["format"], conceal=cleaned["conceal"],
            include_evaluation=cleaned["include_evaluation"], statuses=cleaned["statuses"],
        )
        for field, message in refusals.items():
            self.add_error(field, message)
        return cleaned
