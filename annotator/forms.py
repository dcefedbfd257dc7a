from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import AuditEvent
from annotator.services.imports import FORMATS, MAX_EVALUATION_SHARE


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class ImportForm(forms.Form):
    format = forms.ChoiceField(label=_("Format"), choices=[(name, name) for name in FORMATS])
    evaluation = forms.BooleanField(required=False, label=_("Held-out evaluation set"))
    evaluation_percent = forms.IntegerField(
        required=False, min_value=0, max_value=round(MAX_EVALUATION_SHARE * 100), initial=0,
        label=_("Evaluation share (%)"),
        help_text=_("Set this share of the new records aside at random as the evaluation set, so that it holds "
                  "every label they hold; the rest goes to the pool. 0: all to the pool."),
    )
    unannotated = forms.BooleanField(
        required=False, label=_("Text only (no annotations)"),
        help_text=_("Texts to annotate, not gold: they go to the pool unannotated. Needed for brat .txt files "
                  "without their .ann; spans in the files are not imported."),
    )
    files = MultipleFileField(
        label=_("Files"),
        help_text=_("UTF-8 text files, or a .zip of a folder (brat: NAME.txt + NAME.ann pairs). A large upload "
                  "is imported in the background, on a page that shows its progress.")
    )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("evaluation") and cleaned.get("evaluation_percent"):
            self.add_error("evaluation_percent", gettext("Every record goes to the evaluation set already (the box above "
                                                 "is ticked); untick it or leave the share at 0."))
        return cleaned

    def evaluation_share(self) -> float:
        return (self.cleaned_data.get("evaluation_percent") or 0) / 100


class AuditFilterForm(forms.Form):
    """The audit page's filters, from the query string; every field may be left empty."""

    user = forms.CharField(required=False, max_length=150, label=_("User"), help_text=_("part of the username"))
    action = forms.ChoiceField(required=False, choices=[("", _("any action")), *AuditEvent.Action.choices],
                               label=_("Action"))
    date_from = forms.DateField(required=False, label=_("From"), widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label=_("To"), widget=forms.DateInput(attrs={"type": "date"}))
    object_id = forms.CharField(required=False, max_length=64, label=_("Object id"))

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("date_from"), cleaned.get("date_to")
        if start and end and start > end:
            self.add_error("date_to", gettext("The end date is before the start date."))
        return cleaned

    def selection(self) -> dict:
        """The filters in use, as the audit service takes them."""
        data = self.cleaned_data
        return {
            "username": data["user"], "action": data["action"], "date_from": data["date_from"],
            "date_to": data["date_to"], "object_id": data["object_id"],
        }

    def in_use(self) -> dict:
        """The filters in use, as JSON values (for the audit event of an export)."""
        return {name: value.isoformat() if hasattr(value, "isoformat") else value
                for name, value in self.selection().items() if value}
