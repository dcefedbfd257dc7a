"""The export form: format, evaluation documents, and how to conceal the PHI."""
from __future__ import annotations

from django import forms

from annotator.services.exports import EXPORT_FORMATS

CONCEAL_CHOICES = [
    ("none", "none — the gold standard as annotated"),
    ("pseudo", "pseudo — realistic surrogates"),
    ("class", "class — the label in brackets"),
    ("mask", "mask — X for letters, 9 for digits"),
    ("remove", "remove — delete sentences holding PHI"),
    ("project", "project — the project's de-identification settings"),
]


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[(name, name) for name in EXPORT_FORMATS])
    include_evaluation = forms.BooleanField(required=False, initial=True)
    conceal = forms.ChoiceField(
        choices=CONCEAL_CHOICES, initial="none", required=False,
        help_text="De-identified exports keep the annotations aligned to the new text and add a report.json.",
    )

    def clean_conceal(self) -> str:
        return self.cleaned_data.get("conceal") or "none"
