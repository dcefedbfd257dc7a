"""The de-identification page's form: pasted text or uploaded files, the policy and the recall bias."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.forms import MultipleFileField
from deid.services.policy import POLICY_CHOICES


class DeidentifyForm(forms.Form):
    text = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
                           label=_("Text"), strip=False)
    files = MultipleFileField(
        required=False, label=_("Or files"),
        help_text=_("UTF-8 .txt files, a .jsonl file (a text per line) or a .zip of a folder (brat: .ann files are "
                  "ignored). Large inputs are de-identified in the background, with progress and a download."),
    )
    policy = forms.ChoiceField(label=_("Policy"), choices=[(name, name) for name in POLICY_CHOICES], initial="project",
                               help_text=_("one strategy for every label, or the project's settings"))
    recall_bias = forms.FloatField(
        required=False, min_value=0.01, max_value=100, label=_("Recall bias β"),
        help_text=_("find more PHI at the cost of precision (thresholds tuned for F_β); empty: the model's own"),
    )

    def clean(self):
        cleaned = super().clean()
        cleaned["files"] = [upload for upload in cleaned.get("files") or [] if upload]
        if not cleaned.get("text", "").strip() and not cleaned["files"]:
            raise forms.ValidationError(gettext("Paste a text or choose files to de-identify."))
        return cleaned
