"""The loop's settings as a lead edits them: every value is checked against the learning core before it is
stored, so a retrain never starts on a strategy or tagger parameter that cannot work."""
from __future__ import annotations

import json

from django import forms

from annotator.models import Project
from learning.core.registry import TAGGERS, UnknownTaggerError, tagger_factory
from learning.core.strategies import UnknownStrategyError, get_strategy
from learning.selectors.measured_costs import ROI_MEASURED, strategy_choices

SELF_TRAINING_POLICY_KEYS = {
    "max_pool_documents": int, "iterations": int, "dev_fraction": float, "selection": bool,
    "target_precision": float, "target_recall": float,
}
TAGGER_LABELS = {"crf": "CRF (sklearn-crfsuite)", "flair": "BiLSTM-CRF (Flair)", "unigram": "Unigram baseline"}
BETAS = [("", "off"), ("1", "F1"), ("4", "F4"), ("10", "F10"), ("20", "F20"), ("40", "F40")]


class JSONObjectField(forms.CharField):
    """A JSON object typed into a text area ({} when left empty)."""

    widget = forms.Textarea(attrs={"rows": 3, "spellcheck": "false"})

    def to_python(self, value):
        value = (value or "").strip()
        if not value:
            return {}
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})")
        if not isinstance(parsed, dict):
            raise forms.ValidationError('write a JSON object, e.g. {"max_iterations": 50}')
        return parsed

    def prepare_value(self, value):
        return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


class LoopSettingsForm(forms.Form):
    tagger_kind = forms.ChoiceField(label="Tagger", choices=[(k, TAGGER_LABELS.get(k, k)) for k in TAGGERS])
    tagger_params = JSONObjectField(label="Tagger parameters", required=False,
                                    help_text='e.g. {"max_iterations": 50, "c1": 0.1} for the CRF')
    strategy = forms.ChoiceField(label="Query strategy", choices=strategy_choices())
    strategy_params = JSONObjectField(
        label="Strategy parameters", required=False,
        help_text='overrides, e.g. {"theta": 0.65} for LCUB; for ROI (measured costs): {"value_seconds": 30}, '
                  "what one corrected error is worth in seconds of annotator time",
    )
    batch_size = forms.IntegerField(label="Batch size", min_value=1, max_value=1000,
                                    help_text="submissions between two retrains")
    self_training = forms.BooleanField(label="Self-training (add confident machine-labelled sentences)",
                                       required=False)
    self_training_policy = JSONObjectField(
        label="Self-training policy", required=False,
        help_text=f"optional keys: {', '.join(SELF_TRAINING_POLICY_KEYS)}",
    )
    recall_bias_beta = forms.TypedChoiceField(
        label="Recall bias of the suggestions", choices=BETAS, coerce=float, empty_value=None, required=False,
        help_text="thresholds tuned for F_β on the evaluation documents: higher β, more (and less sure) "
                  "suggestions",
    )
    diverse_batches = forms.BooleanField(
        label="Keep each batch diverse across stylometric clusters", required=False,
        help_text="needs the project's clusters (Stylometric clusters page)",
    )
    annotators_per_document = forms.IntegerField(label="Annotators per record (double annotation)",
                                                 min_value=1, max_value=5)
    adjudication = forms.ChoiceField(
        label="Adjudicate without a person", choices=Project.Adjudication.choices,
        help_text="records the rule does not decide wait in the adjudication queue",
    )
    awaiting_adjudication = forms.ChoiceField(
        label="A record awaiting adjudication is", choices=Project.Awaiting.choices,
    )
    control_rate = forms.IntegerField(
        label="Control rate (%)", min_value=0, max_value=50,
        help_text="with one annotator per record: this share of records is annotated twice as well, so that "
                  "agreement and each annotator's quality stay known",
    )
    assignment_timeout_minutes = forms.IntegerField(
        label="Hand a record back after (minutes)", min_value=5, max_value=7 * 24 * 60,
        help_text="an untouched record assigned this long returns to the pool",
    )
    eponyms = forms.CharField(
        label="Eponyms", required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="one per line: person names that are not PHI in this project (Parkinson, Alzheimer…), "
                  "kept for the de-identified export",
    )
    gazetteers = JSONObjectField(
        label="Gazetteers", required=False,
        help_text='lists the CRF uses as features, e.g. {"hospitals": ["Hospital La Paz", "Clínica Ruber"]}',
    )

    @classmethod
    def for_project(cls, project, data=None) -> "LoopSettingsForm":
        initial = {
            "tagger_kind": project.tagger.get("kind", "crf"), "tagger_params": project.tagger.get("params", {}),
            "strategy": project.strategy, "strategy_params": project.strategy_params,
            "batch_size": project.batch_size, "self_training": project.self_training,
            "self_training_policy": project.self_training_policy,
            "recall_bias_beta": "" if project.recall_bias_beta is None else f"{project.recall_bias_beta:g}",
            "annotators_per_document": project.annotators_per_document,
            "adjudication": project.adjudication, "awaiting_adjudication": project.awaiting_adjudication,
            "control_rate": round(project.control_rate * 100),
            "diverse_batches": project.diverse_batches,
            "assignment_timeout_minutes": project.assignment_timeout_minutes,
            "eponyms": "\n".join(project.eponyms), "gazetteers": project.gazetteers,
        }
        return cls(data=data, initial=initial)

    def clean(self):
        data = super().clean()
        if "tagger_kind" in data and "tagger_params" in data:
            try:
                tagger_factory(data["tagger_kind"], **data["tagger_params"])
            except (UnknownTaggerError, TypeError, ValueError) as error:
                self.add_error("tagger_params", str(error))
        if "strategy" in data and "strategy_params" in data:
            params = data["strategy_params"]
            if data["strategy"] == ROI_MEASURED:
                unknown = sorted(set(params) - {"value_seconds"})
                value = params.get("value_seconds", 1)
                if unknown:
                    self.add_error("strategy_params", f"ROI (measured costs) takes only value_seconds, not "
                                                      f"{', '.join(unknown)}")
                elif not isinstance(value, (int, float)) or value <= 0:
                    self.add_error("strategy_params", "value_seconds must be a positive number")
            else:
                try:
                    get_strategy(data["strategy"], **params)
                except (UnknownStrategyError, TypeError, ValueError) as error:
                    self.add_error("strategy_params", str(error))
        for name, entries in (data.get("gazetteers") or {}).items():
            if not isinstance(entries, list) or not all(isinstance(e, str) and e.strip() for e in entries):
                self.add_error("gazetteers", f"{name!r} must be a list of non-empty strings")
        for key, value in (data.get("self_training_policy") or {}).items():
            kind = SELF_TRAINING_POLICY_KEYS.get(key)
            if kind is None:
                self.add_error("self_training_policy", f"unknown key {key!r}")
            elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                if not (kind is float and isinstance(value, int) and not isinstance(value, bool)):
                    self.add_error("self_training_policy", f"{key} must be a {kind.__name__}")
        return data

    def changes(self) -> dict:
        """The project fields this form sets."""
        data = self.cleaned_data
        return {
            "tagger": {"kind": data["tagger_kind"], "params": data["tagger_params"]},
            "strategy": data["strategy"], "strategy_params": data["strategy_params"],
            "batch_size": data["batch_size"], "self_training": data["self_training"],
            "self_training_policy": data["self_training_policy"], "recall_bias_beta": data["recall_bias_beta"],
            "annotators_per_document": data["annotators_per_document"],
            "adjudication": data["adjudication"], "awaiting_adjudication": data["awaiting_adjudication"],
            "control_rate": data["control_rate"] / 100,
            "diverse_batches": data["diverse_batches"],
            "assignment_timeout_minutes": data["assignment_timeout_minutes"],
            "eponyms": [line.strip() for line in data["eponyms"].splitlines() if line.strip()],
            "gazetteers": {name: [entry.strip() for entry in entries]
                           for name, entries in data["gazetteers"].items()},
        }
