from __future__ import annotations

import pickle

import numpy as np

from corpus.text import tokenize
from corpus.types import Document, Span
from learning.core import artifacts
from learning.core.features import FeatureCache, get_extractor
from learning.core.lexicon import GoldLexicon, token_spans
from learning.core.taggers.crf import CRFTagger


def doc(text: str, *marked: tuple[str, str]) -> Document:
    """A document whose spans are the first occurrence of each (string, label)."""
    spans = []
    for surface, label in marked:
        start = text.index(surface)
        spans.append(Span(start, start + len(surface), label))
    return Document(text, tuple(sorted(spans)))


def lower(text: str) -> list[str]:
    return [t.text.lower() for t in tokenize(text)]


def lexicon_of(docs: list[Document]) -> tuple[GoldLexicon, list[list[str]]]:
    forms = [lower(d.text) for d in docs]
    spans = [token_spans(tokenize(d.text), d.spans) for d in docs]
    return GoldLexicon.from_gold(zip(forms, spans)), forms


GOLD = [
    doc("Remitido al Hospital La Paz por su madre.", ("Hospital La Paz", "HOSPITAL"), ("madre", "FAMILIARES")),
    doc("Prótesis de Boston Scientific. La madre refiere dolor.", ("Boston Scientific", "INSTITUCION")),
    doc("Control en el hospital la paz. Válvula de Boston Scientific.", ("hospital la paz", "HOSPITAL"),
        ("Boston Scientific", "INSTITUCION")),
]


def test_token_spans_are_the_gold_spans_as_token_positions():
    text = "Remitido al Hospital La Paz por su madre."
    assert token_spans(tokenize(text), GOLD[0].spans) == [(2, 5, "HOSPITAL"), (7, 8, "FAMILIARES")]
    # A span cutting a token claims the whole token, as the BIO tags do.
    assert token_spans(tokenize("Dr. Pérezz"), [Span(4, 9, "NAME")]) == [(2, 3, "NAME")]


def test_entries_count_their_labels_and_every_place_their_words_occur():
    lexicon, _ = lexicon_of(GOLD)
    assert lexicon.labels[("hospital", "la", "paz")] == {"HOSPITAL": 2}
    assert lexicon.seen[("hospital", "la", "paz")] == 2
    # "madre" was annotated once, and occurs twice in the gold: PHI half of the times it was seen.
    assert lexicon.labels[("madre",)] == {"FAMILIARES": 1} and lexicon.seen[("madre",)] == 2
    assert lexicon.matches(["la", "madre"]) == [(1, 2, "FAMILIARES", "often")]
    assert lexicon.matches(["boston", "scientific"]) == [(0, 2, "INSTITUCION", "sure")]


def test_a_training_document_sees_only_the_lexicon_of_the_others():
    lexicon, forms = lexicon_of(GOLD)
    # Only the first document annotated "madre": left out, the entry is gone for it; the second still
    # sees it (the first's annotation) though it did not annotate it itself.
    assert [m[2] for m in lexicon.matches(forms[0], exclude=0)] == ["HOSPITAL"]
    assert [m[2] for m in lexicon.matches(forms[1], exclude=1)] == ["INSTITUCION", "FAMILIARES"]
    # Its own unannotated occurrence is left out too: annotated 1 of the 1 other time it was seen.
    assert lexicon.matches(forms[1], exclude=1)[1] == (6, 7, "FAMILIARES", "sure")
    # Nothing is left out for a new record.
    assert [m[2] for m in lexicon.matches(forms[0])] == ["HOSPITAL", "FAMILIARES"]


def test_what_a_new_record_sees_is_judged_once_and_not_confused_with_a_left_out_document():
    lexicon, forms = lexicon_of(GOLD)
    # Matched for a new record first: the judgement over all the gold is kept ...
    assert lexicon.matches(forms[1])[1] == (6, 7, "FAMILIARES", "often")
    # ... and a training document left out still gets its own, ...
    assert lexicon.matches(forms[1], exclude=1)[1] == (6, 7, "FAMILIARES", "sure")
    assert lexicon.matches(forms[0], exclude=0) == [(2, 5, "HOSPITAL", "sure")]
    # ... after which a new record still sees the whole gold's.
    assert lexicon.matches(forms[1])[1] == (6, 7, "FAMILIARES", "often")
    # The judgements stay in the process: a saved lexicon is read back without them, and matches the same.
    key = b"k" * 32
    restored = artifacts.unseal(artifacts.seal(lexicon, key=key), key=key)
    assert restored._judged == {}
    assert restored.matches(forms[1]) == lexicon.matches(forms[1])


def test_the_longest_entry_wins_and_matches_do_not_overlap():
    gold = [doc("Vive en Las Palmas de Gran Canaria.", ("Las Palmas de Gran Canaria", "TERRITORIO")),
            doc("Natural de Las Palmas.", ("Las Palmas", "TERRITORIO")),
            doc("Estudió en Gran Canaria.", ("Gran Canaria", "TERRITORIO"))]
    lexicon, _ = lexicon_of(gold)
    forms = lower("De Las Palmas de Gran Canaria a Gran Canaria.")
    assert [(a, b) for a, b, _, _ in lexicon.matches(forms)] == [(1, 6), (7, 9)]


def test_the_label_is_the_most_annotated_one_ties_by_name():
    gold = [doc("Trabaja en Ford.", ("Ford", "INSTITUCION")), doc("Ford lo trajo.", ("Ford", "NOMBRE")),
            doc("Se llama Ford.", ("Ford", "NOMBRE"))]
    lexicon, _ = lexicon_of(gold)
    assert lexicon.matches(["ford"])[0][2] == "NOMBRE"
    assert lexicon.matches(["ford"], exclude=2)[0][2] == "INSTITUCION"


def test_punctuation_alone_is_no_entry_and_spans_longer_than_the_bound_are_left_out():
    gold = [doc("Calle Mayor , 12 , 3º B , 28013 Madrid , España .",
                ("Calle Mayor , 12 , 3º B , 28013 Madrid", "CALLE"), ("España", "PAIS")),
            doc("Firma : - .", ("-", "NOMBRE"))]
    lexicon, _ = lexicon_of(gold)
    assert list(lexicon.labels) == [("españa",)]


def test_features_give_each_tokens_lower_cased_form_and_the_lexicon_reads_them_as_ids():
    extractor = get_extractor()
    text = "İlker Ünal VISITÓ el Hospital La Paz con su Madre."
    f = FeatureCache().get(extractor, text)
    assert list(f.lower) == lower(text) and f.lower[1:3] == ["ünal", "visitó"]  # "i̇lker": a longer lower case
    gold_texts = [d.text for d in GOLD]
    as_ids = [FeatureCache().get(extractor, t).lower for t in gold_texts]
    spans = [token_spans(tokenize(d.text), d.spans) for d in GOLD]
    by_ids = GoldLexicon.from_gold(zip(as_ids, spans))
    by_strings = GoldLexicon.from_gold(zip([lower(t) for t in gold_texts], spans))
    assert by_ids.labels == by_strings.labels and by_ids.seen == by_strings.seen
    for k, forms in enumerate(as_ids):
        assert by_ids.matches(forms, exclude=k) == by_strings.matches(list(forms), exclude=k)
    assert by_ids.matches(f.lower) == by_strings.matches(lower(text)) != []
    # Forms the extractor meets later (after the lexicon looked at its list) are looked up too.
    later = FeatureCache().get(extractor, "Ingresa en el Hospital La Paz de Zaragozalandia.").lower
    assert by_ids.matches(later) == by_strings.matches(list(later)) == [(3, 6, "HOSPITAL", "sure")]


def test_extra_attributes_are_added_after_a_tokens_own():
    extractor = get_extractor()
    f = FeatureCache().get(extractor, "Visto en Hospital La Paz hoy.")
    g = f.with_attributes({4: ["lx:HOSPITAL", "lx:HOSPITAL:I"], 2: ["lx:HOSPITAL:B"]})
    for t in range(f.n_tokens):
        extra = {4: ["lx:HOSPITAL", "lx:HOSPITAL:I"], 2: ["lx:HOSPITAL:B"]}.get(t, [])
        assert g.token_attributes(t) == f.token_attributes(t) + extra
    assert g.sentences == f.sentences and g.tokens is f.tokens
    assert f.with_attributes({}) is f


def test_a_crf_with_the_gold_lexicon_marks_gold_strings_in_new_records_and_keeps_it_when_pickled():
    rng = np.random.default_rng(0)
    makers = ["Boston Scientific", "Medtronic", "Abbott Vascular", "Alcon Cusí"]
    gold = []
    for k in range(24):
        maker = makers[k % len(makers)]
        text = f"Nota {k}. Se implanta un dispositivo de {maker} sin incidencias. Dosis {rng.integers(1, 9)} mg."
        gold.append(doc(text, (maker, "INSTITUCION")))
    tagger = CRFTagger(max_iterations=30, feature_cache=FeatureCache()).fit(gold)  # the lexicon is the default
    assert len(tagger.lexicon_) == len(makers)
    assert any(a.startswith("lx:INSTITUCION") for a in tagger.attributes_)
    new = Document("Revisión del marcapasos Medtronic en consulta.")
    [f] = tagger.features([new])
    marked = [t for t in range(f.n_tokens) if "lx:INSTITUCION:B" in f.token_attributes(t)]
    assert [f.tokens[t].text for t in marked] == ["Medtronic"]
    # The fast path adds the marks' weights to the cached features' scores; crfsuite reads the marked items.
    fast, reference = tagger.predict_marginals([new])[0], tagger.predict_marginals_reference([new])[0]
    assert np.abs(fast - reference).max() < 1e-5
    lexicon, tagger.lexicon_ = tagger.lexicon_, None  # the same weights without the marks give other marginals
    assert np.abs(tagger.predict_marginals([new])[0] - fast).max() > 1e-3
    tagger.lexicon_ = lexicon
    key = b"test-key"
    again = artifacts.unseal(artifacts.seal(tagger, key=key), key=key)  # as a saved model is read back
    assert again.predict_marginals([new])[0].tolist() == tagger.predict_marginals([new])[0].tolist()
    # Without the setting nothing is marked, and the features are the cached ones.
    plain = CRFTagger(gold_lexicon=False, max_iterations=30, feature_cache=FeatureCache()).fit(gold)
    assert plain.lexicon_ is None
    assert not any(a.startswith("lx:") for a in plain.attributes_)


def test_machine_labelled_documents_are_marked_but_add_nothing_to_the_lexicon():
    gold = [doc(f"Nota {k}. Implante de Medtronic sin incidencias.", ("Medtronic", "INSTITUCION")) for k in range(6)]
    silver = Document("Implante de Abbott Vascular y de Medtronic.", (Span(12, 27, "INSTITUCION"),),
                      meta={"silver": True})
    tagger = CRFTagger(max_iterations=10, feature_cache=FeatureCache()).fit(gold + [silver])
    assert list(tagger.lexicon_.labels) == [("medtronic",)] and tagger.lexicon_.seen[("medtronic",)] == 6
    marked = tagger._training_features(gold + [silver])[0][-1]
    assert [marked.tokens[t].text for t in range(marked.n_tokens)
            if "lx:INSTITUCION:B" in marked.token_attributes(t)] == ["Medtronic"]


def test_an_extended_lexicon_is_the_lexicon_made_from_all_its_documents_and_names_the_ones_it_changes():
    earlier = GOLD + [
        doc("Visto en el Hospital Clínico por su hermano.", ("hermano", "FAMILIARES")),
        doc("Cita en el Hospital Clínico de Madrid.", ("Madrid", "TERRITORIO")),
    ]
    more = [
        # A new entry whose words are in earlier documents; one ("madre") annotated again.
        doc("Ingresa en el Hospital Clínico con su madre.", ("Hospital Clínico", "HOSPITAL"), ("madre", "FAMILIARES")),
        doc("Dispositivo de Medtronic, Madrid.", ("Medtronic", "INSTITUCION")),
    ]
    lexicon, forms = lexicon_of(earlier)
    before = [lexicon.attributes(f, exclude=i) for i, f in enumerate(forms)]
    labels, seen = {e: c.copy() for e, c in lexicon.labels.items()}, lexicon.seen.copy()
    # The new lexicon's documents: the earlier ones in another order, the new ones among them.
    docs = [earlier[3], more[0], earlier[0], earlier[4], earlier[2], more[1], earlier[1]]
    order = [3, None, 0, 4, 2, None, 1]
    new_forms = [lower(d.text) for d in docs]
    added = [None if k is not None else (f, token_spans(tokenize(d.text), d.spans))
             for k, f, d in zip(order, new_forms, docs)]
    extended, affected = lexicon.extended(order, added)
    whole, _ = lexicon_of(docs)
    assert extended.labels == whole.labels and extended.seen == whole.seen
    assert extended.seen[("hospital", "clínico")] == 3  # found in the earlier documents, which were walked again
    for i, f in enumerate(new_forms):
        assert extended.attributes(f, exclude=i) == whole.attributes(f, exclude=i)
        if i not in affected:
            assert extended.attributes(f, exclude=i) == before[order[i]]
    assert {1, 5} <= affected  # the new documents
    assert {0, 3} <= affected  # they hold the new entry "hospital clínico"
    text = lower("Remitida al Hospital Clínico por Medtronic.")
    assert extended.matches(text) == whole.matches(text) != lexicon.matches(text)
    # The lexicon it was extended from is as it was.
    assert lexicon.labels == labels and lexicon.seen == seen
    assert [lexicon.attributes(f, exclude=i) for i, f in enumerate(forms)] == before
    # A lexicon without its documents cannot be extended; one that would lose a document neither.
    for bad in (lambda: lexicon.without_documents().extended(order, added),
                lambda: lexicon.extended([0, 1, 2, 3], [None] * 4)):
        try:
            bad()
        except ValueError:
            pass
        else:
            raise AssertionError("extended a lexicon it cannot")
    assert lexicon.without_documents().matches(text) == lexicon.matches(text)


def test_a_fit_marks_only_the_gold_that_new_documents_change_and_marks_it_as_from_scratch():
    rng = np.random.default_rng(1)
    makers = ["Boston Scientific", "Medtronic", "Abbott Vascular", "Alcon Cusí", "Hospital La Paz"]
    gold = []
    for k in range(26):
        maker = makers[k % len(makers)]
        if k < 20:
            text = f"Nota {k}. Implante de {maker} en Madrid. Dosis {rng.integers(1, 9)} mg."
            marked = [(maker, "INSTITUCION")]
        else:  # "Hospital La Paz", annotated every time so far, comes back unannotated
            text = f"Nota {k}. Visita al Hospital La Paz en Madrid. Dosis {rng.integers(1, 9)} mg."
            marked = []
        gold.append(doc(text, *marked, *([("Madrid", "TERRITORIO")] if k % 3 == 0 else [])))
    cache = FeatureCache()
    tagger = CRFTagger(max_iterations=5, feature_cache=cache)

    def from_scratch(docs):
        return CRFTagger(feature_cache=cache)._training_features(docs)

    def same(got, expected):
        assert got[2] == expected[2]
        assert got[1].labels == expected[1].labels and got[1].seen == expected[1].seen and not got[1]._own
        for f, g in zip(got[0], expected[0]):
            assert np.array_equal(f.indices, g.indices) and np.array_equal(f.indptr, g.indptr)

    first = tagger._training_features(gold[:20])
    same(first, from_scratch(gold[:20]))
    grown = gold[20:24] + gold[:20][::-1] + gold[24:26]
    again = tagger._training_features(grown)
    same(again, from_scratch(grown))
    # Gold that was marked before keeps its marked features, unless the new documents changed its marks.
    before = first[0][::-1]
    kept = [f is g for f, g in zip(again[0][4:24], before)]
    assert all(k or not np.array_equal(f.indices, g.indices) for k, f, g in zip(kept, again[0][4:24], before))
    assert 0 < sum(kept) < 20  # and some were changed: "Hospital La Paz" is no longer "sure"
    # Another process's copy has none of it; gold whose spans changed is marked anew, as from scratch.
    assert pickle.loads(pickle.dumps(tagger))._marked is None
    edited = [Document(grown[0].text, ())] + grown[1:]
    same(tagger._training_features(edited), from_scratch(edited))
