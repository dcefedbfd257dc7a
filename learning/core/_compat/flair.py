"""Flair internals that :mod:`learning.core.taggers.flair_tagger` relies on (flair==0.15.1, the lock's pin).

Pinned by ``tests/unit/compat/test_flair.py``. What is relied on, all of ``SequenceTagger`` built with
``use_crf=True``:

- ``SequenceTagger._prepare_tensors(sentences)`` embeds the sentences and returns
  ``(tensor (B, T, E), lengths)``, padded with zeros to the longest sentence (lengths must be decreasing:
  ``forward`` packs the batch for its BiLSTM);
- ``SequenceTagger.forward(tensor, lengths)`` returns the CRF score tuple ``(features, lengths,
  transitions)``: ``features`` (B, T, L, L) indexed ``[b, t, to, from]`` equals the emissions (B, T, L)
  plus ``transitions``, the CRF layer's (L, L) parameter ``model.crf.transitions`` indexed ``[to, from]``;
- the CRF layer ``model.crf`` is called once per forward pass, on the emissions (its first input);
- its tag dictionary holds the tags ``<START>`` and ``<STOP>``: a fresh model's row ``<START>`` (into
  START) and column ``<STOP>`` (out of STOP) are -10000;
- ``model.loss_function`` is called by ``forward_loss`` as ``loss_function(score tuple, targets)``,
  ``targets`` the gold tag ids of all sentences concatenated in batch order (longest sentence first);
- ``model.viterbi_decoder.decode(scores, False, sentences)`` returns ``(tags, _)``, ``tags`` per sentence
  a list of ``(tag, confidence)``;
- a tag dictionary whose ``span_labels`` attribute is true is read as span types, which the tagger expands
  to BIO (or BIOES) tags;
- ``model._get_state_dict()`` is the picklable state that ``SequenceTagger.load`` accepts back.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import torch

__all__ = [
    "START_TAG",
    "STOP_TAG",
    "captured_crf_emissions",
    "crf_scores",
    "crf_transitions_to_from",
    "model_state",
    "prepare_tensors",
    "replace_crf_loss",
    "span_tag_dictionary",
    "viterbi_tags",
]

# The names of the CRF's start and stop tags in Flair's tag dictionary
# (``flair.models.sequence_tagger_utils.crf.START_TAG`` / ``STOP_TAG``).
START_TAG, STOP_TAG = "<START>", "<STOP>"


def prepare_tensors(model, sentences: Sequence[Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """Embed ``sentences`` and return ``(tensor (B, T, E), lengths)``, the input of ``model.forward``."""
    return model._prepare_tensors(sentences)


def crf_scores(scores: tuple) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(features (B, T, L, L) indexed [b, t, to, from], lengths, transitions (L, L) indexed [to, from])``
    out of the score tuple that ``SequenceTagger.forward`` returns and its loss function receives."""
    features, lengths, transitions = scores
    return features, lengths, transitions


def crf_transitions_to_from(model) -> np.ndarray:
    """The CRF's transition scores as a float64 array indexed ``[to, from]``, over the whole tag dictionary
    (``<START>`` and ``<STOP>`` included)."""
    return model.crf.transitions.detach().cpu().double().numpy()


def replace_crf_loss(model, loss: torch.nn.Module) -> None:
    """Train ``model`` on ``loss(score tuple, targets)`` instead of Flair's ``ViterbiLoss``."""
    model.loss_function = loss


@contextlib.contextmanager
def captured_crf_emissions(model) -> Iterator[Callable[[], torch.Tensor]]:
    """While inside, each forward pass of ``model`` keeps the emissions (B, T, L) its CRF layer received;
    the context yields a function returning the last ones."""
    captured: dict[str, torch.Tensor] = {}
    handle = model.crf.register_forward_hook(lambda _m, inputs, _o: captured.__setitem__("e", inputs[0]))
    try:
        yield lambda: captured["e"]
    finally:
        handle.remove()


def viterbi_tags(model, scores: tuple, sentences: Sequence[Any]) -> list[list[str]]:
    """The Viterbi tag sequence of each sentence of the batch that ``scores`` came from."""
    tags, _ = model.viterbi_decoder.decode(scores, False, sentences)
    return [[tag for tag, _ in row] for row in tags]


def span_tag_dictionary(span_types: Iterable[str]):
    """A Flair tag dictionary of span types (no <unk>), which ``SequenceTagger`` expands to BIO tags."""
    from flair.data import Dictionary

    dictionary = Dictionary(add_unk=False)
    for label in span_types:
        dictionary.add_item(label)
    dictionary.span_labels = True
    return dictionary


def model_state(model) -> dict[str, Any]:
    """The model's state as Flair saves it; ``SequenceTagger.load(state)`` rebuilds the model."""
    return model._get_state_dict()
