"""Embeddings trained on the project's own text, for the neural tagger.

Clinical text stays inside the institution and the machines reach no model hub, so every embedding the
BiLSTM-CRF uses is learned here from the labelled documents and the unlabelled pool:

* word vectors with gensim (FastText by default: its character n-grams give rare words, misspellings and
  identifiers a useful vector even when they occur once),
* the character dictionary for the character-level word encoder (Lample et al.'s character BiLSTM, here
  run once per batch over all distinct words instead of once per sentence as Flair's
  ``CharacterEmbeddings`` does, which made it the slowest part of training on CPU),
* optionally a small contextual character language model (forward or backward) with Flair's trainer.

Words are keyed by :func:`word_key` (lower case, every digit replaced by ``0``); Flair's ``WordEmbeddings``
falls back to exactly this form when a word is not in its vocabulary, so "Madrid", "MADRID" and "madrid"
share a vector and so do "28036" and "28041" — case and digits stay visible to the character encoder.
"""
from __future__ import annotations

import contextlib
import logging
import re
import tempfile
import warnings
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import flair
import numpy as np
import torch
from flair.data import Dictionary, Sentence
from flair.embeddings import FlairEmbeddings, TokenEmbeddings
from flair.models import LanguageModel
from flair.trainers import LanguageModelTrainer, TextCorpus

from learning.core._compat import flair as flair_compat

__all__ = [
    "quiet_flair",
    "word_key",
    "train_word_vectors",
    "word_embeddings",
    "char_dictionary",
    "CharacterLSTMEmbeddings",
    "character_embeddings",
    "train_char_language_model",
    "char_lm_embeddings",
]

_DIGIT = re.compile(r"\d")


@contextlib.contextmanager
def quiet_flair(verbose: bool = False) -> Iterator[None]:
    """Hold Flair's logger at WARNING for the duration (unless ``verbose``); its INFO output is per batch.

    Flair's trainers also construct a deprecated ``torch.cuda.amp.GradScaler`` on every call; that
    FutureWarning says nothing about our use and is silenced here too.
    """
    logger = logging.getLogger("flair")
    previous = logger.level
    if not verbose:
        logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*GradScaler", category=FutureWarning)
            yield
    finally:
        logger.setLevel(previous)


def word_key(word: str) -> str:
    """The form under which a word's vector is stored: lower case with every digit as ``0``."""
    return _DIGIT.sub("0", word.lower())


def train_word_vectors(
    sentences: Iterable[Sequence[str]],
    *,
    dim: int = 64,
    method: str = "fasttext",
    epochs: int = 10,
    window: int = 5,
    min_count: int = 1,
    seed: int = 0,
):
    """Word vectors (gensim ``KeyedVectors``) for every distinct :func:`word_key` of ``sentences``.

    ``sentences`` are lists of token strings.  With ``method="fasttext"`` the model is trained on words seen
    at least ``min_count`` times and the remaining words get the vector composed from their character
    n-grams, so the vocabulary still covers every word of the corpus; with ``"word2vec"`` the vocabulary is
    what the model kept.  Training uses one worker thread so the vectors are reproducible for a seed.
    """
    from gensim.models import FastText, KeyedVectors, Word2Vec

    corpus = [[word_key(w) for w in sentence] for sentence in sentences]
    corpus = [s for s in corpus if s]
    if not corpus:
        raise ValueError("cannot train word vectors on an empty corpus")
    common = dict(
        vector_size=dim, window=window, min_count=min_count, epochs=epochs, seed=seed, workers=1, sg=1
    )
    if method == "fasttext":
        model = FastText(corpus, min_n=2, max_n=5, **common)
    elif method == "word2vec":
        model = Word2Vec(corpus, **common)
        return model.wv
    else:
        raise ValueError(f"unknown word vector method {method!r}; use 'fasttext' or 'word2vec'")

    words = sorted({w for s in corpus for w in s})
    vectors = KeyedVectors(vector_size=dim)
    vectors.add_vectors(words, np.stack([model.wv[w] for w in words]).astype(np.float32))
    return vectors


def word_embeddings(vectors, *, name: str = "local-word-vectors"):
    """Flair ``WordEmbeddings`` holding ``vectors`` (gensim ``KeyedVectors``), built in memory.

    Built from a vocabulary rather than a file path because ``WordEmbeddings(path)`` treats short strings
    ("en", "glove", ...) as names to download.  Unknown words map to a zero vector.
    """
    return flair_compat.word_embeddings_from_vectors(vectors.index_to_key, vectors.vectors, name=name)


def char_dictionary(texts: Iterable[str]) -> Dictionary:
    """A Flair character ``Dictionary`` with every character of ``texts`` (unseen characters map to <unk>)."""
    dictionary = Dictionary(add_unk=True)
    for char in sorted(set().union(*map(set, texts))):
        dictionary.add_item(char)
    return dictionary


@flair_compat.register
class CharacterLSTMEmbeddings(TokenEmbeddings):
    """A word's vector from a BiLSTM over its characters: the last forward and last backward states.

    The architecture of Flair's ``CharacterEmbeddings`` (Lample et al., 2016), computed in one packed LSTM
    call over the distinct words of a whole batch of sentences.  Index 0 of the character dictionary
    (``<unk>``) also stands for characters not seen when the dictionary was built.
    """

    def __init__(
        self,
        char_dictionary: Dictionary,
        char_embedding_dim: int = 25,
        hidden_size_char: int = 25,
        name: str = "local-chars",
    ) -> None:
        super().__init__()
        self.name = name
        self.static_embeddings = False
        self.instance_parameters = flair_compat.instance_parameters(locals())
        self.char_dictionary = char_dictionary
        self.char_embedding_dim = char_embedding_dim
        self.hidden_size_char = hidden_size_char
        self.char_embedding = torch.nn.Embedding(len(char_dictionary), char_embedding_dim)
        self.char_rnn = torch.nn.LSTM(char_embedding_dim, hidden_size_char, bidirectional=True, batch_first=True)
        self.to(flair.device)
        self.eval()

    @property
    def embedding_length(self) -> int:
        return 2 * self.hidden_size_char

    # Flair's hook, called by ``TokenEmbeddings.embed`` (see learning.core._compat.flair).
    def _add_embeddings_internal(self, sentences: list[Sentence]) -> list[Sentence]:
        device = self.char_embedding.weight.device
        position: dict[str, int] = {}
        for sentence in sentences:
            for token in sentence.tokens:
                position.setdefault(token.text, len(position))
        if not position:
            return sentences
        words = list(position)
        lengths = torch.tensor([len(w) for w in words], dtype=torch.long)
        ids = torch.zeros((len(words), int(lengths.max())), dtype=torch.long)
        lookup = self.char_dictionary.get_idx_for_item
        for i, word in enumerate(words):
            ids[i, : len(word)] = torch.tensor([lookup(c) for c in word], dtype=torch.long)
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            self.char_embedding(ids.to(device)), lengths, batch_first=True, enforce_sorted=False
        )
        _, (hidden, _) = self.char_rnn(packed)
        vectors = torch.cat([hidden[0], hidden[1]], dim=1)
        order = torch.tensor(
            [position[token.text] for sentence in sentences for token in sentence.tokens], device=device
        )
        per_token = vectors[order].unbind(0)
        k = 0
        for sentence in sentences:
            for token in sentence.tokens:
                token.set_embedding(self.name, per_token[k])
                k += 1
        return sentences

    def to_params(self) -> dict:
        return {
            "char_dictionary": self.char_dictionary,
            "char_embedding_dim": self.char_embedding_dim,
            "hidden_size_char": self.hidden_size_char,
            "name": self.name,
        }

    @classmethod
    def from_params(cls, params: dict) -> "CharacterLSTMEmbeddings":
        return cls(**params)


def character_embeddings(
    texts: Iterable[str], *, char_dim: int = 25, hidden_size: int = 25
) -> CharacterLSTMEmbeddings:
    """The character BiLSTM word encoder over a dictionary built from ``texts`` (no download)."""
    return CharacterLSTMEmbeddings(char_dictionary(texts), char_embedding_dim=char_dim, hidden_size_char=hidden_size)


def train_char_language_model(
    texts: Sequence[str],
    *,
    forward: bool = True,
    hidden_size: int = 128,
    embedding_size: int = 32,
    sequence_length: int = 100,
    mini_batch_size: int = 16,
    max_epochs: int = 2,
    learning_rate: float = 20.0,
    valid_fraction: float = 0.05,
    seed: int = 0,
    verbose: bool = False,
) -> LanguageModel:
    """A small character language model (Flair ``LanguageModel``) trained on ``texts``.

    Flair's trainer reads its corpus from disk (the layout :mod:`learning.core._compat.flair` writes) and
    writes checkpoints, so both live in a temporary directory that is removed afterwards.  Returns the model
    with the lowest validation loss.
    """
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise ValueError("cannot train a character language model on an empty corpus")
    flair.set_seed(seed)
    # One document per line: the trainer splits its files on the document delimiter.
    lines = [" ".join(t.split()) for t in texts]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lines))
    n_valid = max(1, int(round(valid_fraction * len(lines))))
    valid = [lines[i] for i in order[:n_valid]]
    train = [lines[i] for i in order[n_valid:]] or valid
    # The trainer refuses validation text shorter than two batches of characters.
    while sum(len(v) + 1 for v in valid) < 2 * mini_batch_size * (sequence_length + 1):
        valid = valid + valid

    dictionary = char_dictionary(lines + ["\n"])
    model = LanguageModel(
        dictionary, is_forward_lm=forward, hidden_size=hidden_size, nlayers=1, embedding_size=embedding_size
    )
    with tempfile.TemporaryDirectory(prefix="char-lm-") as tmp, quiet_flair(verbose):
        root = Path(tmp)
        folder = flair_compat.write_language_model_corpus(root / "corpus", [train], valid, valid)
        corpus = TextCorpus(folder, dictionary, forward=forward, character_level=True)
        LanguageModelTrainer(model, corpus).train(
            root / "out",
            sequence_length=sequence_length,
            mini_batch_size=mini_batch_size,
            max_epochs=max_epochs,
            learning_rate=learning_rate,
            num_workers=0,
        )
        best = flair_compat.best_language_model_path(root / "out")
        if best.exists():
            model = LanguageModel.load_language_model(best, has_decoder=False)
    model.eval()
    return model


def char_lm_embeddings(model, *, name: str | None = None):
    """Flair contextual string embeddings from a locally trained character language model."""
    direction = "forward" if model.is_forward_lm else "backward"
    return FlairEmbeddings(model, name=name or f"local-char-lm-{direction}")
