"""The "New project" form: name, language, label schema (a preset, or labels each with a colour and a key),
and the loop's tagger and strategy with their defaults (their parameters are set later on the loop page)."""
from __future__ import annotations

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Project
from annotator.schemas import (
    CUSTOM, PRESETS, LabelError, check_colour, check_key, check_label_name, default_hue, hue_colour,
    preset_labels,
)
from learning.core.registry import TAGGERS
from learning.forms.loop import TAGGER_LABELS
from learning.selectors.measured_costs import strategy_choices

LANGUAGES = [("es", _("Spanish")), ("en", _("English")), ("sv", _("Swedish"))]
#: Empty label rows the form offers (rows left without a name are ignored).
LABEL_ROWS = 8


class LabelRowForm(forms.Form):
    name = forms.CharField(required=False, max_length=100, label=_("Label"))
    colour = forms.CharField(required=False, max_length=7, label=_("Colour"), widget=forms.TextInput(attrs={"type": "color"}))
    key = forms.CharField(required=False, max_length=1, label=_("Key"), widget=forms.TextInput(attrs={"size": 2}))

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("name"):
            return cleaned
        for field, check in (("name", check_label_name), ("colour", check_colour), ("key", check_key)):
            try:
                cleaned[field] = check(cleaned.get(field) or "")
            except LabelError as error:
                self.add_error(field, str(error))
        return cleaned


class BaseLabelRows(forms.BaseFormSet):
    def clean(self):
        if any(self.errors):
            return
        names, keys = {}, {}
        for form in self.forms:
            name, key = form.cleaned_data.get("name"), form.cleaned_data.get("key")
            if not name:
                continue
            if name in names:
                form.add_error("name", gettext("%(name)s is on another row already") % {"name": name})
            names[name] = form
            if key and key in keys:
                form.add_error("key", gettext("the key %(key)r is %(label)s's already") % {"key": key, "label": keys[key]})
            keys.setdefault(key, name)

    def labels(self) -> list[dict]:
        return [form.cleaned_data for form in self.forms if form.cleaned_data.get("name")]


LabelRows = forms.formset_factory(LabelRowForm, formset=BaseLabelRows, extra=0, max_num=LABEL_ROWS,
                                  absolute_max=LABEL_ROWS)


def label_rows(data=None) -> BaseLabelRows:
    """The label rows, each offered with the colour and digit its position has by default."""
    initial = [{"colour": hue_colour(default_hue(i)), "key": str(i + 1)} for i in range(LABEL_ROWS)]
    return LabelRows(data, prefix="labels", initial=initial)


class NewProjectForm(forms.Form):
    name = forms.CharField(max_length=200, label=_("Name"))
    description = forms.CharField(required=False, label=_("Description"), widget=forms.Textarea(attrs={"rows": 2}))
    language = forms.ChoiceField(choices=LANGUAGES, initial="es", label=_("Language"), help_text=_("the records' language"))
    schema = forms.ChoiceField(
        label=_("Label schema"), choices=[(CUSTOM, "Custom: the labels below")] + [(name, name) for name in PRESETS],
        initial=CUSTOM,
        help_text=_("A preset's labels, then any you add below; or only yours. Labels can be renamed, added and "
                  "deleted later on the project's Labels page."),
    )
    tagger = forms.ChoiceField(label=_("Tagger"), choices=[(kind, TAGGER_LABELS.get(kind, kind)) for kind in TAGGERS],
                               initial=Project._meta.get_field("tagger").default()["kind"],
                               help_text=_("its parameters are on the loop page once the project exists"))
    strategy = forms.ChoiceField(label=_("Query strategy"), choices=strategy_choices(),
                                 initial=Project._meta.get_field("strategy").default)

    def __init__(self, data=None, **kwargs):
        super().__init__(data, **kwargs)
        self.rows = label_rows(data)

    LEARNING = ("tagger", "strategy")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if Project.objects.filter(name=name).exists():
            raise forms.ValidationError(gettext("a project named %(name)r exists already") % {"name": name})
        return name

    def project_fields(self):
        return [self[name] for name in self.fields if name not in self.LEARNING]

    def learning_fields(self):
        return [self[name] for name in self.LEARNING]

    def is_valid(self) -> bool:
        return all([super().is_valid(), self.rows.is_valid()]) and self._schema_has_labels()

    def _schema_has_labels(self) -> bool:
        schema = self.cleaned_data["schema"]
        extra = [row["name"] for row in self.rows.labels()]
        if schema == CUSTOM and not extra:
            self.add_error("schema", gettext("A custom schema needs at least one label: name it in the rows below."))
            return False
        if schema != CUSTOM:
            repeated = sorted(set(extra) & set(preset_labels(schema)))
            if repeated:
                self.add_error("schema", gettext("%(labels)s: in the %(schema)s preset already") % {"labels": ", ".join(repeated), "schema": schema})
                return False
        return True

    def project_arguments(self) -> dict:
        """What ``annotator.services.projects.create_project`` takes from this form."""
        data, rows = self.cleaned_data, self.rows.labels()
        return {
            "name": data["name"], "description": data["description"], "language": data["language"],
            "schema": data["schema"], "labels": [row["name"] for row in rows],
            "label_styles": {row["name"]: {"colour": row["colour"], "key": row["key"]} for row in rows},
            "tagger": {"kind": data["tagger"], "params": {}}, "strategy": data["strategy"],
        }
