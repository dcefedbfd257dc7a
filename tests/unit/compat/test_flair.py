"""flair==0.15.1: the SequenceTagger and embeddings internals that learning.core._compat.flair wraps (see its
docstring)."""
from __future__ import annotations

import io
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
flair = pytest.importorskip("flair")

from flair.data import Sentence  # noqa: E402
from flair.embeddings import TokenEmbeddings  # noqa: E402
from flair.models import LanguageModel, SequenceTagger  # noqa: E402
from flair.trainers import LanguageModelTrainer, TextCorpus  # noqa: E402

from learning.core import embeddings as local_embeddings  # noqa: E402  (registers CharacterLSTMEmbeddings)
from learning.core._compat import flair as flair_compat  # noqa: E402

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "<START>", "<STOP>"]
START, STOP = TAGS.index("<START>"), TAGS.index("<STOP>")


@pytest.fixture(scope="module")
def model():
    """A tiny BiLSTM-CRF on a character encoder built here: nothing is downloaded."""
    flair.set_seed(0)
    encoder = local_embeddings.character_embeddings(["Ana vive en Toledo", "Luis"], char_dim=4, hidden_size=3)
    tagger = SequenceTagger(
        embeddings=encoder,
        tag_dictionary=flair_compat.span_tag_dictionary(["PER", "LOC"]),
        tag_type="phi",
        tag_format="BIO",
        use_crf=True,
        hidden_size=5,
        allow_unk_predictions=False,
    )
    tagger.eval()
    return tagger


def _batch():
    return [Sentence(["Ana", "vive", "en", "Toledo"]), Sentence(["Luis"])]


def test_start_and_stop_tags_are_flairs():
    from flair.models.sequence_tagger_utils.crf import START_TAG, STOP_TAG

    assert (flair_compat.START_TAG, flair_compat.STOP_TAG) == (START_TAG, STOP_TAG) == ("<START>", "<STOP>")


def test_span_types_become_bio_tags_then_start_and_stop(model):
    assert model.label_dictionary.get_items() == TAGS


def test_prepare_tensors_embeds_and_pads_the_batch(model):
    batch = _batch()
    tensor, lengths = flair_compat.prepare_tensors(model, batch)
    assert tensor.shape == (2, 4, 6)  # (sentences, longest sentence, 2 x 3 character-LSTM units)
    assert lengths.dtype == torch.int64 and lengths.tolist() == [4, 1]
    assert torch.equal(tensor[0, 3], batch[0][3].get_embedding())
    assert torch.equal(tensor[1, 0], batch[1][0].get_embedding())
    assert torch.count_nonzero(tensor[1, 1:]) == 0


def test_forward_returns_crf_scores_indexed_to_from_and_the_crf_sees_the_emissions(model):
    tensor, lengths = flair_compat.prepare_tensors(model, _batch())
    with flair_compat.captured_crf_emissions(model) as last_emissions, torch.no_grad():
        scores = model.forward(tensor, lengths)
        emissions = last_emissions()
    features, score_lengths, transitions = flair_compat.crf_scores(scores)
    assert emissions.shape == (2, 4, len(TAGS))
    assert features.shape == (2, 4, len(TAGS), len(TAGS))
    assert score_lengths is lengths
    assert transitions is model.crf.transitions
    # features[b, t, to, from] = emission[b, t, to] + transitions[to, from]
    assert torch.equal(features, emissions.unsqueeze(-1) + transitions.unsqueeze(0).unsqueeze(0))
    # Leaving the context removes the hook: a later forward pass is not captured.
    with torch.no_grad():
        model.forward(*flair_compat.prepare_tensors(model, [Sentence(["Luis"])]))
    assert last_emissions() is emissions


def test_transitions_are_float64_to_from_with_start_row_and_stop_column_impossible(model):
    trans = flair_compat.crf_transitions_to_from(model)
    assert trans.dtype == np.float64 and trans.shape == (len(TAGS), len(TAGS))
    np.testing.assert_array_equal(trans, model.crf.transitions.detach().double().numpy())
    assert np.all(trans[START, :] == -10000.0)  # nothing goes into <START>
    assert np.all(trans[:, STOP] == -10000.0)  # nothing leaves <STOP>
    real = [i for i in range(len(TAGS)) if i not in (START, STOP)]
    assert np.all(trans[np.ix_(real, real)] > -100.0)
    assert np.all(trans[real, START] > -100.0) and np.all(trans[STOP, real] > -100.0)


def test_viterbi_tags_are_the_best_path_over_all_tags(model):
    sentence = Sentence(["Ana", "vive", "Toledo"])
    tensor, lengths = flair_compat.prepare_tensors(model, [sentence])
    with torch.no_grad():
        scores = model.forward(tensor, lengths)
    features = scores[0][0].double().numpy()
    trans = flair_compat.crf_transitions_to_from(model)
    best = max(
        itertools.product(range(len(TAGS)), repeat=3),
        key=lambda p: features[0, p[0], START] + features[1, p[1], p[0]] + features[2, p[2], p[1]] + trans[STOP, p[2]],
    )
    assert flair_compat.viterbi_tags(model, scores, [sentence]) == [[TAGS[i] for i in best]]


class _RecordingLoss(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = []

    def forward(self, scores, targets):
        self.calls.append((flair_compat.crf_scores(scores), targets))
        return torch.tensor(2.5)


def test_replaced_loss_gets_the_score_tuple_and_gold_ids_longest_sentence_first(model):
    short, long = Sentence(["Luis"]), Sentence(["Ana", "vive", "en", "Toledo"])
    short[0:1].add_label("phi", "PER")
    long[0:1].add_label("phi", "PER")
    long[3:4].add_label("phi", "LOC")
    original = model.loss_function
    recorder = _RecordingLoss()
    flair_compat.replace_crf_loss(model, recorder)
    try:
        with torch.no_grad():
            loss, count = model.forward_loss([short, long])
    finally:
        model.loss_function = original
    assert (float(loss), count) == (2.5, 5)
    [((features, lengths, transitions), targets)] = recorder.calls
    assert features.shape == (2, 4, len(TAGS), len(TAGS))
    assert lengths.tolist() == [4, 1]
    assert transitions is model.crf.transitions
    assert targets.tolist() == [TAGS.index(t) for t in ("B-PER", "O", "O", "B-LOC", "B-PER")]


def test_model_state_round_trips_through_sequence_tagger_load(model):
    buffer = io.BytesIO()
    torch.save(flair_compat.model_state(model), buffer, pickle_protocol=4)
    loaded = SequenceTagger.load(torch.load(io.BytesIO(buffer.getvalue()), map_location="cpu", weights_only=False))
    loaded.eval()
    assert loaded.label_dictionary.get_items() == TAGS
    np.testing.assert_array_equal(
        flair_compat.crf_transitions_to_from(loaded), flair_compat.crf_transitions_to_from(model)
    )
    with torch.no_grad():
        ours = model.forward(*flair_compat.prepare_tensors(model, _batch()))[0]
        theirs = loaded.forward(*flair_compat.prepare_tensors(loaded, _batch()))[0]
    assert torch.equal(ours, theirs)


# --- embeddings -----------------------------------------------------------------------------------------


@flair_compat.register
class _PinEmbeddings(TokenEmbeddings):
    """A tiny custom token embedding, built the way ``CharacterLSTMEmbeddings`` is: it records each call of
    Flair's ``_add_embeddings_internal`` hook and gives token ``i`` of a sentence ``scale * [i, len(text)]``."""

    def __init__(self, name: str = "pin") -> None:
        super().__init__()
        self.name = name
        self.static_embeddings = True
        self.instance_parameters = flair_compat.instance_parameters(locals())
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.calls: list[list[Sentence]] = []

    @property
    def embedding_length(self) -> int:
        return 2

    def _add_embeddings_internal(self, sentences):
        self.calls.append(sentences)
        for sentence in sentences:
            for i, token in enumerate(sentence.tokens):
                token.set_embedding(self.name, self.scale * torch.tensor([float(i), float(len(token.text))]))
        return sentences

    def to_params(self) -> dict:
        return {"name": self.name}

    @classmethod
    def from_params(cls, params: dict) -> "_PinEmbeddings":
        return cls(**params)


def test_embed_calls_the_subclass_hook_with_the_list_of_sentences_until_all_are_embedded():
    embeddings = _PinEmbeddings()
    first, second = Sentence(["Ana", "vive"]), Sentence(["Luis"])
    assert embeddings.embed([first, second]) == [first, second]
    [call] = embeddings.calls
    assert len(call) == 2 and call[0] is first and call[1] is second
    assert torch.equal(first[1].get_embedding(), torch.tensor([1.0, 4.0]))
    embeddings.embed([first, second])  # every token already holds an embedding under the name: no call
    assert len(embeddings.calls) == 1
    third = Sentence(["Toledo"])
    embeddings.embed(third)  # one sentence is wrapped in a list
    assert len(embeddings.calls) == 2 and embeddings.calls[1] == [third] and embeddings.calls[1][0] is third
    # The repository's own subclass defines the hook itself.
    assert "_add_embeddings_internal" in vars(local_embeddings.CharacterLSTMEmbeddings)


def test_instance_parameters_are_the_constructor_arguments_and_the_class():
    assert _PinEmbeddings(name="p").instance_parameters == {"name": "p", "__class__": _PinEmbeddings}


def test_registered_embeddings_round_trip_by_name_as_sequence_tagger_saves_them():
    from flair.embeddings.base import load_embeddings  # what SequenceTagger.load calls

    embeddings = _PinEmbeddings(name="p")
    with torch.no_grad():
        embeddings.scale.fill_(3.0)
    params = embeddings.save_embeddings(use_state_dict=False)  # as SequenceTagger._get_state_dict does
    assert params == {"name": "p", "__cls__": "_PinEmbeddings"}
    fresh = load_embeddings(dict(params))
    assert type(fresh) is _PinEmbeddings and fresh.name == "p" and float(fresh.scale.detach()) == 1.0
    with_state = load_embeddings(embeddings.save_embeddings())
    assert type(with_state) is _PinEmbeddings and float(with_state.scale.detach()) == 3.0
    assert local_embeddings.CharacterLSTMEmbeddings.embeddings_name == "CharacterLSTMEmbeddings"


def test_word_embeddings_from_vectors_look_words_up_as_flair_does():
    words = ["madrid", "0a", "#####"]
    vectors = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    embeddings = flair_compat.word_embeddings_from_vectors(words, vectors, name="pin-words")
    assert (embeddings.name, embeddings.embedding_length, embeddings.static_embeddings) == ("pin-words", 2, True)
    assert not any(p.requires_grad for p in embeddings.parameters())
    sentence = Sentence(["Madrid", "MADRID", "2A", "12345", "zzz"])
    embeddings.embed(sentence)
    got = torch.stack([token.get_embedding() for token in sentence])
    assert got.dtype == torch.float32
    # as written / lower case, then digits as "0" (after digits as "#"), digits as "#", unknown: zeros
    expected = [[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [0.0, 0.0]]
    assert got.tolist() == expected

    empty = flair_compat.word_embeddings_from_vectors([], np.zeros((0, 3), dtype=np.float32), name="none")
    word = Sentence(["Toledo"])
    empty.embed(word)
    assert empty.embedding_length == 3 and word[0].get_embedding().tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        flair_compat.word_embeddings_from_vectors(["a", "b"], np.zeros((1, 2)), name="bad")


def test_language_model_corpus_is_laid_out_as_text_corpus_reads_it(tmp_path):
    parts = [["Ana vive en Toledo"], ["Luis", "Marta come"]]
    valid, test = ["valid uno"], ["test uno", "test dos"]
    folder = flair_compat.write_language_model_corpus(tmp_path / "corpus", parts, valid, test)
    assert folder == tmp_path / "corpus"
    dictionary = local_embeddings.char_dictionary([line for part in parts for line in part] + valid + test + ["\n"])

    def decode(ids) -> str:
        return "".join(dictionary.get_item_for_index(i) for i in ids.tolist())

    corpus = TextCorpus(folder, dictionary, forward=True, character_level=True, random_case_flip=False)
    assert len(corpus.train) == 2  # one training split per part, in order
    # Training splits are shuffled by document.
    assert [sorted(decode(corpus.train[i]).split("\n")[:-1]) for i in range(2)] == [sorted(p) for p in parts]
    assert decode(corpus.valid) == "valid uno\n"
    assert decode(corpus.test) == "test uno\ntest dos\n"
    backward = TextCorpus(folder, dictionary, forward=False, character_level=True, random_case_flip=False)
    assert decode(backward.valid) == "\nonu dilav"


def test_language_model_trainer_saves_its_best_model_at_the_compat_path(tmp_path):
    flair.set_seed(0)
    lines = ["ana vive en toledo y luis en madrid"] * 8
    dictionary = local_embeddings.char_dictionary(lines + ["\n"])
    folder = flair_compat.write_language_model_corpus(tmp_path / "corpus", [lines], lines, lines)
    model = LanguageModel(dictionary, is_forward_lm=False, hidden_size=8, nlayers=1, embedding_size=4)
    out = tmp_path / "out"
    with local_embeddings.quiet_flair():
        LanguageModelTrainer(model, TextCorpus(folder, dictionary, forward=False, character_level=True)).train(
            out, sequence_length=10, mini_batch_size=2, max_epochs=1, num_workers=0
        )
    best = flair_compat.best_language_model_path(out)
    assert best == out / "best-lm.pt" and best.exists()
    loaded = LanguageModel.load_language_model(best, has_decoder=False)
    assert (loaded.is_forward_lm, loaded.hidden_size) == (False, 8)
    assert loaded.dictionary.get_items() == dictionary.get_items()
