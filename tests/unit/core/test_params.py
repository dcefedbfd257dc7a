"""The parameter descriptions the settings form is built from: they cover every tagger's ``__init__`` (a new
parameter is either described or named internal), their defaults are the constructors', and every preset of a
strategy lies inside the range a lead may type."""
from __future__ import annotations

import inspect

import pytest

from learning.core.costs import MEASURED_ROI_PARAMETERS, VALUE_SECONDS
from learning.core.params import Param, defaults, overrides
from learning.core.registry import TAGGERS, tagger_class
from learning.core.self_training import POLICY_PARAMETERS
from learning.core.strategies import PRESETS, get_strategy, strategy_defaults, strategy_parameters


@pytest.mark.parametrize("name", sorted(TAGGERS))
def test_a_taggers_parameters_are_described_or_internal_and_keep_the_constructors_defaults(name):
    cls = tagger_class(name)
    signature = inspect.signature(cls.__init__).parameters
    described, accepted = {p.name for p in cls.PARAMETERS}, set(cls._get_param_names())
    assert accepted - described - cls.INTERNAL_PARAMETERS == set(), "describe it in PARAMETERS or name it internal"
    assert described <= accepted and described & cls.INTERNAL_PARAMETERS == set()
    for param in cls.PARAMETERS:
        assert param.default == signature[param.name].default, param.name
        assert type(param.default) is param.type, param.name
        assert param.help and len(param.help) <= 110, param.name


def test_internal_parameters_are_the_ones_the_program_sets():
    assert {"feature_cache", "warm_start", "gazetteers"} <= tagger_class("crf").INTERNAL_PARAMETERS
    assert {p.name for p in tagger_class("crf").PARAMETERS} == {
        "c1", "c2", "max_iterations", "epsilon", "all_possible_transitions", "gold_lexicon"}
    assert [p.name for p in tagger_class("unigram").PARAMETERS] == ["lowercase"]
    assert "seed" in tagger_class("flair").INTERNAL_PARAMETERS


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_lies_inside_the_range_a_lead_may_type(preset):
    params = strategy_parameters(preset)
    values = get_strategy(preset).params
    assert set(values) == {p.name for p in params}
    for param in params:
        assert param.minimum <= values[param.name] <= param.maximum, (preset, param.name)


def test_a_kinds_parameters_and_defaults():
    assert [(p.name, p.default, p.minimum, p.maximum) for p in strategy_parameters("lcub-6")] == [
        ("theta", 0.6, 0.0, 1.0)]
    assert [p.name for p in strategy_parameters("roi")] == ["nc_fn", "nc_fp", "c_t"]
    assert strategy_parameters("random") == () and strategy_parameters("LC_SUM") == ()
    # A preset's values, else the kind's defaults (the best θ of the trial records), which make a working strategy.
    assert strategy_defaults("LCUB_4") == {"theta": 0.4} and strategy_defaults("lcub") == {"theta": 0.6}
    assert strategy_defaults("roi") == {"nc_fn": 0.1, "nc_fp": 0.1, "c_t": 0.01} and strategy_defaults("random") == {}
    assert get_strategy("lcub", **strategy_defaults("lcub")).params == {"theta": 0.6}


def test_measured_roi_and_the_self_training_policy_defaults():
    assert defaults(MEASURED_ROI_PARAMETERS) == {"value_seconds": VALUE_SECONDS}
    assert defaults(POLICY_PARAMETERS) == {"max_pool_documents": 300, "iterations": 1, "dev_fraction": 0.2,
                                           "selection": True, "target_precision": 0.99, "target_recall": 0.98}


def test_a_description_refuses_a_default_it_would_itself_refuse():
    with pytest.raises(ValueError, match="below 0"):
        Param("rate", float, -0.1, "a share", minimum=0.0, maximum=1.0)
    with pytest.raises(ValueError, match="not one of its choices"):
        Param("optimizer", str, "rmsprop", "how", choices=("adam", "sgd"))
    with pytest.raises(TypeError):
        Param("sizes", list, [], "no lists")
    assert Param("max_iterations", int, 50, "iterations").label == "Max iterations"


def test_overrides_keep_what_differs_and_what_was_stored_before():
    params = (Param("c1", float, 0.1, "L1"), Param("c2", float, 0.05, "L2"), Param("n", int, 5, "n"))
    values = {"c1": 0.1, "c2": 0.2, "n": 5}
    assert overrides(params, values) == {"c2": 0.2}
    assert overrides(params, values, kept={"c1": 0.3}) == {"c1": 0.1, "c2": 0.2}
    # Against a preset's values rather than the defaults.
    assert overrides(params, values, base={"c1": 0.1, "c2": 0.2, "n": 4}) == {"n": 5}
