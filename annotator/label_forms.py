"""The Labels page's forms: add a label, give one a colour and key, rename one, delete one. The services check
the values (``annotator.services.labels``); a refusal comes back as the error of the field at fault."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.schemas import LABEL_NAME_MAX


class _OfLabel(forms.Form):
    label = forms.CharField(max_length=LABEL_NAME_MAX, widget=forms.HiddenInput)


class AddLabelForm(forms.Form):
    action = "add"
    name = forms.CharField(max_length=LABEL_NAME_MAX, label=_("New label"))
    colour = forms.CharField(max_length=7, widget=forms.TextInput(attrs={"type": "color"}), label=_("Colour"),
                             help_text=_("offered: a colour no other label has"))
    key = forms.CharField(required=False, max_length=1, widget=forms.TextInput(attrs={"size": 2}), label=_("Key"),
                          help_text=_("offered: the first key no other label uses; empty: none"))


class RestyleLabelForm(_OfLabel):
    action = "restyle"
    colour = forms.CharField(max_length=7, widget=forms.TextInput(attrs={"type": "color"}))
    key = forms.CharField(required=False, max_length=1, widget=forms.TextInput(attrs={"size": 2}))


class RenameLabelForm(_OfLabel):
    action = "rename"
    name = forms.CharField(max_length=LABEL_NAME_MAX, label=_("New name"))


class DeleteLabelForm(_OfLabel):
    action = "delete"


FORMS = {form.action: form for form in (AddLabelForm, RestyleLabelForm, RenameLabelForm, DeleteLabelForm)}
