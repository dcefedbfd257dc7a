"""BiLSTM-CRF tagger on Flair's ``SequenceTagger``, with embeddings trained on the project's own text.

Documents are tokenised with :func:`corpus.text.tokenize` (the same tokens as every other tagger)
and cut into instances of a few consecutive sentences, so the BiLSTM sees context beyond one sentence.
Flair sentences are built from those token strings, never re-tokenised, so predictions map back to our
tokens one to one.

Marginals come from forward-backward over the CRF, not from Flair's "probabilities" (with a CRF those are
softmaxed Viterbi scores).  Flair's CRF scores a tag path y_1..y_T of a sentence as::

    transitions[y_1, START] + sum_t emission[t, y_t] + sum_t transitions[y_{t+1}, y_t] + transitions[STOP, y_T]

(its transition matrix is indexed ``[to, from]``; see ``flair/models/sequence_tagger_utils``).  The real
tags are taken out of Flair's tag dictionary (which also holds <START> and <STOP>, whose impossible
transitions start at -10000 and so carry no probability), reordered to ``labels_``, and handed to
:func:`learning.core.marginals.forward_backward_batch` with ``transition = transitions.T``,
``start = transitions[:, START]`` and ``end = transitions[STOP, :]``.

Training minimises the same CRF negative log-likelihood as Flair's ``ViterbiLoss``, computed by
:func:`crf_negative_log_likelihood` (identical value and gradients; a training step on CPU took about ten
times longer with Flair's version, measured on MEDDOCAN batches).
"""
from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from corpus.bio import bio_labels, bio_to_spans, spans_to_bio
from learning.core._compat import flair as flair_compat
from learning.core.marginals import forward_backward_batch
from learning.core.params import Param
from learning.core.taggers.base import BaseTagger, training_threads
from corpus.text import Token, sentence_bounds, tokenize
from corpus.types import Document, Span

__all__ = ["BiLSTMCRFTagger", "crf_negative_log_likelihood", "instance_bounds"]

_TAG_TYPE = "phi"
_START, _STOP = flair_compat.START_TAG, flair_compat.STOP_TAG


def instance_bounds(
    sentences: Sequence[tuple[int, int]], per_instance: int, max_tokens: int
) -> list[tuple[int, int]]:
    """Token ranges of model instances: up to ``per_instance`` consecutive sentences, at most ``max_tokens``.

    Sentences are grouped greedily in order; a single sentence longer than ``max_tokens`` is cut into
    pieces of ``max_tokens``.  The ranges cover the sentences' tokens in order, without overlap.
    """
    if per_instance < 1 or max_tokens < 1:
        raise ValueError("per_instance and max_tokens must be at least 1")
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(sentences):
        begin, end = sentences[i]
        k = 1
        while k < per_instance and i + k < len(sentences) and sentences[i + k][1] - begin <= max_tokens:
            end = sentences[i + k][1]
            k += 1
        out.extend((a, min(a + max_tokens, end)) for a in range(begin, end, max_tokens))
        i += k
    return out


@contextlib.contextmanager
def _torch_threads(n_threads: int | None) -> Iterator[None]:
    previous = torch.get_num_threads()
    if n_threads:
        torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def crf_negative_log_likelihood(
    features, lengths, transitions, targets, start_index: int, stop_index: int
):
    """Summed negative log-likelihood of gold tag paths under Flair's CRF; the value of Flair's ViterbiLoss.

    ``features`` is the CRF's score tensor (B, T, L, L) indexed ``[b, t, to, from]``, ``transitions`` the
    (L, L) matrix indexed ``[to, from]``, ``targets`` the gold tag ids of all sentences concatenated (in
    batch order) and ``lengths`` the sentence lengths.  Flair's own loss slices the 4-d score tensor at every
    time step, and on CPU the backward passes of those slices (each allocating a zero tensor the size of the
    whole batch) took most of the training time; here the time axis is unbound once and finished sequences
    are carried along with a mask, which gives the same value and gradients.
    """
    batch_size, n_steps, n_tags, _ = features.shape
    lengths = torch.as_tensor(lengths, dtype=torch.long, device=features.device)
    steps = features.unbind(1)

    # Log partition function over all tag paths (Flair's recursion, all tags included).
    alpha = steps[0][:, :, start_index]
    for t in range(1, n_steps):
        step = torch.logsumexp(steps[t] + alpha.unsqueeze(1), dim=2)
        alpha = torch.where((lengths > t).unsqueeze(1), step, alpha)
    log_z = torch.logsumexp(alpha + transitions[stop_index].unsqueeze(0), dim=1)

    # Score of each gold path: features[b, t, y_t, y_{t-1}] with y_{-1} = <START>, then y_last -> <STOP>.
    gold = torch.full((batch_size, n_steps), start_index, dtype=torch.long, device=features.device)
    mask = torch.arange(n_steps, device=features.device).unsqueeze(0) < lengths.unsqueeze(1)
    gold[mask] = torch.as_tensor(targets, dtype=torch.long, device=features.device)
    previous = torch.cat([torch.full_like(gold[:, :1], start_index), gold[:, :-1]], dim=1)
    flat = features.reshape(batch_size, n_steps, n_tags * n_tags)
    picked = flat.gather(2, (gold * n_tags + previous).unsqueeze(2)).squeeze(2)
    last = gold.gather(1, (lengths - 1).unsqueeze(1)).squeeze(1)
    gold_score = (picked * mask).sum(dim=1) + transitions[stop_index, last]
    return (log_z - gold_score).sum()


class CRFNegativeLogLikelihood(torch.nn.Module):
    """Drop-in for Flair's ``ViterbiLoss``, computed by :func:`crf_negative_log_likelihood`."""

    def __init__(self, label_dictionary) -> None:
        super().__init__()
        self.start_index = label_dictionary.get_idx_for_item(_START)
        self.stop_index = label_dictionary.get_idx_for_item(_STOP)

    def forward(self, features_tuple, targets):
        features, lengths, transitions = flair_compat.crf_scores(features_tuple)
        return crf_negative_log_likelihood(features, lengths, transitions, targets, self.start_index, self.stop_index)


class BiLSTMCRFTagger(BaseTagger):
    """A BiLSTM-CRF sequence tagger with locally trained word vectors and character embeddings.

    Parameters
    ----------
    hidden_size : size of each direction of the BiLSTM.
    word_dim : dimension of the gensim word vectors (0 leaves word vectors out).
    word_method : ``"fasttext"`` or ``"word2vec"``.
    word_epochs : epochs of word-vector training.
    char_dim, char_hidden_size : the character BiLSTM word encoder (``char_hidden_size=0`` leaves it out).
    char_lm : also train a forward and a backward character language model on the texts and stack their
        contextual embeddings (slow on CPU; off by default).
    char_lm_hidden_size, char_lm_epochs : size and training length of those language models.
    sentences_per_instance, max_instance_tokens : how sentences are grouped into one model input.
    max_epochs, mini_batch_size, learning_rate, optimizer : training with Flair's ``ModelTrainer``
        (``optimizer`` is ``"sgd"`` or ``"adam"``).
    lr_schedule : ``"plateau"`` halves the learning rate when the training loss stops falling (Flair's
        default); ``"linear"`` decays it linearly to zero over ``max_epochs`` (after a 5% warm-up), which
        suits a fixed, small epoch budget.
    word_dropout, locked_dropout : Flair's regularisation of the embeddings.
    seed : seeds Python, numpy and torch (and gensim) for a reproducible model.
    n_threads : torch threads used in prediction (restored afterwards; ``None`` keeps them): one per process,
        as the pool is scored in shards on as many processes.
    fit_threads : torch threads used in ``fit`` (restored afterwards); ``None``: the configured training threads
        (``learning.core.taggers.base.training_threads``), as a CRF's fit uses them.
    predict_batch_size : instances per forward pass at prediction time.
    verbose : let Flair log its training progress.

    Fitted attributes: ``labels_`` (BIO labels, ``"O"`` first), ``model_`` (the Flair ``SequenceTagger``),
    ``n_train_instances_``, ``train_seconds_``.

    The training defaults were chosen on MEDDOCAN (``bench/flair_quality.py``): on 200 documents and 5
    epochs Adam at 0.006 with linear decay and locked dropout 0.25 beat Flair's SGD recipe (entity F1 0.93
    against 0.88).  On the full train split, one thread of a shared 2-core machine, 10 epochs took 12 minutes
    for dev F1 0.959 and 20 epochs 24 minutes for 0.961, against 0.958 for the CRF tagger in the same runs.
    """

    PARAMETERS = (
        Param("hidden_size", int, 128, "units in each direction of the BiLSTM", minimum=8, maximum=1024),
        Param("word_dim", int, 64, "size of the word vectors trained on the project's text (0: none)",
              minimum=0, maximum=600, title="Word vector size"),
        Param("word_method", str, "fasttext", "how the word vectors are trained (FastText also sees word parts)",
              choices=("fasttext", "word2vec"), title="Word vectors"),
        Param("word_epochs", int, 10, "passes over the text when training the word vectors", minimum=1, maximum=100),
        Param("char_dim", int, 25, "size of each character's embedding", minimum=1, maximum=200,
              title="Character embedding size"),
        Param("char_hidden_size", int, 25, "units of the character BiLSTM that spells each word (0: none)",
              minimum=0, maximum=512, title="Character BiLSTM size"),
        Param("char_lm", bool, False, "also train character language models on the text (slow without a GPU)",
              title="Character language models"),
        Param("char_lm_hidden_size", int, 128, "units of each character language model", minimum=16, maximum=2048,
              title="Character language model size"),
        Param("char_lm_epochs", int, 2, "passes over the text when training the language models",
              minimum=1, maximum=50, title="Character language model epochs"),
        Param("sentences_per_instance", int, 3, "consecutive sentences the model reads together, for context",
              minimum=1, maximum=20),
        Param("max_instance_tokens", int, 150, "longest input in tokens; longer sentences are cut",
              minimum=10, maximum=1000),
        Param("max_epochs", int, 10, "passes over the gold records per retrain (10 took 12 min on MEDDOCAN)",
              minimum=1, maximum=200),
        Param("mini_batch_size", int, 16, "inputs per training step", minimum=1, maximum=512),
        Param("learning_rate", float, 0.006, "step size of the optimizer (0.006 suits Adam, 0.1 SGD)",
              minimum=1e-5, maximum=1.0),
        Param("optimizer", str, "adam", "Adam beat Flair's SGD recipe on MEDDOCAN", choices=("adam", "sgd")),
        Param("lr_schedule", str, "linear", "linear decay suits few epochs; plateau halves the rate when the "
              "loss stops falling", choices=("linear", "plateau"), title="Learning-rate schedule"),
        Param("word_dropout", float, 0.05, "share of words blanked out in training", minimum=0.0, maximum=0.9),
        Param("locked_dropout", float, 0.25, "share of embedding dimensions dropped in training",
              minimum=0.0, maximum=0.9),
    )
    # The live loop seeds every retrain itself; threads, batching and logging are the machine's business.
    INTERNAL_PARAMETERS = frozenset({"seed", "n_threads", "fit_threads", "predict_batch_size", "verbose"})

    def __init__(
        self,
        *,
        hidden_size: int = 128,
        word_dim: int = 64,
        word_method: str = "fasttext",
        word_epochs: int = 10,
        char_dim: int = 25,
        char_hidden_size: int = 25,
        char_lm: bool = False,
        char_lm_hidden_size: int = 128,
        char_lm_epochs: int = 2,
        sentences_per_instance: int = 3,
        max_instance_tokens: int = 150,
        max_epochs: int = 10,
        mini_batch_size: int = 16,
        learning_rate: float = 0.006,
        optimizer: str = "adam",
        lr_schedule: str = "linear",
        word_dropout: float = 0.05,
        locked_dropout: float = 0.25,
        seed: int = 0,
        n_threads: int | None = 1,
        fit_threads: int | None = None,
        predict_batch_size: int = 64,
        verbose: bool = False,
    ) -> None:
        self.hidden_size = hidden_size
        self.word_dim = word_dim
        self.word_method = word_method
        self.word_epochs = word_epochs
        self.char_dim = char_dim
        self.char_hidden_size = char_hidden_size
        self.char_lm = char_lm
        self.char_lm_hidden_size = char_lm_hidden_size
        self.char_lm_epochs = char_lm_epochs
        self.sentences_per_instance = sentences_per_instance
        self.max_instance_tokens = max_instance_tokens
        self.max_epochs = max_epochs
        self.mini_batch_size = mini_batch_size
        self.learning_rate = learning_rate
        self.optimizer = optimizer
        self.lr_schedule = lr_schedule
        self.word_dropout = word_dropout
        self.locked_dropout = locked_dropout
        self.seed = seed
        self.n_threads = n_threads
        self.fit_threads = fit_threads
        self.predict_batch_size = predict_batch_size
        self.verbose = verbose

    # ----------------------------------------------------------------- training

    def fit(self, docs: Sequence[Document], unlabelled: Sequence[Document] | None = None) -> "BiLSTMCRFTagger":
        """Train embeddings on ``docs`` (and ``unlabelled``, if given) and the tagger on ``docs``' spans."""
        import flair
        from flair.data import Corpus
        from flair.datasets import FlairDatapointDataset
        from flair.models import SequenceTagger
        from flair.trainers import ModelTrainer
        from flair.trainers.plugins import LinearSchedulerPlugin

        from learning.core.embeddings import quiet_flair  # imports Flair; not counted as training time

        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"unknown optimizer {self.optimizer!r}; use 'sgd' or 'adam'")
        if self.lr_schedule not in ("plateau", "linear"):
            raise ValueError(f"unknown lr_schedule {self.lr_schedule!r}; use 'plateau' or 'linear'")
        types = sorted({span.label for doc in docs for span in doc.spans})
        if not types:
            raise ValueError("the training documents contain no labelled spans; label at least one first")

        started = time.perf_counter()
        threads = self.fit_threads or training_threads()
        with _torch_threads(threads), quiet_flair(self.verbose):
            flair.set_seed(self.seed)
            tokenised = [tokenize(doc.text) for doc in docs]
            pool = list(unlabelled or ())
            pool_tokens = [tokenize(doc.text) for doc in pool]

            stack = self._build_embeddings(
                texts=[doc.text for doc in docs] + [doc.text for doc in pool],
                token_texts=[[t.text for t in toks] for toks in tokenised + pool_tokens],
            )
            instances = []
            for doc, tokens in zip(docs, tokenised):
                instances.extend(self._labelled_instances(doc, tokens))

            tag_dictionary = flair_compat.span_tag_dictionary(types)

            flair.set_seed(self.seed)
            model = SequenceTagger(
                embeddings=stack,
                tag_dictionary=tag_dictionary,
                tag_type=_TAG_TYPE,
                tag_format="BIO",
                use_crf=True,
                hidden_size=self.hidden_size,
                word_dropout=self.word_dropout,
                locked_dropout=self.locked_dropout,
                allow_unk_predictions=False,
            )
            flair_compat.replace_crf_loss(model, CRFNegativeLogLikelihood(model.label_dictionary))
            corpus = Corpus(
                train=FlairDatapointDataset(instances), dev=None, test=None, sample_missing_splits=False
            )
            trainer = ModelTrainer(model, corpus)
            with tempfile.TemporaryDirectory(prefix="bilstm-crf-") as base_path:
                trainer.train(
                    base_path,
                    learning_rate=self.learning_rate,
                    mini_batch_size=self.mini_batch_size,
                    max_epochs=self.max_epochs,
                    optimizer=torch.optim.Adam if self.optimizer == "adam" else torch.optim.SGD,
                    shuffle=True,
                    use_final_model_for_eval=True,
                    save_final_model=False,
                    create_file_logs=False,
                    create_loss_file=False,
                    embeddings_storage_mode="cpu",
                    min_learning_rate=1e-3 if self.optimizer == "sgd" else 1e-6,
                    attach_default_scheduler=self.lr_schedule == "plateau",
                    plugins=[LinearSchedulerPlugin(warmup_fraction=0.05)] if self.lr_schedule == "linear" else [],
                )
            for sentence in instances:
                sentence.clear_embeddings()
            model.eval()

        self.labels_ = bio_labels(types)
        self.model_ = model
        self.n_train_instances_ = len(instances)
        self.train_seconds_ = time.perf_counter() - started
        return self

    def _build_embeddings(self, *, texts: list[str], token_texts: list[list[str]]):
        from flair.embeddings import StackedEmbeddings

        from learning.core import embeddings as local_embeddings

        parts = []
        if self.word_dim > 0:
            vectors = local_embeddings.train_word_vectors(
                token_texts, dim=self.word_dim, method=self.word_method, epochs=self.word_epochs, seed=self.seed
            )
            parts.append(local_embeddings.word_embeddings(vectors))
        if self.char_hidden_size > 0:
            parts.append(
                local_embeddings.character_embeddings(
                    texts, char_dim=self.char_dim, hidden_size=self.char_hidden_size
                )
            )
        if self.char_lm:
            for forward in (True, False):
                lm = local_embeddings.train_char_language_model(
                    texts,
                    forward=forward,
                    hidden_size=self.char_lm_hidden_size,
                    max_epochs=self.char_lm_epochs,
                    seed=self.seed,
                    verbose=self.verbose,
                )
                parts.append(local_embeddings.char_lm_embeddings(lm))
        if not parts:
            raise ValueError("no embeddings: set word_dim, char_hidden_size or char_lm")
        return StackedEmbeddings(parts)

    def _instances(self, text: str, tokens: list[Token]) -> list[tuple[int, int]]:
        return instance_bounds(sentence_bounds(text, tokens), self.sentences_per_instance, self.max_instance_tokens)

    @staticmethod
    def _flair_sentence(tokens: Sequence[Token]):
        from flair.data import Sentence
        from flair.data import Token as FlairToken

        base = tokens[0].start
        flair_tokens = [
            FlairToken(
                tok.text,
                start_position=tok.start - base,
                whitespace_after=(tokens[k + 1].start - tok.end) if k + 1 < len(tokens) else 0,
            )
            for k, tok in enumerate(tokens)
        ]
        return Sentence(flair_tokens)

    def _labelled_instances(self, doc: Document, tokens: list[Token]):
        tags, _ = spans_to_bio(tokens, doc.spans)
        out = []
        for a, b in self._instances(doc.text, tokens):
            piece = tokens[a:b]
            sentence = self._flair_sentence(piece)
            index_of_start = {tok.start: k for k, tok in enumerate(piece)}
            index_of_end = {tok.end: k for k, tok in enumerate(piece)}
            for span in bio_to_spans(piece, tags[a:b]):
                first, last = index_of_start[span.start], index_of_end[span.end]
                sentence[first : last + 1].add_label(_TAG_TYPE, span.label)
            out.append(sentence)
        return out

    # ----------------------------------------------------------------- prediction

    def predict(self, docs: Sequence[Document]) -> list[list[Span]]:
        """Spans of the most probable (Viterbi) tag sequence of each document."""
        return [spans for _, spans, _ in self._run(docs, viterbi=True, marginals=False)]

    def predict_tags(self, docs: Sequence[Document]) -> list[list[str]]:
        """The Viterbi tag of every token of each document."""
        return [tags for tags, _, _ in self._run(docs, viterbi=True, marginals=False)]

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]:
        """Per document, P(label | text) for every token (rows sum to 1, columns in ``labels_`` order)."""
        return [marg for _, _, marg in self._run(docs, viterbi=False, marginals=True)]

    def predict_with_marginals(self, docs: Sequence[Document]) -> list[tuple[list[Span], np.ndarray]]:
        """Viterbi spans and marginals from one forward pass per instance."""
        return [(spans, marg) for _, spans, marg in self._run(docs, viterbi=True, marginals=True)]

    def crf_potentials(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(transition, start, end)`` over ``labels_`` in the orientation of ``forward_backward``.

        ``transition[i, j]`` scores label i followed by label j; ``start``/``end`` score the first/last label.
        """
        self._check_fitted()
        trans = flair_compat.crf_transitions_to_from(self.model_)
        idx = self._label_columns()
        dictionary = self.model_.label_dictionary
        start_idx = dictionary.get_idx_for_item(_START)
        stop_idx = dictionary.get_idx_for_item(_STOP)
        transition = trans[np.ix_(idx, idx)].T
        start = trans[idx, start_idx]
        end = trans[stop_idx, idx]
        return transition, start, end

    def _label_columns(self) -> np.ndarray:
        dictionary = self.model_.label_dictionary
        columns = []
        for label in self.labels_:
            if not dictionary.has_item(label):
                raise RuntimeError(f"label {label!r} missing from the model's tag dictionary")
            columns.append(dictionary.get_idx_for_item(label))
        return np.asarray(columns)

    def _forward(self, docs: Sequence[Document], viterbi: bool = False):
        """Run the network over every instance of ``docs``.

        Returns the tokens of each document and, per document, ``[(token range, emissions), ...]`` with
        emissions already reordered to ``labels_``; with ``viterbi`` also Flair's decoded tags per instance.
        """
        self._check_fitted()
        model = self.model_
        model.eval()
        columns = self._label_columns()
        doc_tokens = [tokenize(doc.text) for doc in docs]
        jobs = []  # (doc index, (a, b), sentence)
        for d, (doc, tokens) in enumerate(zip(docs, doc_tokens)):
            for a, b in self._instances(doc.text, tokens):
                jobs.append((d, (a, b), self._flair_sentence(tokens[a:b])))
        # Longest first, as the packed BiLSTM needs lengths in decreasing order within a batch.
        order = sorted(range(len(jobs)), key=lambda k: len(jobs[k][2]), reverse=True)
        emissions: dict[int, np.ndarray] = {}
        decoded: dict[int, list[str]] = {}

        with flair_compat.captured_crf_emissions(model) as last_emissions:
            with _torch_threads(self.n_threads), torch.no_grad():
                for lo in range(0, len(order), self.predict_batch_size):
                    batch_ids = order[lo : lo + self.predict_batch_size]
                    batch = [jobs[k][2] for k in batch_ids]
                    sentence_tensor, lengths = flair_compat.prepare_tensors(model, batch)
                    scores = model.forward(sentence_tensor, lengths)
                    em = last_emissions().detach().cpu().double().numpy()
                    for row, k in enumerate(batch_ids):
                        emissions[k] = em[row, : int(lengths[row]), :][:, columns]
                    if viterbi:
                        tags = flair_compat.viterbi_tags(model, scores, batch)
                        for row, k in enumerate(batch_ids):
                            decoded[k] = tags[row]
                    for sentence in batch:
                        sentence.clear_embeddings()

        per_doc: list[list[tuple[tuple[int, int], np.ndarray]]] = [[] for _ in docs]
        tags_per_doc: list[list[tuple[tuple[int, int], list[str]]]] = [[] for _ in docs]
        for k, (d, bounds, _) in enumerate(jobs):
            per_doc[d].append((bounds, emissions[k]))
            if viterbi:
                tags_per_doc[d].append((bounds, decoded[k]))
        return doc_tokens, per_doc, tags_per_doc

    def _run(self, docs: Sequence[Document], *, viterbi: bool, marginals: bool):
        doc_tokens, per_doc, tags_per_doc = self._forward(docs, viterbi=viterbi)
        n_labels = len(self.labels_)
        out = []
        if marginals:
            transition, start, end = self.crf_potentials()
        for d, tokens in enumerate(doc_tokens):
            tags = ["O"] * len(tokens)
            spans: list[Span] = []
            if viterbi:
                for (a, b), inst_tags in tags_per_doc[d]:
                    tags[a:b] = inst_tags
                spans = bio_to_spans(tokens, tags)
            marg = np.zeros((len(tokens), n_labels))
            if marginals and per_doc[d]:
                pieces = per_doc[d]
                longest = max(e.shape[0] for _, e in pieces)
                unary = np.zeros((len(pieces), longest, n_labels))
                lengths = np.zeros(len(pieces), dtype=np.int64)
                for i, (_, e) in enumerate(pieces):
                    unary[i, : e.shape[0]] = e
                    lengths[i] = e.shape[0]
                post = forward_backward_batch(unary, lengths, transition, start, end)
                for i, ((a, b), _) in enumerate(pieces):
                    marg[a:b] = post[i, : b - a]
            out.append((tags, spans, marg))
        return out

    # ----------------------------------------------------------------- persistence

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        model = state.pop("model_", None)
        if model is not None:
            buffer = io.BytesIO()
            torch.save(flair_compat.model_state(model), buffer, pickle_protocol=4)
            state["model_bytes_"] = buffer.getvalue()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        blob = state.pop("model_bytes_", None)
        self.__dict__.update(state)
        if blob is not None:
            from flair.models import SequenceTagger

            import learning.core.embeddings  # noqa: F401  (registers the embedding classes the model names)

            # Flair's state holds embedding objects, which weights_only=True refuses. The blob is trusted only
            # because it arrives inside a tagger pickle, and tagger pickles are read through
            # learning.core.artifacts, which verifies their signature before unpickling anything.
            model_state = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=False)
            self.model_ = SequenceTagger.load(model_state)
            self.model_.eval()

    def save(self, path: str | Path, *, key: bytes) -> None:
        """Write the fitted tagger (parameters, labels and network) to one file, signed with ``key``
        (mode 0600; see :mod:`learning.core.artifacts`)."""
        from learning.core import artifacts

        artifacts.write(path, self, key=key)

    @classmethod
    def load(cls, path: str | Path, *, key: bytes) -> "BiLSTMCRFTagger":
        """Read a tagger written by :meth:`save` with the same ``key``; a file whose signature does not match
        raises :class:`learning.core.artifacts.ArtifactRejected` before anything is unpickled."""
        from learning.core import artifacts

        obj = artifacts.read(path, key=key)
        if not isinstance(obj, cls):
            raise TypeError(f"{path} holds a {type(obj).__name__}, not a {cls.__name__}")
        return obj
