"""BiLSTM-CRF tagger: exact CRF marginals, mapping to our tokens, persistence, local embeddings."""
from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("flair")

from learning.core import embeddings as local_embeddings  # noqa: E402
from learning.core._compat.flair import START_TAG, STOP_TAG, crf_scores, prepare_tensors  # noqa: E402
from corpus.bio import bio_labels, bio_to_spans  # noqa: E402
from learning.core.taggers.base import NotFittedError, Tagger  # noqa: E402
from learning.core.taggers.flair_tagger import (  # noqa: E402
    BiLSTMCRFTagger,
    crf_negative_log_likelihood,
    instance_bounds,
)
from corpus.text import tokenize  # noqa: E402
from corpus.types import Document, Span  # noqa: E402

from .toy import NoteBuilder  # noqa: E402

FIRST = ["Juan", "María", "Pedro", "Lucía", "Carmen", "José", "Ana", "Luis"]
LAST = ["García", "Pérez", "López", "Martín", "Sánchez", "Gómez"]
CITIES = ["Madrid", "Sevilla", "Valencia", "Bilbao", "Toledo"]
FILLER = [
    "Refiere dolor torácico desde hace dos días.",
    "No presenta fiebre ni disnea.",
    "Se pauta tratamiento con paracetamol.",
    "La exploración física es normal.",
]


def _synthetic_docs(n: int, seed: int) -> list[Document]:
    """Short notes with a patient name, a date and a city in a few fixed sentence shapes."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        note = (
            NoteBuilder()
            .add("Paciente ")
            .add(f"{rng.choice(FIRST)} {rng.choice(LAST)}", "NOMBRE")
            .add(" ingresa el ")
            .add(f"{rng.integers(1, 29):02d}/{rng.integers(1, 13):02d}/{rng.integers(1950, 2020)}", "FECHA")
            .add(" en ")
            .add(str(rng.choice(CITIES)), "LUGAR")
            .add(". " + " ".join(rng.choice(FILLER, size=2, replace=False)) + "\n")
            .add("Firmado: Dr. ")
            .add(f"{rng.choice(FIRST)} {rng.choice(LAST)}", "NOMBRE")
            .add(".\n")
        )
        docs.append(note.build(f"doc{i}"))
    return docs


TRAIN = _synthetic_docs(24, seed=1)
HELD_OUT = _synthetic_docs(6, seed=2)
POOL = HELD_OUT + [Document(text="Diagnóstico de apendicitis aguda; derivado a Cuenca.")]
TINY = dict(
    hidden_size=16,
    word_dim=8,
    word_epochs=2,
    char_dim=8,
    char_hidden_size=8,
    max_epochs=8,
    mini_batch_size=8,
    optimizer="adam",
    learning_rate=0.02,
    locked_dropout=0.0,
    word_dropout=0.0,
    seed=3,
)


@pytest.fixture(scope="module")
def tagger() -> BiLSTMCRFTagger:
    return BiLSTMCRFTagger(**TINY).fit(TRAIN, unlabelled=POOL)


def _flair_scores(tagger: BiLSTMCRFTagger, doc: Document):
    """Flair's own CRF score tensor (T, L, L) indexed [t, to, from] and its transition matrix, full tag set."""
    model = tagger.model_
    sentence = tagger._flair_sentence(tokenize(doc.text))
    with torch.no_grad():
        tensor, lengths = prepare_tensors(model, [sentence])
        features, _, transitions = crf_scores(model.forward(tensor, lengths))
    sentence.clear_embeddings()
    return features[0].double().numpy(), transitions.detach().double().numpy()


def _brute_force(tagger: BiLSTMCRFTagger, doc: Document) -> tuple[np.ndarray, float, tuple[int, ...]]:
    """Marginals over ``labels_``, log partition and best path by enumerating every path over ALL tags.

    Uses Flair's scoring as its ViterbiLoss does it: start score in column <START> of the first position,
    ``features[t, y_t, y_{t-1}]`` after that, and ``transitions[<STOP>, y_T]`` at the end.
    """
    features, transitions = _flair_scores(tagger, doc)
    dictionary = tagger.model_.label_dictionary
    start, stop = dictionary.get_idx_for_item(START_TAG), dictionary.get_idx_for_item(STOP_TAG)
    n_pos, n_tags = features.shape[0], features.shape[1]
    paths = np.array(list(itertools.product(range(n_tags), repeat=n_pos)))
    scores = features[0, paths[:, 0], start] + transitions[stop, paths[:, -1]]
    for t in range(1, n_pos):
        scores = scores + features[t, paths[:, t], paths[:, t - 1]]
    log_z = float(np.logaddexp.reduce(scores))
    weights = np.exp(scores - log_z)
    full = np.zeros((n_pos, n_tags))
    for t in range(n_pos):
        np.add.at(full[t], paths[:, t], weights)
    columns = [dictionary.get_idx_for_item(label) for label in tagger.labels_]
    return full[:, columns], log_z, tuple(paths[int(np.argmax(scores))])


def _double_copy(tagger: BiLSTMCRFTagger, seed: int | None = None) -> BiLSTMCRFTagger:
    """A float64 copy, so that exact comparisons are not blurred by float32 rounding of the scores.

    With a ``seed``, the CRF transitions between real tags (and from START / to STOP) are made random and
    asymmetric, so that reading the matrix the wrong way round cannot pass.
    """
    clone = copy.deepcopy(tagger)
    clone.model_.double()
    if seed is None:
        return clone
    dictionary = clone.model_.label_dictionary
    start, stop = dictionary.get_idx_for_item(START_TAG), dictionary.get_idx_for_item(STOP_TAG)
    real = [i for i in range(len(dictionary)) if i not in (start, stop)]
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        trans = clone.model_.crf.transitions
        block = torch.tensor(rng.normal(0.0, 3.0, size=(len(real), len(real))), dtype=trans.dtype)
        trans[np.ix_(real, real)] = block
        trans[real, start] = torch.tensor(rng.normal(0.0, 3.0, size=len(real)), dtype=trans.dtype)
        trans[stop, real] = torch.tensor(rng.normal(0.0, 3.0, size=len(real)), dtype=trans.dtype)
    return clone


THREE_TOKENS = Document(text="Paciente Ana Toledo")


def test_instance_bounds_group_sentences_and_cut_long_ones():
    sentences = [(0, 3), (3, 5), (5, 12), (12, 13), (13, 14)]
    assert instance_bounds(sentences, per_instance=2, max_tokens=100) == [(0, 5), (5, 13), (13, 14)]
    assert instance_bounds(sentences, per_instance=3, max_tokens=6) == [(0, 5), (5, 11), (11, 12), (12, 14)]
    assert instance_bounds([], per_instance=3, max_tokens=6) == []


def test_model_input_is_our_tokens_one_to_one(tagger):
    doc = Document(text="Tel. 612 345 678, correo ana.gil@hosp.es\n\nNHC 12345678X  70años.")
    tokens = tokenize(doc.text)
    assert "612 345 678" in [t.text for t in tokens]  # one token with spaces inside
    sentence = tagger._flair_sentence(tokens)
    assert [t.text for t in sentence] == [t.text for t in tokens]
    assert len(tagger.predict_tags([doc])[0]) == len(tokens)
    assert tagger.predict_marginals([doc])[0].shape == (len(tokens), len(tagger.labels_))


def test_labels_are_bio_with_o_first(tagger):
    assert isinstance(tagger, Tagger)
    assert tagger.labels_ == bio_labels(["NOMBRE", "FECHA", "LUGAR"])
    assert tagger.labels_[0] == "O"
    assert tagger.n_train_instances_ == 48  # two sentence groups per note: body, signature


def test_marginals_shape_and_rows_sum_to_one(tagger):
    docs = HELD_OUT + [Document(text=""), Document(text="   \n ")]
    marginals = tagger.predict_marginals(docs)
    assert len(marginals) == len(docs)
    for doc, marg in zip(docs, marginals):
        assert marg.shape == (len(tokenize(doc.text)), len(tagger.labels_))
        assert np.all(marg >= 0)
        np.testing.assert_allclose(marg.sum(axis=1), 1.0, atol=1e-9)
    assert tagger.predict([Document(text="")]) == [[]]


@pytest.mark.parametrize("seed", [None, 0, 1])
def test_marginals_equal_brute_force_enumeration(tagger, seed):
    model = _double_copy(tagger, seed)
    assert len(tokenize(THREE_TOKENS.text)) == 3
    expected, _, best = _brute_force(model, THREE_TOKENS)
    got = model.predict_marginals([THREE_TOKENS])[0]
    np.testing.assert_allclose(got, expected, atol=1e-10)
    # The exhaustive best path is what Flair's Viterbi decodes.
    dictionary = model.model_.label_dictionary
    best_tags = [dictionary.get_item_for_index(i) for i in best]
    assert model.predict([THREE_TOKENS])[0] == bio_to_spans(tokenize(THREE_TOKENS.text), best_tags)


def test_brute_force_reading_of_flair_crf_matches_flair_loss(tagger):
    """The enumeration's log partition minus the gold path score is Flair's own Viterbi loss."""
    doc = Document(text=THREE_TOKENS.text, spans=(Span(9, 12, "NOMBRE"), Span(13, 19, "LUGAR")))
    clone = _double_copy(tagger, 5)
    _, log_z, _ = _brute_force(clone, doc)
    features, transitions = _flair_scores(clone, doc)
    dictionary = clone.model_.label_dictionary
    gold = [dictionary.get_idx_for_item(t) for t in ("O", "B-NOMBRE", "B-LUGAR")]
    gold_score = (
        features[0, gold[0], dictionary.get_idx_for_item(START_TAG)]
        + features[1, gold[1], gold[0]]
        + features[2, gold[2], gold[1]]
        + transitions[dictionary.get_idx_for_item(STOP_TAG), gold[2]]
    )
    sentence = clone._labelled_instances(doc, tokenize(doc.text))[0]
    with torch.no_grad():
        loss, count = clone.model_.forward_loss([sentence])
    assert count == 3
    assert float(loss) == pytest.approx(log_z - gold_score, abs=1e-9)


def test_vectorised_crf_loss_equals_flair_viterbi_loss_and_gradients():
    from flair.data import Dictionary
    from flair.models.sequence_tagger_utils.viterbi import ViterbiLoss

    dictionary = Dictionary(add_unk=False)
    for tag in ("O", "B-X", "I-X", "B-Y", "I-Y", START_TAG, STOP_TAG):
        dictionary.add_item(tag)
    n_tags = len(dictionary)
    start, stop = dictionary.get_idx_for_item(START_TAG), dictionary.get_idx_for_item(STOP_TAG)
    gen = torch.Generator().manual_seed(0)
    lengths = torch.tensor([6, 4, 4, 1])  # sorted longest first, as Flair batches them
    emissions = torch.randn(4, 6, n_tags, generator=gen, dtype=torch.float64)
    transitions = torch.randn(n_tags, n_tags, generator=gen, dtype=torch.float64)
    transitions[start, :] = -10000.0
    transitions[:, stop] = -10000.0
    targets = torch.randint(0, 5, (int(lengths.sum()),), generator=gen)

    def loss_and_grads(loss_fn):
        e = emissions.clone().requires_grad_(True)
        tr = transitions.clone().requires_grad_(True)
        features = e.unsqueeze(-1).expand(4, 6, n_tags, n_tags) + tr.unsqueeze(0).unsqueeze(0)
        loss = loss_fn((features, lengths, tr), targets.clone())
        loss.backward()
        return float(loss), e.grad, tr.grad

    ours = loss_and_grads(lambda f, y: crf_negative_log_likelihood(*f, y, start, stop))
    flairs = loss_and_grads(ViterbiLoss(dictionary))
    assert ours[0] == pytest.approx(flairs[0], rel=1e-9)
    assert ours[0] > 0
    np.testing.assert_allclose(ours[1].numpy(), flairs[1].numpy(), atol=1e-9)
    np.testing.assert_allclose(ours[2].numpy(), flairs[2].numpy(), atol=1e-9)


def test_argmax_of_marginals_agrees_with_viterbi(tagger):
    pairs = tagger.predict_with_marginals(HELD_OUT)
    all_tags = tagger.predict_tags(HELD_OUT)
    agree = total = 0
    for doc, (spans, marg), tags in zip(HELD_OUT, pairs, all_tags):
        assert bio_to_spans(tokenize(doc.text), tags) == spans
        argmax = [tagger.labels_[i] for i in marg.argmax(axis=1)]
        agree += sum(a == b for a, b in zip(tags, argmax))
        total += len(tags)
    assert total > 150
    assert agree / total >= 0.95


def test_learns_the_synthetic_entities(tagger):
    gold = {(d.name, s.start, s.end, s.label) for d in HELD_OUT for s in d.spans}
    pred = {(d.name, s.start, s.end, s.label) for d, spans in zip(HELD_OUT, tagger.predict(HELD_OUT)) for s in spans}
    tp = len(gold & pred)
    assert len(gold) == 24
    assert tp / len(gold) >= 0.75
    assert tp / max(len(pred), 1) >= 0.75


def test_pickle_and_save_load_round_trip(tagger, tmp_path):
    expected = tagger.predict_marginals(HELD_OUT[:2])
    restored = pickle.loads(pickle.dumps(tagger))
    path = tmp_path / "tagger.bin"
    tagger.save(path, key=b"test key")
    loaded = BiLSTMCRFTagger.load(path, key=b"test key")
    for other in (restored, loaded):
        assert other.labels_ == tagger.labels_
        assert other.get_params() == tagger.get_params()
        for a, b in zip(expected, other.predict_marginals(HELD_OUT[:2])):
            np.testing.assert_allclose(a, b, atol=1e-12)
        assert other.predict(HELD_OUT[:2]) == tagger.predict(HELD_OUT[:2])


def test_same_seed_gives_the_same_model(tagger):
    again = BiLSTMCRFTagger(**TINY).fit(TRAIN, unlabelled=POOL)
    for a, b in zip(tagger.predict_marginals(HELD_OUT[:2]), again.predict_marginals(HELD_OUT[:2])):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_a_fit_uses_the_training_threads_and_prediction_one_thread_both_restored(monkeypatch):
    """One fit runs at a time in a process, on the threads a CRF's fit uses; the pool is scored in shards
    on as many processes, one thread each."""
    before = torch.get_num_threads()
    chosen = []
    set_threads = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: chosen.append(n) or set_threads(n))
    monkeypatch.setenv("DEIDLOOP_TRAINING_THREADS", "3")
    fitted = BiLSTMCRFTagger(**{**TINY, "max_epochs": 1}).fit(TRAIN[:4])
    assert chosen == [3, before] and torch.get_num_threads() == before
    fitted.predict_marginals(HELD_OUT[:1])
    assert chosen[2:] == [1, before]
    BiLSTMCRFTagger(**{**TINY, "max_epochs": 1, "fit_threads": 2}).fit(TRAIN[:4])
    assert chosen[4:] == [2, before] and torch.get_num_threads() == before


def test_unlabelled_pool_enters_the_word_vocabulary(tagger):
    word_embedding = tagger.model_.embeddings.embeddings[0]
    train_words = {local_embeddings.word_key(t.text) for d in TRAIN for t in tokenize(d.text)}
    pool_only = {local_embeddings.word_key(t.text) for d in POOL for t in tokenize(d.text)} - train_words
    assert {"apendicitis", "cuenca"} <= pool_only
    assert pool_only <= set(word_embedding.vocab)
    assert len(word_embedding.vocab) == len(train_words | pool_only)


def test_fit_without_spans_and_predict_before_fit_raise():
    with pytest.raises(ValueError, match="no labelled spans"):
        BiLSTMCRFTagger(**TINY).fit([Document(text="Sin datos.")])
    with pytest.raises(NotFittedError, match="not fitted"):
        BiLSTMCRFTagger().predict_marginals(HELD_OUT[:1])


def test_word_vectors_cover_every_word_key():
    sentences = [["Madrid", "28036", "hola"], ["MADRID", "adiós", "28041"]]
    vectors = local_embeddings.train_word_vectors(sentences, dim=8, epochs=1, min_count=2)
    assert set(vectors.index_to_key) == {"madrid", "00000", "hola", "adiós"}
    assert vectors.vector_size == 8
    flair_words = local_embeddings.word_embeddings(vectors)
    assert flair_words.embedding.weight.shape == (5, 8)  # four words and the zero vector for unknowns
    np.testing.assert_allclose(flair_words.embedding.weight[-1].numpy(), 0.0)
    assert local_embeddings.word_key("Hosp-2019") == "hosp-0000"


def test_char_dictionary_is_built_from_the_texts():
    dictionary = local_embeddings.char_dictionary(["ñu", "Ω"])
    assert set(dictionary.get_items()) == {"<unk>", "ñ", "u", "Ω"}
    assert dictionary.get_idx_for_item("z") == dictionary.get_idx_for_item("<unk>")


def test_batched_character_encoder_matches_one_word_at_a_time():
    from flair.data import Sentence

    torch.manual_seed(0)
    encoder = local_embeddings.character_embeddings(["Juan vive en Ávila"], char_dim=4, hidden_size=3)
    sentences = [Sentence(["Juan", "vive", "en", "Ávila"]), Sentence(["en", "Zaragoza", "Juan"])]
    encoder.embed(sentences)
    assert encoder.embedding_length == 6
    with torch.no_grad():
        for sentence in sentences:
            for token in sentence:
                ids = torch.tensor([[encoder.char_dictionary.get_idx_for_item(c) for c in token.text]])
                _, (hidden, _) = encoder.char_rnn(encoder.char_embedding(ids))
                expected = torch.cat([hidden[0, 0], hidden[1, 0]])
                torch.testing.assert_close(token.get_embedding(), expected, atol=1e-6, rtol=0)
    # "Z" was not in the dictionary's texts: it is read as <unk>, not an error.
    assert encoder.char_dictionary.get_idx_for_item("Z") == 0


def test_char_language_model_option_trains_locally_and_round_trips():
    small = dict(TINY, max_epochs=1, char_lm=True, char_lm_hidden_size=8, char_lm_epochs=1)
    tagger = BiLSTMCRFTagger(**small).fit(TRAIN[:8], unlabelled=POOL)
    names = [type(e).__name__ for e in tagger.model_.embeddings.embeddings]
    assert names == ["WordEmbeddings", "CharacterLSTMEmbeddings", "FlairEmbeddings", "FlairEmbeddings"]
    assert [e.lm.is_forward_lm for e in tagger.model_.embeddings.embeddings[2:]] == [True, False]
    marginals = tagger.predict_marginals(HELD_OUT[:2])
    restored = pickle.loads(pickle.dumps(tagger))
    for a, b in zip(marginals, restored.predict_marginals(HELD_OUT[:2])):
        np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-9)
        np.testing.assert_allclose(a, b, atol=1e-12)
