"""The loop's settings as a lead edits them: typed fields, each built from the parameter descriptions of the
learning core (the chosen tagger's ``PARAMETERS``, the chosen strategy's, the self-training policy's), checked
against their ranges before anything is stored, so a retrain never starts on a setting that cannot work.

Only the fields of the chosen tagger and strategy are on the page; choosing another one fetches its fields
(``views.loop.loop_parameters``). A form posted with the fields of another tagger or strategy than the one it
names (a browser without scripts) is refused and shown again with the right fields. Stored parameters are those
that differ from their default (or a preset's value) and those stored before, so a default improved later
reaches projects that never chose otherwise. Word lists are one entry per line, typed or uploaded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.urls import reverse
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Project
from learning.core.costs import MEASURED_ROI_PARAMETERS
from learning.core.params import Param, defaults, overrides
from learning.core.registry import TAGGERS, UnknownTaggerError, tagger_class, tagger_factory
from learning.core.self_training import POLICY_PARAMETERS
from learning.core.strategies import UnknownStrategyError, get_strategy, strategy_defaults, strategy_parameters
from learning.forms.parameters import add_fields, as_posted
from learning.selectors.measured_costs import ROI_MEASURED, strategy_choices

TAGGER_LABELS = {"crf": "CRF (sklearn-crfsuite)", "flair": "BiLSTM-CRF (Flair)", "unigram": _("Unigram baseline")}
BETAS = [("", _("off")), ("1", "F1"), ("4", "F4"), ("10", "F10"), ("20", "F20"), ("40", "F40")]
#: A PHI type's own β: the β above, none, or one of its own.
TYPE_BETAS = [("", _("as for every type")), ("0", _("off for this type")), *BETAS[1:]]

#: Limits on the word lists (gazetteers and eponyms): entries per list, characters per entry, all lists together,
#: and the size of an uploaded file.
MAX_ENTRIES = 5_000
MAX_ENTRY_CHARS = 200
MAX_GAZETTEER_ENTRIES = 50_000
MAX_UPLOAD_BYTES = 512 * 1024

TAGGER_PREFIX, STRATEGY_PREFIX, POLICY_PREFIX, GAZETTEER_PREFIX = "tagger", "strategy", "self_training", "gazetteer"
TYPE_BETA_PREFIX = "recall_bias_beta"


def tagger_parameters(kind: str) -> tuple[Param, ...]:
    return tagger_class(kind).PARAMETERS


def strategy_parameter_values(strategy: str) -> tuple[tuple[Param, ...], dict[str, Any]]:
    """The parameters a lead may set for ``strategy`` and the values it has unless told otherwise (a preset's)."""
    if strategy == ROI_MEASURED:
        return MEASURED_ROI_PARAMETERS, defaults(MEASURED_ROI_PARAMETERS)
    return strategy_parameters(strategy), strategy_defaults(strategy)


def _entries(text: str) -> list[str]:
    """One entry per line, trimmed; blank lines and repeats left out."""
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def _uploaded_text(upload) -> str:
    if upload.size > MAX_UPLOAD_BYTES:
        raise forms.ValidationError(gettext("the file is %(size)s KB; a list may be at most %(most)s KB")
                                    % {"size": f"{upload.size / 1024:,.0f}", "most": f"{MAX_UPLOAD_BYTES // 1024:,}"})
    raw = upload.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise forms.ValidationError(gettext("the file is not UTF-8 text (byte %(byte)s cannot be read); save it "
                                            "as plain UTF-8 text, one entry per line") % {"byte": error.start + 1}) from None
    if "\x00" in text:
        raise forms.ValidationError(gettext("the file is not plain text; save it as plain UTF-8 text, one entry per line"))
    return text


def _checked_entries(entries: list[str]) -> list[str]:
    if len(entries) > MAX_ENTRIES:
        raise forms.ValidationError(gettext("at most %(most)s entries per list; this one has %(count)s")
                                    % {"most": f"{MAX_ENTRIES:,}", "count": f"{len(entries):,}"})
    for number, entry in enumerate(entries, start=1):
        if len(entry) > MAX_ENTRY_CHARS:
            raise forms.ValidationError(gettext("entry %(number)s (%(start)s…) is %(length)s characters long; at "
                                                "most %(most)s are allowed")
                                        % {"number": number, "start": entry[:30], "length": f"{len(entry):,}",
                                           "most": MAX_ENTRY_CHARS})
    return entries


@dataclass(frozen=True)
class _Group:
    """The fields of the chosen tagger or strategy: ``choice`` is the field that chooses, ``marker`` the hidden
    field saying whose fields the page shows, ``values`` what they show."""

    choice: str
    marker: str
    chosen: str
    prefix: str
    params: tuple[Param, ...]
    values: dict[str, Any]


def _with_fresh_parameters(data, groups: tuple[_Group, ...]):
    """``data``, and the groups it posted for another tagger or strategy than the one it names (a page without
    scripts): their fields are replaced by the chosen one's values, to be shown and checked before anything is
    saved."""
    stale = [group for group in groups if data is not None and data.get(group.marker) != group.chosen]
    if not stale:
        return data, []
    data = data.copy()
    for group in stale:
        data[group.marker] = group.chosen
        for param in group.params:
            posted = as_posted(param, group.values.get(param.name, param.default))
            name = f"{group.prefix}-{param.name}"
            if posted is None:
                data.pop(name, None)
            else:
                data[name] = posted
    return data, [group.choice for group in stale]


_UPLOAD_HELP = format_lazy(_("plain UTF-8 text, one per line, at most {kilobytes} KB"), kilobytes=MAX_UPLOAD_BYTES // 1024)


class LoopSettingsForm(forms.Form):
    tagger_kind = forms.ChoiceField(label=_("Tagger"), choices=[(k, TAGGER_LABELS.get(k, k)) for k in TAGGERS])
    tagger_parameters_of = forms.CharField(widget=forms.HiddenInput, required=False)
    strategy = forms.ChoiceField(label=_("Query strategy"), choices=strategy_choices())
    strategy_parameters_of = forms.CharField(widget=forms.HiddenInput, required=False)
    batch_size = forms.IntegerField(label=_("Batch size"), min_value=1, max_value=1000,
                                    help_text=_("submissions between two retrains"))
    recall_bias_beta = forms.TypedChoiceField(
        label=_("Recall bias of the suggestions"), choices=BETAS, coerce=float, empty_value=None, required=False,
        help_text=_("thresholds tuned for F_β on the evaluation documents: higher β, more (and less sure) "
                  "suggestions"),
    )
    diverse_batches = forms.BooleanField(
        label=_("Keep each batch diverse across stylometric clusters"), required=False,
        help_text=_("needs the project's clusters (Stylometric clusters page)"),
    )
    self_training = forms.BooleanField(label=_("Self-training (add confident machine-labelled sentences)"),
                                       required=False)
    annotators_per_document = forms.IntegerField(label=_("Annotators per record (double annotation)"),
                                                 min_value=1, max_value=5)
    adjudication = forms.ChoiceField(
        label=_("Adjudicate without a person"), choices=Project.Adjudication.choices,
        help_text=_("records the rule does not decide wait in the adjudication queue"),
    )
    awaiting_adjudication = forms.ChoiceField(
        label=_("A record awaiting adjudication is"), choices=Project.Awaiting.choices,
    )
    control_rate = forms.IntegerField(
        label=_("Control rate (%)"), min_value=0, max_value=50,
        help_text=_("with one annotator per record: this share of records is annotated twice as well, so that "
                  "agreement and each annotator's quality stay known"),
    )
    assignment_timeout_minutes = forms.IntegerField(
        label=_("Hand a record back after (minutes)"), min_value=5, max_value=7 * 24 * 60,
        help_text=_("an untouched record assigned this long returns to the pool"),
    )
    eponyms = forms.CharField(
        label=_("Eponyms"), required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("one per line: person names that are not PHI in this project (Parkinson, Alzheimer…), "
                  "kept for the de-identified export"),
    )
    eponyms_file = forms.FileField(label=_("Add eponyms from a file"), required=False,
                                   help_text=_UPLOAD_HELP)
    gazetteer_file = forms.FileField(label=_("Add entries from a file"), required=False,
                                     help_text=_UPLOAD_HELP)
    gazetteer_file_label = forms.ChoiceField(label=_("to the list of"), required=False)

    def __init__(self, data=None, files=None, *, project: Project, tagger_kind: str | None = None,
                 strategy: str | None = None) -> None:
        self.project = project
        strategies = dict.fromkeys([*dict(strategy_choices()), project.strategy])  # a strategy set elsewhere stays
        stored_kind = project.tagger.get("kind", "crf")
        kind = tagger_kind or (data or {}).get("tagger_kind") or stored_kind
        self.kind = kind if kind in TAGGERS else stored_kind
        chosen = strategy or (data or {}).get("strategy") or project.strategy
        self.chosen_strategy = chosen if chosen in strategies else project.strategy
        groups = self._parameter_groups()
        data, self._stale = _with_fresh_parameters(data, groups)
        super().__init__(data, files, initial=self._initial())
        self.fields["strategy"].choices = [(name, dict(strategy_choices()).get(name, name)) for name in strategies]
        self.tagger_names, self.strategy_names = (add_fields(self, group.prefix, group.params, group.values)
                                                  for group in groups)
        self.policy_names = add_fields(self, POLICY_PREFIX, POLICY_PARAMETERS,
                                       {**defaults(POLICY_PARAMETERS), **project.self_training_policy})
        self.gazetteer_names = {}
        lists = list(dict.fromkeys([*project.labels, *project.gazetteers]))
        for label in lists:
            name = f"{GAZETTEER_PREFIX}-{label}"
            self.fields[name] = forms.CharField(
                label=label, required=False, widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
                initial="\n".join(project.gazetteers.get(label, [])),
            )
            self.gazetteer_names[name] = label
        self.fields["gazetteer_file_label"].choices = [("", "—")] + [(label, label) for label in lists]
        self.type_beta_names = {}
        for label in dict.fromkeys([*project.labels, *project.recall_bias_betas]):
            name = f"{TYPE_BETA_PREFIX}-{label}"
            own = project.recall_bias_betas.get(label)
            self.fields[name] = forms.TypedChoiceField(label=label, choices=TYPE_BETAS, coerce=float,
                                                       empty_value=None, required=False,
                                                       initial="" if own is None else f"{own:g}")
            self.type_beta_names[name] = label
        self.fields["tagger_kind"].widget.attrs.update(self._swap("#tagger-parameters"))
        self.fields["strategy"].widget.attrs.update(self._swap("#strategy-parameters"))

    # Building -------------------------------------------------------------------------------------------------
    def _initial(self) -> dict[str, Any]:
        project = self.project
        return {
            "tagger_kind": self.kind, "tagger_parameters_of": self.kind,
            "strategy": self.chosen_strategy, "strategy_parameters_of": self.chosen_strategy,
            "batch_size": project.batch_size, "self_training": project.self_training,
            "recall_bias_beta": "" if project.recall_bias_beta is None else f"{project.recall_bias_beta:g}",
            "annotators_per_document": project.annotators_per_document,
            "adjudication": project.adjudication, "awaiting_adjudication": project.awaiting_adjudication,
            "control_rate": round(project.control_rate * 100),
            "diverse_batches": project.diverse_batches,
            "assignment_timeout_minutes": project.assignment_timeout_minutes,
            "eponyms": "\n".join(project.eponyms),
        }

    def _parameter_groups(self) -> tuple[_Group, _Group]:
        params, base = strategy_parameter_values(self.chosen_strategy)
        return (
            _Group("tagger_kind", "tagger_parameters_of", self.kind, TAGGER_PREFIX, tagger_parameters(self.kind),
                   {**defaults(tagger_parameters(self.kind)), **self._tagger_values()}),
            _Group("strategy", "strategy_parameters_of", self.chosen_strategy, STRATEGY_PREFIX, params,
                   {**base, **self._strategy_overrides()}),
        )

    def _tagger_values(self) -> dict[str, Any]:
        same = self.kind == self.project.tagger.get("kind", "crf")
        return dict(self.project.tagger.get("params", {})) if same else {}

    def _strategy_overrides(self) -> dict[str, Any]:
        return dict(self.project.strategy_params) if self.chosen_strategy == self.project.strategy else {}

    def _swap(self, target: str) -> dict[str, str]:
        return {"hx-get": reverse("learning:loop-parameters", args=[self.project.pk]), "hx-target": target,
                "hx-trigger": "change", "hx-swap": "innerHTML"}

    # Groups, for the template -----------------------------------------------------------------------------------
    def _bound(self, names) -> list[forms.BoundField]:
        return [self[name] for name in names]

    @property
    def tagger_fields(self) -> list[forms.BoundField]:
        return self._bound(["tagger_parameters_of", *self.tagger_names])

    @property
    def strategy_fields(self) -> list[forms.BoundField]:
        return self._bound(["strategy_parameters_of", *self.strategy_names])

    @property
    def policy_fields(self) -> list[forms.BoundField]:
        return self._bound(self.policy_names)

    @property
    def gazetteer_fields(self) -> list[forms.BoundField]:
        return self._bound(self.gazetteer_names)

    @property
    def type_beta_fields(self) -> list[forms.BoundField]:
        return self._bound(self.type_beta_names)

    # Checking -------------------------------------------------------------------------------------------------
    def clean_eponyms(self) -> list[str]:
        return _checked_entries(_entries(self.cleaned_data["eponyms"]))

    def clean(self):
        data = super().clean()
        for name in self._stale:
            self.add_error(name, gettext("the parameters below are now those of your choice: check them and save again"))
        self._add_uploads(data)
        total = sum(len(data.get(name) or []) for name in self.gazetteer_names)
        if total > MAX_GAZETTEER_ENTRIES:
            self.add_error(None, gettext("the gazetteers hold %(total)s entries together; at most %(most)s are allowed")
                                 % {"total": f"{total:,}", "most": f"{MAX_GAZETTEER_ENTRIES:,}"})
        if not self._errors:
            self._check_with_the_core(data)
        return data

    def _add_uploads(self, data: dict) -> None:
        for name in self.gazetteer_names:
            if name in data:
                try:
                    data[name] = _checked_entries(_entries(data[name]))
                except forms.ValidationError as error:
                    self.add_error(name, error)
                    data.pop(name, None)
        if data.get("eponyms_file"):
            try:
                added = _entries(_uploaded_text(data["eponyms_file"]))
                data["eponyms"] = _checked_entries(list(dict.fromkeys([*data.get("eponyms", []), *added])))
            except forms.ValidationError as error:
                self.add_error("eponyms_file", error)
        if data.get("gazetteer_file"):
            label = data.get("gazetteer_file_label")
            target = f"{GAZETTEER_PREFIX}-{label}"
            if target not in self.gazetteer_names:
                self.add_error("gazetteer_file_label", gettext("choose the list the file's entries go to"))
                return
            try:
                added = _entries(_uploaded_text(data["gazetteer_file"]))
                data[target] = _checked_entries(list(dict.fromkeys([*data.get(target, []), *added])))
            except forms.ValidationError as error:
                self.add_error("gazetteer_file", error)

    def _check_with_the_core(self, data: dict) -> None:
        """What the ranges cannot say (a combination the tagger or strategy refuses) is refused here too."""
        try:
            tagger_factory(self.kind, **self._tagger_params(data))
        except (UnknownTaggerError, TypeError, ValueError) as error:
            self.add_error("tagger_kind", str(error))
        if self.chosen_strategy != ROI_MEASURED:
            try:
                get_strategy(self.chosen_strategy, **self._strategy_params(data))
            except (UnknownStrategyError, TypeError, ValueError) as error:
                self.add_error("strategy", str(error))

    # Storing --------------------------------------------------------------------------------------------------
    def _values(self, data: dict, prefix: str, params) -> dict[str, Any]:
        return {p.name: data[f"{prefix}-{p.name}"] for p in params if f"{prefix}-{p.name}" in data}

    def _tagger_params(self, data: dict) -> dict[str, Any]:
        params = tagger_parameters(self.kind)
        stored = self._tagger_values()
        shown = {p.name for p in params}
        internal = {name: value for name, value in stored.items() if name not in shown}
        return {**internal, **overrides(params, self._values(data, TAGGER_PREFIX, params), kept=stored)}

    def _strategy_params(self, data: dict) -> dict[str, Any]:
        params, base = strategy_parameter_values(self.chosen_strategy)
        return overrides(params, self._values(data, STRATEGY_PREFIX, params), base=base,
                         kept=self._strategy_overrides())

    def _type_betas(self, data: dict) -> dict[str, float]:
        """The PHI types whose β differs from the one for every type (0: none for that type)."""
        every = data["recall_bias_beta"] or 0.0
        chosen = {label: data.get(name) for name, label in self.type_beta_names.items()}
        return {label: beta for label, beta in chosen.items() if beta is not None and beta != every}

    def changes(self) -> dict:
        """The project fields this form sets."""
        data = self.cleaned_data
        policy = overrides(POLICY_PARAMETERS, self._values(data, POLICY_PREFIX, POLICY_PARAMETERS),
                           kept=self.project.self_training_policy)
        gazetteers = {self.gazetteer_names[name]: data[name] for name in self.gazetteer_names if data.get(name)}
        return {
            "tagger": {"kind": self.kind, "params": self._tagger_params(data)},
            "strategy": self.chosen_strategy, "strategy_params": self._strategy_params(data),
            "batch_size": data["batch_size"], "self_training": data["self_training"],
            "self_training_policy": policy, "recall_bias_beta": data["recall_bias_beta"],
            "recall_bias_betas": self._type_betas(data),
            "annotators_per_document": data["annotators_per_document"],
            "adjudication": data["adjudication"], "awaiting_adjudication": data["awaiting_adjudication"],
            "control_rate": data["control_rate"] / 100,
            "diverse_batches": data["diverse_batches"],
            "assignment_timeout_minutes": data["assignment_timeout_minutes"],
            "eponyms": data["eponyms"], "gazetteers": gazetteers,
        }
