"""Kinship terms share one attribute, so a CRF generalises from the relatives its gold names to the others."""
from __future__ import annotations

from corpus.text import tokenize
from corpus.types import Document
from learning.core.decoding import decoded_spans
from learning.core.features import FeatureCache, FeatureExtractor
from learning.core.taggers.crf import CRFTagger
from learning.core.word_classes import word_class

from .toy import NoteBuilder


def test_kinship_terms_of_both_languages_match_whatever_their_case_and_accents():
    assert [word_class(w) for w in ("esposa", "Sobrinos", "TIO", "tío", "cuñada", "wife", "Nephews")] == ["kin"] * 7
    assert [word_class(w) for w in ("mujer", "familiares", "materno", "paciente", "child", "")] == [None] * 6


def test_a_kinship_term_and_its_neighbours_carry_the_class():
    feats = FeatureExtractor().extract("Acude con su esposa hoy.")
    rows = {tok.text: set(feats.token_attributes(t)) for t, tok in enumerate(feats.tokens)}
    assert "cls:kin" in rows["esposa"]
    assert "+1:cls:kin" in rows["su"] and "-1:cls:kin" in rows["hoy"]
    assert not any("cls:" in a for a in rows["Acude"])


def test_a_relative_the_gold_never_named_is_suggested_and_another_new_word_is_not():
    relatives = ["madre", "padre", "hermano", "hija", "abuela", "tío", "marido", "nieta", "primo", "sobrina",
                 "suegra", "hijos"]
    others = ["enfermera", "ambulancia", "médico", "vecina", "intérprete", "sonda"]
    gold = []
    for k in range(48):  # a relative and another word, in either order
        pair = [(relatives[k % 12], "FAMILIARES_SUJETO_ASISTENCIA"), (others[(k // 12 + k) % 6], None)][:: (-1) ** k]
        note = NoteBuilder().add(f"Nota {k}. Acude con su ").add(*pair[0]).add(" y con su ").add(*pair[1])
        gold.append(note.add(" a la consulta.").build(f"n{k}"))
    tagger = CRFTagger(max_iterations=60, feature_cache=FeatureCache()).fit(gold)
    new = Document("Nota 99. Acude con su esposa y con su cartero a la consulta.", name="new")
    tokens = tokenize(new.text)
    marginals = tagger.predict_marginals([new])[0]
    phi = {tok.text: 1 - marginals[t][tagger.labels_.index("O")] for t, tok in enumerate(tokens)}
    assert phi["esposa"] > 5 * phi["cartero"]
    # With a recall bias, as suggestions are decoded, the new relative is shown and the other new word is not.
    shown = decoded_spans(tokens, marginals, list(tagger.labels_), (0.99, 0.01))
    assert [(new.text[s.start:s.end], s.label) for s in shown] == [("esposa", "FAMILIARES_SUJETO_ASISTENCIA")]
