"""flair==0.15.1: the SequenceTagger internals that learning.core._compat.flair wraps (see its docstring)."""
from __future__ import annotations

import io
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
flair = pytest.importorskip("flair")

from flair.data import Sentence  # noqa: E402
from flair.models import SequenceTagger  # noqa: E402

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
