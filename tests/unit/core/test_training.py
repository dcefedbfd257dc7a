"""The one train-and-evaluate pipeline: which documents train, which tune the recall bias, which are scored."""
import numpy as np
import pytest

from corpus.text import tokenize
from corpus.types import Document
from learning.core.metrics import evaluate
from learning.core.decoding import decoded_spans
from learning.core.recall_bias import recall_biased_spans, tune_recall_bias, tune_recall_bias_per_label
from learning.core.registry import tagger_factory
from learning.core.taggers.base import gold_tags
from learning.core.training import CROSS_FIT, TUNE_ON_DEV, cross_fit_recall_bias, train_and_evaluate
from tests.unit.core.toy import NoteBuilder

NAMES = ["Ana", "Luis", "Marta", "Pedro", "Lucia", "Jorge", "Elena", "Pablo", "Sara", "Diego"]
CITIES = ["Madrid", "Soria", "Lugo", "Cuenca", "Teruel", "Avila"]


def notes(n: int, offset: int = 0) -> list[Document]:
    return [
        NoteBuilder().add("Paciente ").add(NAMES[(i + offset) % len(NAMES)], "NAME").add(" de ")
        .add(CITIES[(i + offset) % len(CITIES)], "LOC").add(" ingresa hoy .").build(f"n{i + offset}")
        for i in range(n)
    ]


def test_dev_tuning_trains_without_the_development_documents():
    train, evaluation = notes(10), notes(4, offset=3)
    model = train_and_evaluate(train, evaluation, tagger_factory=tagger_factory("unigram"), seed=1,
                               recall_bias_beta=4, recall_bias_tuning=TUNE_ON_DEV)
    assert len(model.dev_documents) == 2 and len(model.train_documents) == 8
    assert not {d.name for d in model.dev_documents} & {d.name for d in model.train_documents}
    assert model.recall_bias is not None and model.recall_bias_tuning == "dev"
    assert model.recall_bias_metrics["counts"]["gold"] == 8  # two spans in each evaluation note
    assert model.metrics["counts"]["gold"] == 8


def test_cross_fit_trains_on_everything_and_reports_figures_not_tuned_on_the_same_documents():
    train, evaluation = notes(10), notes(6, offset=2)
    model = train_and_evaluate(train, evaluation, tagger_factory=tagger_factory("unigram"), seed=0,
                               recall_bias_beta=10, recall_bias_tuning=CROSS_FIT)
    assert len(model.train_documents) == 10 and model.dev_documents == []
    labels = list(model.tagger.labels_)
    marginals = model.tagger.predict_marginals(evaluation)
    gold = [gold_tags(d) for d in evaluation]
    # The thresholds kept are those tuned on every evaluation document.
    assert model.recall_bias == tune_recall_bias(marginals, gold, labels, 10)
    assert model.recall_bias_metrics is not None and model.recall_bias_metrics["counts"]["gold"] == 12


def test_cross_fitting_decodes_each_fold_with_thresholds_tuned_on_the_others():
    docs = notes(2)
    tokens = [tokenize(d.text) for d in docs]
    labels = ["O", "B-LOC", "B-NAME"]
    # Document 0: its PHI tokens are unsure (P(O) = 0.6); document 1: sure. Tuned on document 1 alone,
    # no bias is needed, so document 0 keeps missing its PHI; tuned on both, document 0's PHI is recovered.
    marginals = []
    for doc, toks in zip(docs, tokens):
        tags = gold_tags(doc, toks)
        sure = doc.name == "n1"
        rows = []
        for tag in tags:
            if tag == "O":
                rows.append([0.98, 0.01, 0.01])
            else:
                p_phi = 0.9 if sure else 0.4
                row = [1 - p_phi, 0.0, 0.0]
                row[labels.index(tag)] = p_phi
                rows.append(row)
        marginals.append(np.array(rows))
    chosen, metrics = cross_fit_recall_bias(docs, tokens, marginals, labels, 4, seed=0, folds=2)
    assert chosen == tune_recall_bias(marginals, [gold_tags(d) for d in docs], labels, 4)
    on_other = [tune_recall_bias([marginals[1 - i]], [gold_tags(docs[1 - i])], labels, 4) for i in range(2)]
    expected = evaluate(docs, [recall_biased_spans(tokens[i], marginals[i], labels, *on_other[i][:2])
                               for i in range(2)], tokens)
    assert metrics == expected
    in_sample = evaluate(docs, [recall_biased_spans(t, m, labels, chosen.tau_main, chosen.tau_alt)
                                for t, m in zip(tokens, marginals)], tokens)
    assert in_sample["token"]["r"] == 1.0 and metrics["token"]["r"] == 0.5  # the in-sample figure flatters
    assert cross_fit_recall_bias(docs[:1], tokens[:1], marginals[:1], labels, 4, seed=0)[1] is None


def test_unknown_tuning_is_refused():
    with pytest.raises(ValueError, match="'dev' or 'cross-fit'"):
        train_and_evaluate(notes(3), notes(1), tagger_factory=tagger_factory("unigram"), recall_bias_tuning="eval")


def test_a_beta_per_type_tunes_a_pair_per_type_in_each_fold():
    train, evaluation = notes(10), notes(6, offset=2)
    model = train_and_evaluate(train, evaluation, tagger_factory=tagger_factory("unigram"), seed=0,
                               recall_bias_beta={"NAME": 10, "LOC": 1}, recall_bias_tuning=CROSS_FIT)
    labels = list(model.tagger.labels_)
    marginals = model.tagger.predict_marginals(evaluation)
    gold = [gold_tags(d) for d in evaluation]
    expected = tune_recall_bias_per_label(marginals, gold, labels, {"NAME": 10, "LOC": 1})
    assert model.recall_bias == expected and set(model.recall_bias.thresholds) == {"NAME", "LOC"}
    # The figures are cross-fitted with pairs per type as well: each fold decoded with those of the others.
    tokens = [tokenize(d.text) for d in evaluation]
    chosen, metrics = cross_fit_recall_bias(evaluation, tokens, marginals, labels, {"NAME": 10, "LOC": 1}, seed=0)
    assert chosen == expected and model.recall_bias_metrics == metrics
    fold_of = np.random.default_rng(0).permutation(len(evaluation)) % 5
    spans = []
    for i in range(len(evaluation)):
        others = [j for j in range(len(evaluation)) if fold_of[j] != fold_of[i]]
        pairs = tune_recall_bias_per_label([marginals[j] for j in others], [gold[j] for j in others], labels,
                                           {"NAME": 10, "LOC": 1}).thresholds
        spans.append(decoded_spans(tokens[i], marginals[i], labels, pairs))
    assert metrics == evaluate(evaluation, spans, tokens)
