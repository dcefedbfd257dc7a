"""Flair internals that :mod:`learning.core.taggers.flair_tagger` and :mod:`learning.core.embeddings` rely on
(flair==0.15.1, the lock's pin).

Pinned by ``tests/unit/compat/test_flair.py``. What the tagger relies on, all of ``SequenceTagger`` built
with ``use_crf=True``:

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

What the embeddings rely on:

- ``_add_embeddings_internal(sentences)``, Flair's override hook: a ``TokenEmbeddings`` subclass (our
  ``CharacterLSTMEmbeddings``) defines it, and ``TokenEmbeddings.embed`` calls it with the list of sentences
  (one sentence is wrapped in a list) unless every token already holds an embedding under the subclass's
  ``name``. The hook has to stay defined on the subclass itself, so it is the one private name used outside
  this module;
- ``flair.embeddings.base.register_embeddings`` (:func:`register`) records a class under its name, so that
  ``save_embeddings`` writes that name as ``__cls__`` and ``flair.embeddings.base.load_embeddings`` (what
  ``SequenceTagger.load`` calls) rebuilds it with ``from_params`` plus the state dict;
- ``Embeddings.get_instance_parameters`` (:func:`instance_parameters`) picks out of an ``__init__``'s
  ``locals()`` the constructor's arguments and ``__class__``;
- ``WordEmbeddings(None, vocab=..., embedding_length=..., name=...)`` (:func:`word_embeddings_from_vectors`)
  builds a frozen, all-zero ``.embedding`` of ``len(vocab) + 1`` rows, the last one for unknown words, and
  looks a token up as written, then lower-cased, then lower-cased with every digit as ``#``, then with every
  digit as ``0``;
- ``TextCorpus(folder, ...)``, which ``LanguageModelTrainer`` trains on, reads every file of ``folder/train``
  (sorted by name) as one training split and ``folder/valid.txt`` / ``folder/test.txt`` as the validation and
  test text, one document per line (:func:`write_language_model_corpus`);
- ``LanguageModelTrainer.train(folder, ...)`` saves the model with the best validation loss so far to
  ``folder/best-lm.pt`` (:func:`best_language_model_path`), which ``LanguageModel.load_language_model`` reads.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import torch

__all__ = [
    "START_TAG",
    "STOP_TAG",
    "best_language_model_path",
    "captured_crf_emissions",
    "crf_scores",
    "crf_transitions_to_from",
    "instance_parameters",
    "model_state",
    "prepare_tensors",
    "register",
    "replace_crf_loss",
    "span_tag_dictionary",
    "viterbi_tags",
    "word_embeddings_from_vectors",
    "write_language_model_corpus",
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


def register(cls: type) -> type:
    """Class decorator: make a custom ``TokenEmbeddings`` subclass loadable by ``SequenceTagger.load``."""
    from flair.embeddings.base import register_embeddings

    return register_embeddings(cls)


def instance_parameters(locals_: dict[str, Any]) -> dict[str, Any]:
    """The constructor arguments (and ``__class__``) out of an embeddings ``__init__``'s ``locals()``, as
    Flair's own embeddings keep them in ``instance_parameters``. Call it from an ``__init__`` that uses
    ``super()``, so that ``locals()`` holds ``__class__``."""
    from flair.embeddings import TokenEmbeddings

    return TokenEmbeddings.get_instance_parameters(locals=locals_)


def word_embeddings_from_vectors(words: Sequence[str], vectors, *, name: str):
    """Frozen Flair ``WordEmbeddings`` named ``name`` mapping ``words[i]`` to row ``i`` of ``vectors``
    (a 2-D array, one row per word), built in memory; unknown words map to a zero vector."""
    from flair.embeddings import WordEmbeddings

    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise ValueError(f"need one vector per word: {len(words)} words, vectors of shape {vectors.shape}")
    vocab = {word: i for i, word in enumerate(words)}
    embeddings = WordEmbeddings(None, vocab=vocab, embedding_length=int(vectors.shape[1]), name=name)
    with torch.no_grad():
        weight = embeddings.embedding.weight
        weight[: len(vocab)] = torch.as_tensor(vectors, dtype=weight.dtype)
        weight[len(vocab) :] = 0.0
    return embeddings


def write_language_model_corpus(
    folder: str | Path, train_parts: Sequence[Sequence[str]], valid: Sequence[str], test: Sequence[str]
) -> Path:
    """Write a corpus for ``TextCorpus(folder, ...)``: one training split file per part of ``train_parts``,
    then the validation and test text; each a sequence of documents, written one per line (so a document
    must not contain a newline). Returns ``folder``."""
    folder = Path(folder)
    (folder / "train").mkdir(parents=True)
    for i, part in enumerate(train_parts, 1):
        (folder / "train" / f"train_split_{i}").write_text("\n".join(part) + "\n", encoding="utf-8")
    (folder / "valid.txt").write_text("\n".join(valid) + "\n", encoding="utf-8")
    (folder / "test.txt").write_text("\n".join(test) + "\n", encoding="utf-8")
    return folder


def best_language_model_path(folder: str | Path) -> Path:
    """Where ``LanguageModelTrainer.train(folder, ...)`` saves the model with the best validation loss
    (absent when no epoch improved on the trainer's starting loss)."""
    return Path(folder) / "best-lm.pt"
