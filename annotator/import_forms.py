"""The import preview's form: import or cancel, and what to do with labels the project does not have."""
from __future__ import annotations

from django import forms


class ImportConfirmForm(forms.Form):
    action = forms.ChoiceField(choices=[("import", "Import"), ("cancel", "Cancel")])
    unknown_labels = forms.ChoiceField(
        required=False,
        choices=[("", "not chosen"), ("add", "Add them to the project's labels"), ("refuse", "Refuse the import")],
    )

    def cancels(self) -> bool:
        return self.cleaned_data["action"] == "cancel" or self.cleaned_data["unknown_labels"] == "refuse"

    def adds_unknown_labels(self) -> bool:
        return self.cleaned_data["unknown_labels"] == "add"
