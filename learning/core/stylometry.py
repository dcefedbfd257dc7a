"""Stylometric features of documents and clusters of documents by style (ALGORITHMS.md §8).

Each document becomes a vector of named features — nine readability formulas, four measures of lexical
richness and the share of clinical terms — the redundant ones are dropped, and the documents are grouped by
Ward hierarchical clustering with the number of clusters chosen by the Dunn index. ``learning.core.ordering``
then spreads an active-learning batch across the clusters.

Counting. Words and sentences come from :func:`corpus.text.tokenize` and
:func:`corpus.text.sentence_bounds`, the same units as the rest of deidloop:

- a *word* is a token holding a letter or a digit (numbers, dates and IDs are words; punctuation is not);
- a *sentence* is a range of :func:`sentence_bounds` holding at least one word, so a header line without a
  full stop ("Sexo: H") is a sentence of its own;
- *letters* are the letters and digits of the words; *syllables* are the hyphenation points pyphen finds in
  a word plus one (textstat's method for every language but English), so a number counts one syllable.

Library choice. textstat 0.7.13 supplies the language-dependent parts: the pyphen dictionary per language,
the Flesch constants per language (Fernández Huerta's for Spanish) and the easy-word lists that keep
common words out of Gunning FOG's complex words. Its formula functions are not called, because their counts
do not fit clinical text: a sentence ends only at ``.!?`` (never at a line break), a sentence of two words
or fewer is not counted while its words still are, and the point of a decimal ("1.16") splits a sentence.
On 200 MEDDOCAN training documents that shifts words per sentence by a median of +13% (from -16% to +59%),
and a list of short lines without stops reads as one very long sentence — the opposite of its style. Its English syllable count also loads
NLTK's CMU dictionary and downloads it on first use. So the formulas are written out below, each with its
published constants, over the counts above; textstat offers no FORCAST, Danielson–Bryan or Dickes–Steiwer
anyway. lexicalrichness computes Carroll's CTTR, Yule's K and MTLD from the lower-cased words, and Dugast's
Uber index where it is defined (see :func:`document_features`). The clustering uses scipy.

textstat and lexicalrichness are imported on first use: they pull in NLTK, pandas and matplotlib, seconds
of import time that the clustering and batch functions do not need. Neither's global settings are touched.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from corpus.text import fold, sentence_bounds, tokenize
from learning.core._compat import textstat as textstat_compat

__all__ = [
    "DEFAULT_CLINICAL_TERMS",
    "FEATURE_NAMES",
    "SUPPORTED_LANGUAGES",
    "StyleClusters",
    "UnsupportedLanguageError",
    "best_k",
    "cluster_documents",
    "cluster_features",
    "document_features",
    "drop_redundant_features",
    "dunn_index",
    "numbered_by_size",
    "feature_matrix",
    "standardize",
]

FEATURE_NAMES: tuple[str, ...] = (
    "flesch_reading_ease",
    "flesch_kincaid_grade",
    "gunning_fog",
    "coleman_liau",
    "linsear_write",
    "lix",
    "forcast",
    "danielson_bryan",
    "dickes_steiwer",
    "carroll_cttr",
    "dugast_uber",
    "yule_k",
    "mtld",
    "clinical_term_ratio",
)

# Language code of deidloop -> pyphen/textstat locale.
_LOCALES: Mapping[str, str] = {"es": "es", "en": "en_US"}
SUPPORTED_LANGUAGES: tuple[str, ...] = tuple(_LOCALES)

# Default clinical vocabulary: lower-case stems without accents. A word is clinical when its lower-cased,
# accent-free form starts with one of them, so "hipertens" covers "hipertensión" and "hipertenso". Common
# terms of clinical case reports (findings, tests, organs, treatments); meant as a rough stylistic signal,
# not a terminology. Stems are kept long enough not to catch everyday words.
DEFAULT_CLINICAL_TERMS: Mapping[str, tuple[str, ...]] = {
    "es": (
        "pacient", "diagnost", "tratamient", "sintom", "hipertens", "diabet", "tumor", "neoplas", "carcinom",
        "metasta", "biops", "ecograf", "radiograf", "tomograf", "resonanci", "analitic", "hemoglobin",
        "leucocit", "plaquet", "creatinin", "insuficienc", "infecci", "fiebre", "dolor", "lesion", "cirug",
        "quirurg", "interven", "exploraci", "antecedent", "ingres", "urgenci", "renal", "hepat", "pulmon",
        "cardi", "abdom", "quimioter", "radioter", "antibiot", "analges", "edema", "anemi", "trombo", "sangr",
        "orin", "urinar", "vesic", "prostat", "farmac", "medica", "clinic",
    ),
    "en": (
        "patient", "diagnos", "treatment", "symptom", "hypertens", "diabet", "tumor", "tumour", "neoplas",
        "carcinom", "metasta", "biops", "ultrasound", "radiograph", "tomograph", "resonance", "hemoglobin",
        "haemoglobin", "leukocyt", "leucocyt", "platelet", "creatinin", "insufficien", "infect", "fever",
        "pain", "lesion", "surg", "examinat", "admission", "admitted", "emergenc", "renal", "hepat", "pulmon",
        "cardi", "abdom", "chemother", "radiother", "antibiot", "analges", "edema", "oedema", "anemi",
        "anaemi", "thromb", "blood", "urin", "bladder", "prostat", "medicat", "clinic", "dose", "dosage",
    ),
}

_REDUNDANCY_THRESHOLD = 0.95
_DEFAULT_K_MAX = 10
_LONG_WORD_LETTERS = 6  # LIX: a long word has more than six letters
_MTLD_THRESHOLD = 0.72  # McCarthy & Jarvis' default factor size


class UnsupportedLanguageError(ValueError):
    """A language for which there are no syllable rules or clinical terms here."""


# --------------------------------------------------------------------------------------------------
# Features of one document


@dataclass(frozen=True, slots=True)
class _Counts:
    """What the formulas read from one document (``words`` is never empty)."""

    words: tuple[str, ...]
    sentences: int
    letters: int
    syllables: int
    monosyllables: int
    polysyllables: int  # three syllables or more (Linsear Write's "hard" words)
    complex_words: int  # Gunning FOG: polysyllabic and not on the language's easy-word list
    long_words: int  # more than six letters (LIX)


def _locale(language: str) -> str:
    try:
        return _LOCALES[language]
    except KeyError:
        raise UnsupportedLanguageError(
            f"Unsupported language {language!r} for stylometric features; use one of {', '.join(_LOCALES)}."
        ) from None


def _is_word(token_text: str) -> bool:
    return any(ch.isalnum() for ch in token_text)


@lru_cache(maxsize=None)
def _syllable_counter(locale: str) -> Callable[[str], int]:
    hyphenator = textstat_compat.hyphenator(locale)

    @lru_cache(maxsize=65536)
    def count(word: str) -> int:
        return len(hyphenator.positions(word)) + 1

    return count


@lru_cache(maxsize=None)
def _complex_word_rule(locale: str) -> tuple[frozenset[str], int]:
    """Gunning FOG's complex word for ``locale``: (easy words, minimum syllables), as textstat defines it."""
    return (
        frozenset(textstat_compat.easy_words(locale)),
        int(textstat_compat.language_constant(locale, "syllable_threshold")),
    )


@lru_cache(maxsize=None)
def _flesch_constants(locale: str) -> tuple[float, float, float]:
    """(base, weight of words per sentence, weight of syllables per word) for the Flesch reading ease."""
    return (
        float(textstat_compat.language_constant(locale, "fre_base")),
        float(textstat_compat.language_constant(locale, "fre_sentence_length")),
        float(textstat_compat.language_constant(locale, "fre_syll_per_word")),
    )


def _count(text: str, locale: str) -> _Counts | None:
    """The counts of ``text``, or ``None`` when it has no word."""
    tokens = tokenize(text)
    is_word = [_is_word(t.text) for t in tokens]
    words = tuple(t.text for t, w in zip(tokens, is_word) if w)
    if not words:
        return None
    sentences = sum(1 for i, j in sentence_bounds(text, tokens) if any(is_word[i:j]))
    syllables_of = _syllable_counter(locale)
    easy_words, complex_threshold = _complex_word_rule(locale)
    letters = syllables = monosyllables = polysyllables = complex_words = long_words = 0
    for word in words:
        lower = word.lower()
        n_letters = sum(1 for ch in word if ch.isalnum())
        n_syllables = syllables_of(lower)
        letters += n_letters
        syllables += n_syllables
        monosyllables += n_syllables == 1
        polysyllables += n_syllables >= 3
        complex_words += n_syllables >= complex_threshold and lower not in easy_words
        long_words += n_letters > _LONG_WORD_LETTERS
    return _Counts(words, sentences, letters, syllables, monosyllables, polysyllables, complex_words, long_words)


def _readability(c: _Counts, locale: str) -> dict[str, float]:
    """The nine readability formulas over the counts of one document (published constants)."""
    n_words = len(c.words)
    words_per_sentence = n_words / c.sentences
    syllables_per_word = c.syllables / n_words
    letters_per_word = c.letters / n_words
    fre_base, fre_sentence, fre_syllable = _flesch_constants(locale)
    # Linsear Write over the whole text rather than a 100-word sample: its ratio is per sentence already,
    # and a sample would make short and long documents incomparable.
    easy_words = n_words - c.polysyllables
    linsear = (easy_words + 3 * c.polysyllables) / c.sentences
    linsear = linsear / 2 if linsear > 20 else (linsear - 2) / 2
    # Danielson–Bryan count "characters per blank": the blanks between n words are n - 1.
    letters_per_blank = c.letters / max(n_words - 1, 1)
    types = len({w.lower() for w in c.words})
    return {
        "flesch_reading_ease": fre_base - fre_sentence * words_per_sentence - fre_syllable * syllables_per_word,
        "flesch_kincaid_grade": 0.39 * words_per_sentence + 11.8 * syllables_per_word - 15.59,
        "gunning_fog": 0.4 * (words_per_sentence + 100 * c.complex_words / n_words),
        # Coleman & Liau (1975): letters and sentences per 100 words.
        "coleman_liau": 0.0588 * 100 * letters_per_word - 0.296 * 100 * c.sentences / n_words - 15.8,
        "linsear_write": linsear,
        "lix": words_per_sentence + 100 * c.long_words / n_words,
        # FORCAST: 20 - (monosyllables per 150 words) / 10.
        "forcast": 20 - 15 * c.monosyllables / n_words,
        # Danielson & Bryan's second formula; the first is an exact linear function of it (DB2 = 124.9 - 10 DB1).
        "danielson_bryan": 131.059 - 10.364 * letters_per_blank - 0.194 * c.letters / c.sentences,
        "dickes_steiwer": 235.95993 - 73.021 * letters_per_word - 12.56438 * words_per_sentence
        - 50.03293 * types / n_words,
    }


def _lexical_richness(words: Sequence[str]) -> dict[str, float]:
    from lexicalrichness import LexicalRichness

    richness = LexicalRichness([w.lower() for w in words], preprocessor=None, tokenizer=None)
    n_words, n_types = richness.words, richness.terms
    if n_types < n_words:
        uber = richness.Dugast
    elif n_words >= 2:
        # Every word distinct: log(N)² / (log N - log V) divides by zero. Use its value for N words and
        # N - 1 types, the richest text of that length that has one, so "all distinct" still ranks richest.
        uber = math.log(n_words) ** 2 / (math.log(n_words) - math.log(n_words - 1))
    else:
        uber = 0.0  # one word: log(1)² = 0
    return {
        "carroll_cttr": richness.cttr,
        "dugast_uber": uber,
        "yule_k": float(richness.yulek),
        "mtld": float(richness.mtld(threshold=_MTLD_THRESHOLD)),
    }


def _clinical_stems(language: str, clinical_terms: Iterable[str] | None) -> tuple[str, ...]:
    if clinical_terms is None:
        return DEFAULT_CLINICAL_TERMS[language]
    stems = tuple(fold(term.strip()) for term in clinical_terms)
    if not all(stems):
        raise ValueError("Clinical terms must be non-empty strings; an empty term would match every word.")
    return stems


def _features(text: str, language: str, stems: tuple[str, ...]) -> dict[str, float]:
    locale = _locale(language)
    counts = _count(text, locale)
    if counts is None:
        return dict.fromkeys(FEATURE_NAMES, 0.0)
    clinical = sum(1 for w in counts.words if fold(w).startswith(stems)) if stems else 0
    features = {
        **_readability(counts, locale),
        **_lexical_richness(counts.words),
        "clinical_term_ratio": clinical / len(counts.words),
    }
    return {name: float(features[name]) for name in FEATURE_NAMES}


def document_features(
    text: str, language: str = "es", clinical_terms: Iterable[str] | None = None
) -> dict[str, float]:
    """The stylometric features of one document, by name in the order of :data:`FEATURE_NAMES`.

    ``language`` is ``"es"`` or ``"en"`` (syllable rules, Flesch constants, easy words, default clinical
    terms). ``clinical_terms`` replaces :data:`DEFAULT_CLINICAL_TERMS` for that language: stems matched,
    ignoring case and accents, at the start of each word.

    Every value is a finite float. Fallbacks: a text without words (empty, blank, punctuation only) gives
    0.0 for every feature; otherwise there is at least one sentence, since the sentence holding the first
    word counts. Dugast's Uber index, undefined when every word is distinct, takes its value for one
    repeated word (N words, N - 1 types); for a one-word text it is 0. MTLD on very short texts follows
    lexicalrichness (all-distinct text: the number of words).

    Raises :class:`UnsupportedLanguageError` for another language and ``ValueError`` for an empty term.
    """
    _locale(language)
    return _features(text, language, _clinical_stems(language, clinical_terms))


def feature_matrix(
    texts: Sequence[str], language: str = "es", clinical_terms: Iterable[str] | None = None
) -> tuple[list[str], np.ndarray]:
    """Feature names and an array of shape (documents, features) with one row per text, in order."""
    _locale(language)
    stems = _clinical_stems(language, clinical_terms)
    rows = [list(_features(text, language, stems).values()) for text in texts]
    matrix = np.array(rows, dtype=float).reshape(len(rows), len(FEATURE_NAMES))
    return list(FEATURE_NAMES), matrix


# --------------------------------------------------------------------------------------------------
# Redundant features


def standardize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Z-scores per column (population standard deviation) and a mask of the non-constant columns.

    A column is constant when its standard deviation is within rounding of 0 (relative to its magnitude);
    its z-scores are set to 0 rather than dividing by that noise.
    """
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"Expected a 2-D feature matrix, got shape {x.shape}.")
    if x.shape[0] == 0:
        return x.copy(), np.zeros(x.shape[1], dtype=bool)
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    scale = np.maximum(np.abs(x).max(axis=0), 1.0)
    varying = std > 1e-12 * scale
    z = np.zeros_like(x)
    z[:, varying] = (x[:, varying] - mean[varying]) / std[varying]
    return z, varying


def _kept_columns(z: np.ndarray, varying: np.ndarray, threshold: float) -> np.ndarray:
    """Indices of the columns kept: non-constant, and not correlated at |r| ≥ threshold with a kept one.

    ``z`` and ``varying`` are what :func:`standardize` returns.
    """
    candidates = np.flatnonzero(varying)
    if candidates.size == 0:
        return candidates
    # For z-scored columns the Pearson correlation is the mean product.
    corr = np.abs(z[:, candidates].T @ z[:, candidates]) / z.shape[0]
    kept: list[int] = []
    for pos in range(candidates.size):
        if all(corr[pos, other] < threshold for other in kept):
            kept.append(pos)
    return candidates[kept]


def drop_redundant_features(
    matrix: np.ndarray, names: Sequence[str], threshold: float = _REDUNDANCY_THRESHOLD
) -> list[str]:
    """Names of the features worth clustering on, in their original order.

    Constant columns go. Then, in column order, a column is dropped when its absolute Pearson correlation
    with a column already kept is at least ``threshold``: of every such pair the earlier column stays. A
    column is compared with kept columns only, so it is dropped only for a feature that remains.
    """
    x = np.asarray(matrix, dtype=float)
    _check_features(x, names)
    return [names[i] for i in _kept_columns(*standardize(x), threshold)]


def _check_features(x: np.ndarray, names: Sequence[str]) -> None:
    if x.ndim != 2:
        raise ValueError(f"Expected a 2-D feature matrix, got shape {x.shape}.")
    if x.shape[1] != len(names):
        raise ValueError(f"The matrix has {x.shape[1]} columns but {len(names)} feature names were given.")
    if not np.isfinite(x).all():
        raise ValueError("The feature matrix holds NaN or infinite values.")


# --------------------------------------------------------------------------------------------------
# StyleClusters


def _dunn_from_distances(distances: np.ndarray, labels: np.ndarray) -> float:
    same = labels[:, None] == labels[None, :]
    if same.all():
        raise ValueError("The Dunn index needs at least two clusters.")
    separation = distances[~same].min()
    diameter = distances[same].max()  # the diagonal (0) is included, so a singleton has diameter 0
    if diameter == 0:
        return math.inf if separation > 0 else 0.0
    return float(separation / diameter)


def dunn_index(points: np.ndarray, labels: Sequence[int]) -> float:
    """Dunn index: smallest Euclidean distance between points of different clusters over the largest
    distance between two points of the same cluster.

    Higher is better. ``inf`` when every cluster is a single point or a set of identical points (no spread
    inside any cluster) and the clusters are apart; 0 when points of different clusters coincide.
    """
    x = np.asarray(points, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    lab = np.asarray(labels)
    if lab.shape != (x.shape[0],):
        raise ValueError(f"Expected {x.shape[0]} labels, got shape {lab.shape}.")
    from scipy.spatial.distance import pdist, squareform  # scipy where clusters are computed, not on import

    return _dunn_from_distances(squareform(pdist(x)), lab)


def best_k(dunn: Mapping[int, float]) -> int:
    """The number of clusters with the highest Dunn index; on a tie, the smallest.

    Values within a relative 1e-9 of each other tie: the same ratio reached through different cuts can
    differ in the last bits.
    """
    if not dunn:
        raise ValueError("No number of clusters to choose from.")
    best = min(dunn)
    for k in sorted(dunn):
        value, top = dunn[k], dunn[best]
        if value > top and not math.isclose(value, top, rel_tol=1e-9):
            best = k
    return best


@dataclass(frozen=True)
class StyleClusters:
    """Documents grouped by style.

    ``labels[i]`` is the cluster of document ``i``, numbered by size (0 is the largest; equal sizes by
    their first document). ``dunn`` maps each number of clusters tried to its Dunn index (empty when only
    one cluster was possible). ``cluster_means[c]`` holds the mean of every feature in ``feature_names``
    (unstandardised, for display) over cluster ``c``; the clustering itself used ``kept_features`` only.
    """

    labels: np.ndarray
    k: int
    dunn: dict[int, float]
    kept_features: tuple[str, ...]
    feature_names: tuple[str, ...]
    cluster_means: np.ndarray

    @property
    def sizes(self) -> list[int]:
        """Number of documents per cluster (non-increasing)."""
        return np.bincount(self.labels, minlength=self.k).tolist()


def numbered_by_size(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters so that 0 is the largest, ties broken by the earliest document."""
    clusters, first, sizes = np.unique(labels, return_index=True, return_counts=True)
    order = sorted(range(clusters.size), key=lambda c: (-sizes[c], first[c]))
    new_id = np.empty(int(clusters.max()) + 1, dtype=int)
    new_id[clusters[order]] = np.arange(clusters.size)
    return new_id[labels]


def cluster_features(
    matrix: np.ndarray,
    names: Sequence[str],
    *,
    k_max: int | None = None,
    threshold: float = _REDUNDANCY_THRESHOLD,
) -> StyleClusters:
    """Ward clustering of the rows of a feature matrix, with k chosen by the Dunn index.

    The features are z-scored and the redundant ones dropped (:func:`drop_redundant_features`); Ward
    linkage runs on the z-scores of the kept ones, and the tree is cut into k = 2 … ``k_max`` clusters
    (default and upper bound: min(10, n - 1)). The k with the highest Dunn index wins, the smaller k on a
    tie. With fewer than three documents, or no feature that varies, all documents form one cluster
    (and no document, no cluster: k = 0).
    """
    x = np.asarray(matrix, dtype=float)
    _check_features(x, names)
    n = x.shape[0]
    z_all, varying = standardize(x)
    kept = _kept_columns(z_all, varying, threshold)
    k_hi = min(_DEFAULT_K_MAX if k_max is None else k_max, n - 1)
    labels = np.zeros(n, dtype=int)
    dunn: dict[int, float] = {}
    if n >= 3 and kept.size and k_hi >= 2:
        from scipy.cluster.hierarchy import cut_tree, linkage
        from scipy.spatial.distance import pdist, squareform

        z = z_all[:, kept]
        tree = linkage(z, method="ward")
        distances = squareform(pdist(z))
        # cut_tree follows the merge order, so it returns exactly k clusters even when merge heights tie
        # (fcluster's "maxclust" returns fewer then).
        cuts = {k: cut_tree(tree, n_clusters=k).ravel() for k in range(2, k_hi + 1)}
        dunn = {k: _dunn_from_distances(distances, cut) for k, cut in cuts.items()}
        labels = numbered_by_size(cuts[best_k(dunn)])
    k = int(labels.max()) + 1 if n else 0
    means = np.array([x[labels == c].mean(axis=0) for c in range(k)]).reshape(k, x.shape[1])
    return StyleClusters(
        labels=labels,
        k=k,
        dunn=dunn,
        kept_features=tuple(names[i] for i in kept),
        feature_names=tuple(names),
        cluster_means=means,
    )


def cluster_documents(
    texts: Sequence[str],
    language: str = "es",
    *,
    k_max: int | None = None,
    threshold: float = _REDUNDANCY_THRESHOLD,
    clinical_terms: Iterable[str] | None = None,
) -> StyleClusters:
    """Stylometric clusters of ``texts``: :func:`feature_matrix` followed by :func:`cluster_features`."""
    names, matrix = feature_matrix(texts, language, clinical_terms)
    return cluster_features(matrix, names, k_max=k_max, threshold=threshold)

