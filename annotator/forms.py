from django import forms

from annotator.services.exports import EXPORT_FORMATS
from annotator.services.imports import FORMATS


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
    format = forms.ChoiceField(choices=[(name, name) for name in FORMATS])
    evaluation = forms.BooleanField(required=False, label="Held-out evaluation set")
    unannotated = forms.BooleanField(
        required=False, label="Text only (no annotations)",
        help_text="Texts to annotate, not gold: they go to the pool unannotated. Needed for brat .txt files "
                  "without their .ann; spans in the files are not imported.",
    )
    files = MultipleFileField(
        help_text="Files, or a .zip of a folder (brat: NAME.txt + NAME.ann pairs)."
    )


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[(name, name) for name in EXPORT_FORMATS])
    include_evaluation = forms.BooleanField(required=False, initial=True)
