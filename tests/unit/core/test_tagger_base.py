"""The taggers' shared base class: parameters from ``__init__``, set_params, repr, clone, and the registry."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from corpus.types import Document, Span
from learning.core.features import FeatureCache
from learning.core.registry import UnknownTaggerError, make_tagger, tagger_factory
from learning.core.taggers.base import BaseTagger, NotFittedError, Tagger, clone
from learning.core.taggers.crf import CRFTagger
from learning.core.taggers.unigram import UnigramTagger

TRAIN = [
    Document("Juan vive en Madrid .", (Span(0, 4, "NAME"), Span(13, 19, "CITY"))),
    Document("Ana vive en Toledo .", (Span(0, 3, "NAME"), Span(12, 18, "CITY"))),
]

CRF_PARAMS = [
    "c1", "c2", "max_iterations", "epsilon", "all_possible_transitions", "gold_lexicon", "gazetteers",
    "vocabulary_scope", "feature_cache", "warm_start", "warm_iterations", "refit_every", "refit_growth", "cold_refit",
]
FLAIR_PARAMS = [
    "hidden_size", "word_dim", "word_method", "word_epochs", "char_dim", "char_hidden_size", "char_lm",
    "char_lm_hidden_size", "char_lm_epochs", "sentences_per_instance", "max_instance_tokens", "max_epochs",
    "mini_batch_size", "learning_rate", "optimizer", "lr_schedule", "word_dropout", "locked_dropout", "seed",
    "n_threads", "fit_threads", "predict_batch_size", "verbose",
]


def _flair_class():
    pytest.importorskip("torch")
    pytest.importorskip("flair")
    from learning.core.taggers.flair_tagger import BiLSTMCRFTagger

    return BiLSTMCRFTagger


# Parameters -------------------------------------------------------------------------------------------------

def test_unigram_params_round_trip():
    tagger = UnigramTagger(lowercase=False)
    assert UnigramTagger._get_param_names() == ["lowercase"]
    assert tagger.get_params() == {"lowercase": False}
    assert tagger.set_params(lowercase=True) is tagger
    assert tagger.get_params() == {"lowercase": True}
    assert UnigramTagger(**tagger.get_params()).get_params() == {"lowercase": True}


def test_crf_params_round_trip():
    cache = FeatureCache()
    gazetteers = {"CITY": ["Madrid"]}
    tagger = CRFTagger(c1=0.2, max_iterations=7, gazetteers=gazetteers, vocabulary_scope="3", feature_cache=cache)
    assert CRFTagger._get_param_names() == CRF_PARAMS
    params = tagger.get_params()
    assert params == {
        "c1": 0.2, "c2": 0.05, "max_iterations": 7, "epsilon": 1e-5, "all_possible_transitions": True,
        "gold_lexicon": True, "gazetteers": gazetteers, "vocabulary_scope": "3", "feature_cache": cache,
        "warm_start": False, "warm_iterations": 3,
        "refit_every": 20, "refit_growth": 0.5, "cold_refit": "inline",
    }
    assert params["feature_cache"] is cache
    assert tagger.set_params(c2=0.5, max_iterations=3) is tagger
    assert (tagger.c2, tagger.max_iterations, tagger.c1) == (0.5, 3, 0.2)
    assert CRFTagger(**tagger.get_params()).get_params() == tagger.get_params()


def test_flair_params_round_trip_without_training():
    cls = _flair_class()
    tagger = cls(hidden_size=16, optimizer="sgd", n_threads=None)
    assert cls._get_param_names() == FLAIR_PARAMS
    params = tagger.get_params()
    assert list(params) == FLAIR_PARAMS
    assert (params["hidden_size"], params["optimizer"], params["n_threads"], params["seed"]) == (16, "sgd", None, 0)
    assert tagger.set_params(max_epochs=2, seed=9) is tagger
    assert (tagger.max_epochs, tagger.seed) == (2, 9)
    assert cls(**tagger.get_params()).get_params() == tagger.get_params()
    assert repr(tagger) == "BiLSTMCRFTagger(hidden_size=16, max_epochs=2, optimizer='sgd', seed=9, n_threads=None)"
    fresh = clone(tagger)
    assert type(fresh) is cls and fresh is not tagger
    assert fresh.get_params() == tagger.get_params()


def test_set_params_refuses_an_unknown_name_and_names_the_accepted_ones():
    tagger = CRFTagger()
    with pytest.raises(ValueError) as error:
        tagger.set_params(c3=1.0, max_iterations=5)
    assert str(error.value) == (
        "CRFTagger has no parameter(s) c3; it takes: "
        "c1, c2, max_iterations, epsilon, all_possible_transitions, gold_lexicon, gazetteers, vocabulary_scope, "
        "feature_cache, warm_start, warm_iterations, refit_every, refit_growth, cold_refit"
    )
    assert tagger.max_iterations == 50  # nothing was set
    with pytest.raises(ValueError, match=r"^UnigramTagger has no parameter\(s\) lower, upper; it takes: lowercase$"):
        UnigramTagger().set_params(upper=True, lower=True)


def test_repr_shows_only_non_default_parameters():
    assert repr(UnigramTagger()) == "UnigramTagger()"
    assert repr(UnigramTagger(lowercase=False)) == "UnigramTagger(lowercase=False)"
    assert repr(CRFTagger()) == "CRFTagger()"
    assert repr(CRFTagger(c1=0.1, max_iterations=7, gazetteers={"CITY": ["Madrid"]})) == (
        "CRFTagger(max_iterations=7, gazetteers={'CITY': ['Madrid']})"
    )


# clone --------------------------------------------------------------------------------------------------------

def test_clone_is_unfitted_with_equal_params_and_independent():
    fitted = UnigramTagger(lowercase=False).fit(TRAIN)
    assert fitted.labels_ == ["O", "B-CITY", "B-NAME"]
    fresh = clone(fitted)
    assert type(fresh) is UnigramTagger and fresh is not fitted
    assert fresh.get_params() == {"lowercase": False}
    assert not hasattr(fresh, "labels_") and not hasattr(fresh, "distributions_")
    with pytest.raises(NotFittedError, match="^UnigramTagger is not fitted; call fit\\(docs\\) first$"):
        fresh.predict(TRAIN)
    fresh.set_params(lowercase=True)
    assert fitted.lowercase is False
    fresh.fit(TRAIN[:1])
    assert fitted.labels_ == ["O", "B-CITY", "B-NAME"]
    assert fitted.predict_tags(TRAIN[1:]) == [["B-NAME", "O", "O", "B-CITY", "O"]]


def test_clone_of_a_crf_shares_the_feature_cache_but_not_the_model():
    cache = FeatureCache()
    fitted = CRFTagger(max_iterations=5, feature_cache=cache).fit(TRAIN)
    fresh = clone(fitted)
    assert fresh.get_params() == fitted.get_params()
    assert fresh.feature_cache is cache
    assert [name for name in vars(fresh) if name.endswith("_")] == []
    with pytest.raises(NotFittedError, match="^CRFTagger is not fitted; call fit\\(docs\\) first$"):
        fresh.predict_marginals(TRAIN)
    assert sorted(fitted.labels_) == ["B-CITY", "B-NAME", "O"]


def test_clone_refuses_a_tagger_whose_init_changes_its_parameters():
    class Rounding(UnigramTagger):
        def __init__(self, lowercase: bool = True, smoothing: float = 0.0) -> None:
            self.lowercase = lowercase
            self.smoothing = float(round(smoothing, 1))

    with pytest.raises(RuntimeError, match="^Rounding.__init__ does not store parameter 'smoothing' as given;"):
        clone(Rounding(smoothing=0.25))


# Base-class behaviour ------------------------------------------------------------------------------------------

def test_the_taggers_share_the_base_class_and_satisfy_the_protocol():
    for tagger in (UnigramTagger(), CRFTagger(max_iterations=5, feature_cache=FeatureCache())):
        assert isinstance(tagger, BaseTagger)
        assert not isinstance(tagger, Tagger)  # the protocol includes the fitted ``labels_``
        assert isinstance(tagger.fit(TRAIN), Tagger)
    with pytest.raises(TypeError):
        BaseTagger()


def test_base_prediction_is_the_argmax_of_the_marginals():
    class Fixed(BaseTagger):
        def __init__(self, marginals: tuple = ()) -> None:
            self.marginals = marginals

        def fit(self, docs):
            self.labels_ = ["O", "B-NAME", "I-NAME"]
            return self

        def predict_marginals(self, docs):
            self._check_fitted()
            return [np.array(self.marginals)]

    rows = ((0.2, 0.7, 0.1), (0.1, 0.3, 0.6), (0.5, 0.5, 0.0))
    tagger = Fixed(rows)
    with pytest.raises(NotFittedError, match="^Fixed is not fitted; call fit\\(docs\\) first$"):
        tagger.predict_tags([Document("Ana Gil y")])
    tagger.fit([])
    doc = Document("Ana Gil y")
    assert tagger.predict_tags([doc]) == [["B-NAME", "I-NAME", "O"]]
    assert tagger.predict([doc]) == [[Span(0, 7, "NAME")]]


def test_a_fitted_tagger_still_pickles():
    cache = FeatureCache()
    for tagger in (UnigramTagger().fit(TRAIN), CRFTagger(max_iterations=5, feature_cache=cache).fit(TRAIN)):
        restored = pickle.loads(pickle.dumps(tagger))
        assert type(restored) is type(tagger)
        assert restored.labels_ == tagger.labels_
        for a, b in zip(tagger.predict_marginals(TRAIN), restored.predict_marginals(TRAIN)):
            np.testing.assert_allclose(a, b, atol=1e-12)
        assert restored.predict(TRAIN) == tagger.predict(TRAIN)


# Registry -----------------------------------------------------------------------------------------------------

def test_registry_rejects_unknown_params_naming_the_accepted_ones():
    with pytest.raises(UnknownTaggerError) as error:
        tagger_factory("unigram", lowercase=False, smoothing=1)
    assert str(error.value) == "tagger 'unigram' takes no parameter(s) smoothing; it takes: lowercase"
    with pytest.raises(UnknownTaggerError) as error:
        make_tagger("crf", c3=1, iterations=5)
    assert str(error.value) == (
        "tagger 'crf' takes no parameter(s) c3, iterations; it takes: "
        "c1, c2, max_iterations, epsilon, all_possible_transitions, gold_lexicon, gazetteers, vocabulary_scope, "
        "feature_cache, warm_start, warm_iterations, refit_every, refit_growth, cold_refit"
    )


def test_tagger_factory_returns_fresh_clones_of_the_checked_prototype():
    cache = FeatureCache()
    factory = tagger_factory("crf", seed=5, max_iterations=4, feature_cache=cache)
    first, second = factory(), factory()
    assert type(first) is CRFTagger and first is not second
    assert first.get_params() == second.get_params() == {
        "c1": 0.1, "c2": 0.05, "max_iterations": 4, "epsilon": 1e-5, "all_possible_transitions": True,
        "gold_lexicon": True, "gazetteers": None, "vocabulary_scope": None, "feature_cache": cache, "warm_start": False,
        "warm_iterations": 3, "refit_every": 20, "refit_growth": 0.5, "cold_refit": "inline",
    }  # no seed: the CRF takes none
    first.fit(TRAIN)
    assert not hasattr(factory(), "crf_")
    first.set_params(max_iterations=9)
    assert factory().max_iterations == 4


def test_tagger_factory_passes_the_seed_to_taggers_that_take_one():
    _flair_class()
    made = tagger_factory("bilstm-crf", seed=11, hidden_size=8)()
    assert (type(made).__name__, made.seed, made.hidden_size) == ("BiLSTMCRFTagger", 11, 8)
    assert not hasattr(made, "model_")
    assert tagger_factory("flair")().seed == 0
