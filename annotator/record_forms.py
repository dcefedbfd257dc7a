"""Forms of the record list and the review pages: the list's filters, sending a record back, a lead's fix."""
from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Document, Project
from annotator.record_selectors import RecordFilters
from annotator.services.review import NOTE_LIMIT

SORT_CHOICES = [
    ("id", _("number, first to last")), ("-id", _("number, last to first")),
    ("name", _("name, A to Z")), ("-name", _("name, Z to A")),
    ("tokens", _("tokens, fewest first")), ("-tokens", _("tokens, most first")),
    ("status", _("status")), ("-status", _("status, reversed")),
    ("-submitted", _("latest submission first")), ("submitted", _("oldest submission first")),
]


class RecordFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label=_("Search"),
                        widget=forms.TextInput(attrs={"type": "search", "placeholder": "#number, name or text"}))
    status = forms.ChoiceField(required=False, label=_("Status"), choices=[("", _("any status"))] + Document.Status.choices)
    role = forms.ChoiceField(required=False, label=_("Role"), choices=[("", _("pool and evaluation"))] + Document.Role.choices)
    annotator = forms.ChoiceField(required=False, label=_("Annotated by"))
    label = forms.ChoiceField(required=False, label=_("Label"))
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES, label=_("Sort by"))

    def __init__(self, data, *, project: Project, sees_all: bool, usernames=()):
        super().__init__(data)
        self.fields["label"].choices = [("", gettext("any label"))] + [(label, label) for label in project.labels]
        if sees_all:
            self.fields["annotator"].choices = [("", gettext("anyone"))] + [(name, name) for name in usernames]
        else:  # an annotator's list holds only their own records
            del self.fields["role"], self.fields["annotator"]

    def filters(self) -> RecordFilters:
        """The filters from the fields that are valid (a wrong one is shown with its error and not applied)."""
        self.is_valid()
        values = {name: value for name, value in self.cleaned_data.items() if value}
        return RecordFilters(**values)


class SendBackForm(forms.Form):
    to = forms.ModelChoiceField(queryset=get_user_model().objects.none(), label=_("Send it to"),
                                to_field_name="username", empty_label=None)
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=NOTE_LIMIT,
                           label=_("What should be corrected"))

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["to"].queryset = (get_user_model().objects.filter(memberships__project=project, is_active=True)
                                      .order_by("username"))


class SpanForm(forms.Form):
    """One span of the gold, by its character offsets; ``remove`` drops it."""

    start = forms.IntegerField(min_value=0)
    end = forms.IntegerField(min_value=1)
    label = forms.ChoiceField()
    remove = forms.BooleanField(required=False, label=_("remove"))

    def __init__(self, *args, labels=(), text_length: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["label"].choices = [(label, label) for label in labels]
        self.text_length = text_length

    def clean(self):
        data = super().clean()
        start, end = data.get("start"), data.get("end")
        if start is not None and end is not None:
            if end <= start:
                self.add_error("end", gettext("The span must end after it starts (at %(start)s).") % {"start": start})
            elif end > self.text_length:
                self.add_error("end", gettext("The record is %(length)s characters long.") % {"length": self.text_length})
        return data


SpanFormSet = forms.formset_factory(SpanForm, extra=1)


def span_formset(*, document: Document, data=None, initial=None):
    """The fix page's spans: one form per gold span and one empty form for a new span."""
    return SpanFormSet(data, initial=initial, prefix="span", form_kwargs={
        "labels": document.project.labels, "text_length": len(document.text)})


def spans_of(formset) -> list[dict]:
    """The spans a valid formset keeps (filled in and not removed)."""
    return [{"start": form.cleaned_data["start"], "end": form.cleaned_data["end"], "label": form.cleaned_data["label"]}
            for form in formset.forms
            if form.cleaned_data and not form.cleaned_data.get("remove") and "start" in form.cleaned_data]


class FixForm(forms.Form):
    note = forms.CharField(required=False, max_length=NOTE_LIMIT, label=_("Why (kept in the record's history)"),
                           widget=forms.Textarea(attrs={"rows": 2}))
