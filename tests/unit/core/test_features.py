from __future__ import annotations

import numpy as np
import pytest

from learning.core.features import (
    CompactFeatures, FeatureCache, FeatureExtractor, get_extractor, short_shape, word_shape,
)


def test_shapes():
    assert word_shape("03/03/1946") == "dd/dd/dddd"
    assert word_shape("Fernández") == "Xxxxx"
    assert word_shape("NHC-123456") == "XXX-dddd"
    assert short_shape("Fernández") == "Xx"
    assert short_shape("03/03/1946") == "d/d/d"
    assert short_shape("12345678X") == "dX"


def attrs(text: str, token_text: str, extractor: FeatureExtractor | None = None) -> set[str]:
    feats = (extractor or FeatureExtractor()).extract(text)
    [t] = [i for i, tok in enumerate(feats.tokens) if tok.text == token_text]
    return set(feats.token_attributes(t))


def test_lexical_neighbour_and_line_key_features():
    text = "Datos.\nFecha de Ingreso: 12/12/2016.\nMédico: Ignacio Navarro NºCol: 28 28 70973."
    a = attrs(text, "12/12/2016")
    assert {"w:12/12/2016", "sh:dd/dd/dddd", "rx:date", "f:numeric", "p2:12", "s4:2016"} <= a
    assert {"-1:w::", "-2:w:ingreso", "+1:w:.", "+2:w:</s>", "b-::|12/12/2016"} <= a
    assert {"k:fecha de ingreso", "k1:ingreso", "kd:1", "kdk:1:fecha de ingreso", "lp:4+"} <= a
    assert "bos" not in a and "eos" not in a
    b = attrs(text, "Ignacio")
    assert {"k:médico", "kd:1", "f:title", "wc:Ignacio", "+1:w:navarro", "+1:f:title"} <= b
    c = attrs(text, "70973")
    assert {"k:nºcol", "k1:nºcol", "kd:3", "rx:idlike"} <= c
    first = attrs(text, "Datos")
    assert {"bos", "-1:w:<s>", "-2:w:<s>", "lp:0"} <= first


def test_gazetteers():
    ex = FeatureExtractor(gazetteers={"first_names": ["Ana", "José Luis"], "hospitals": ["Hospital La Paz"]})
    a = attrs("Vista por José en La Paz y Ana", "José", ex)
    assert "gw:first_names" in a and "g:first_names" not in a
    assert "g:first_names" in attrs("Vista por Ana", "Ana", ex)
    paz = attrs("en La Paz", "Paz", ex)
    assert "gw:hospitals" in paz and "-1:gw:hospitals" in paz
    assert FeatureExtractor().key != ex.key


def test_matrix_and_items_agree():
    ex = FeatureExtractor()
    feats = ex.extract("Nombre: Ana.\nNHC: 123.")
    m = feats.matrix()
    assert m.shape == (len(feats.tokens), len(ex.vocabulary))
    items = feats.sentence_items()
    assert [len(s) for s in items] == [b - a for a, b in feats.sentences]
    flat = [row for sentence in items for row in sentence]
    for t, row in enumerate(flat):
        cols = m[t].indices
        assert sorted(ex.vocabulary.strings[c] for c in cols) == sorted(row)
        assert np.all(m[t].data == 1.0)
        assert len(set(row)) == len(row)


def test_shared_extractor_and_cache_bounds():
    assert get_extractor() is get_extractor(None)
    assert get_extractor({"a": ["x"]}) is get_extractor({"a": ["x"]})
    cache = FeatureCache(max_tokens=5)
    ex = get_extractor()
    first = cache.get(ex, "uno dos tres")
    assert cache.get(ex, "uno dos tres") is first
    cache.get(ex, "cuatro cinco seis")  # 6 tokens > 5: the oldest goes
    assert len(cache) == 1
    assert (cache.hits, cache.misses) == (1, 2)


def test_documents_kept_for_training_are_never_evicted_by_scoring():
    cache = FeatureCache(max_tokens=6, max_kept_tokens=6)
    ex = get_extractor()
    gold = cache.get(ex, "uno dos tres", keep=True)
    for k in range(5):  # a pool larger than the cache cycles through the other segment
        cache.get(ex, f"registro {k} siete")
    assert cache.get(ex, "uno dos tres") is gold
    assert len(cache) == 3  # the gold and the two last pool records (3 tokens each)
    # A pool record used for training moves to the kept segment; one pushed out of it joins the others.
    promoted = cache.get(ex, "registro 4 siete", keep=True)
    assert cache.get(ex, "otro texto más", keep=True) is not None
    assert cache.get(ex, "registro 4 siete") is promoted
    hits = cache.hits
    # Pushed out of the kept segment into the other one, where it is kept compact: the same features again.
    assert same_features(cache.get(ex, "uno dos tres"), gold) and cache.hits == hits + 1
    cache.get(ex, "registro 8 siete")
    cache.get(ex, "registro 9 siete")
    misses = cache.misses
    cache.get(ex, "uno dos tres")
    assert cache.misses == misses + 1  # and, there, evicted like any pool record


def same_features(a, b) -> bool:
    return (a.tokens == b.tokens and a.sentences == b.sentences and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and a.vocabulary is b.vocabulary)


def test_a_pool_larger_than_the_recent_segment_is_kept_compact_and_assembled_as_extracted():
    cache = FeatureCache(max_tokens=1000, max_recent_tokens=8)
    ex = get_extractor()
    texts = [f"Paciente {k}: Ana Gil, {k + 30} años.\nNHC: {k}4567 Fecha: {k % 28 + 1}/3/2019" for k in range(12)]
    first = [cache.get(ex, t) for t in texts]
    assert cache.misses == 12 and len(cache) == 12
    again = [cache.get(ex, t) for t in texts]
    assert cache.misses == 12 and cache.hits == 12
    fresh = FeatureExtractor()  # its own vocabulary: compared by attribute strings
    for text, a, b in zip(texts, first, again):
        assert same_features(a, b)
        assert b is not a  # assembled again from the compact form: the recent segment holds ~8 tokens
        extracted = fresh.extract(text)
        assert [b.token_attributes(t) for t in range(b.n_tokens)] == [
            extracted.token_attributes(t) for t in range(extracted.n_tokens)]
    recent = cache.get(ex, texts[-1])
    assert recent is cache.get(ex, texts[-1])  # the document assembled last is kept whole


def test_documents_assembled_together_are_those_assembled_one_by_one(monkeypatch):
    import learning.core.features as features

    ex = FeatureExtractor()
    texts = [*NOTES, *(f"Paciente {k}: Ana Gil, {k + 30} años.\nNHC: {k}4567" for k in range(6)), ""]
    compacts = [ex.compact(text) for text in texts]
    alone = [ex.assemble(text, compact) for text, compact in zip(texts, compacts)]
    # Batches of at most 20 tokens: documents are cut into several batches, an empty one included.
    monkeypatch.setattr(features, "ASSEMBLY_TOKENS", 20)
    together = ex.assemble_many(texts, compacts)
    assert len(together) == len(texts)
    for text, a, b in zip(texts, alone, together):
        assert same_features(a, b) and list(a.lower) == list(b.lower)
        assert [b.token_attributes(t) for t in range(b.n_tokens)] == [
            a.token_attributes(t) for t in range(a.n_tokens)]
        assert [t.text for t in b.tokens] == [t.text for t in ex.extract(text).tokens]


def test_a_cache_asked_for_a_text_twice_at_once_featurizes_it_once():
    cache = FeatureCache()
    ex = get_extractor()
    first, again, other = cache.get_many(ex, ["uno dos tres", "uno dos tres", "cuatro cinco"])
    assert first is again and (cache.misses, cache.hits) == (2, 0) and len(cache) == 2
    assert cache.get(ex, "uno dos tres") is first


def test_each_row_is_the_token_its_neighbours_in_the_sentence_and_its_bigrams():
    ex = FeatureExtractor({"names": ["Ana"]})
    text = "Dr. Gil vio a Ana.\nEdad: 42 años. Alta el 3/4/2019"
    feats = ex.extract(text)
    assert feats.sentences and sum(b - a for a, b in feats.sentences) == feats.n_tokens
    for a, b in feats.sentences:
        forms = [t.text for t in feats.tokens[a:b]]
        lower = ["<s>"] + [f.lower() for f in forms] + ["</s>"]
        for i in range(b - a):
            own, _, _ = ex.lexical_attributes(forms[i])
            expected = list(own)
            expected += ([f"-1:{x}" for x in ex.lexical_attributes(forms[i - 1])[1]] if i >= 1
                         else ["-1:w:<s>", "bos"])
            expected += [f"-2:{x}" for x in ex.lexical_attributes(forms[i - 2])[2]] if i >= 2 else ["-2:w:<s>"]
            expected += ([f"+1:{x}" for x in ex.lexical_attributes(forms[i + 1])[1]] if i + 1 < b - a
                         else ["+1:w:</s>", "eos"])
            expected += ([f"+2:{x}" for x in ex.lexical_attributes(forms[i + 2])[2]] if i + 2 < b - a
                         else ["+2:w:</s>"])
            expected += [f"b-:{lower[i]}|{lower[i + 1]}", f"b+:{lower[i + 1]}|{lower[i + 2]}"]
            row = feats.token_attributes(a + i)
            assert row[: len(expected)] == expected
            assert all(x.startswith(("lp:", "line_end", "k:", "k1:", "kd:", "kdk:")) for x in row[len(expected):])


def bigrams_as_expected(feats) -> bool:
    """Whether every token's row holds the bigram ending at it and the one starting at it, by their text."""
    for a, b in feats.sentences:
        lower = ["<s>"] + [t.text.lower() for t in feats.tokens[a:b]] + ["</s>"]
        for i in range(b - a):
            row = feats.token_attributes(a + i)
            if f"b-:{lower[i]}|{lower[i + 1]}" not in row or f"b+:{lower[i + 1]}|{lower[i + 2]}" not in row:
                return False
    return True


def many_bigrams(n_documents: int, seed: int) -> list[str]:
    """Documents of random words from a small lexicon: thousands of distinct bigrams, many seen again."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(120)] + ["Ana", "Gil", "42", "."]
    return [" ".join(rng.choice(words, size=1500)) for _ in range(n_documents)]


def test_bigrams_stay_right_as_the_extractor_learns_thousands_of_them_and_merges_its_index():
    ex = FeatureExtractor()
    texts = many_bigrams(6, seed=1)
    for text in texts:
        assert bigrams_as_expected(ex.extract(text))
    assert len(ex._bigrams) > 4096 and ex._bigrams.keys.shape[0] > 0  # merged at least once
    # Seen again after the merges (and now mostly known), each text gives the same rows as a new extractor's.
    assert all(token_rows(ex.extract(text)) == token_rows(FeatureExtractor().extract(text)) for text in texts)


# The shared form (FeatureExtractor.portable) and a cache with a shared store -----------------------------

NOTES = [
    "Paciente: Ana Gil Pérez, 42 años.\nNHC: 123456. Fecha de ingreso: 3/4/2019.\n\nDr. Ruiz: sin alergias.",
    "Remitido desde el Hospital La Paz (Madrid) el 12/12/2016. Teléfono: 91 555 12 34; ana@correo.es",
    "",
    "Médico: Ignacio Navarro NºCol: 28 28 70973. Alta.",
]


class MemoryStore:
    """A shared store in a dict, for the cache's logic; the database one is tested in
    tests/integration/test_feature_store.py."""

    def __init__(self) -> None:
        self.stored: dict[str, bytes] = {}
        self.puts = 0
        self.vocabularies: dict[tuple[str, str], tuple[int, bytes]] = {}

    def get_many(self, texts):
        return [self.stored.get(text) for text in texts]

    def put_many(self, items):
        self.puts += 1
        self.stored.update(items)

    def get_vocabulary(self, key, scope):
        return self.vocabularies.get((key, scope), (0, None))[1]

    def put_vocabulary(self, key, scope, n_forms, snapshot):
        if self.vocabularies.get((key, scope), (0, None))[0] < n_forms:
            self.vocabularies[(key, scope)] = (n_forms, snapshot)


def token_rows(feats) -> list:
    return [((t.text, t.start, t.end), feats.token_attributes(i)) for i, t in enumerate(feats.tokens)]


def test_the_portable_form_read_by_a_fresh_extractor_gives_the_attributes_extracted():
    writer = FeatureExtractor()
    for text in NOTES:
        blob = writer.portable(writer.compact(text))
        reader = FeatureExtractor()  # another process: its own, empty vocabulary
        read = reader.assemble(text, reader.from_portable(text, blob))
        extracted = FeatureExtractor().extract(text)
        assert read.sentences == extracted.sentences
        assert token_rows(read) == token_rows(extracted)
    # The same bytes, read by an extractor that already knows other texts, give the same attributes too.
    reader = get_extractor()
    reader.extract(NOTES[1])
    blob = writer.portable(writer.compact(NOTES[0]))
    assert token_rows(reader.assemble(NOTES[0], reader.from_portable(NOTES[0], blob))) == token_rows(
        FeatureExtractor().extract(NOTES[0]))


def test_bytes_of_another_layout_or_text_are_refused():
    import struct
    import zlib

    ex = FeatureExtractor()
    blob = ex.portable(ex.compact(NOTES[0]))
    data = zlib.decompress(blob)
    older = zlib.compress(struct.pack("<I", 12345) + data[4:])
    for bad in (b"", b"not features", older, zlib.compress(data[:-3])):
        with pytest.raises(ValueError):
            ex.from_portable(NOTES[0], bad)
    with pytest.raises(ValueError):
        ex.from_portable("Ana.", blob)  # offsets past the end of this text
    # Forms are stored one per line; a form with a line break (which the tokenizer never makes) is not stored.
    compact = ex.compact(NOTES[0])
    odd = compact.forms.copy()
    odd[0] = ex._form_id("Ana\nGil")
    with pytest.raises(ValueError, match="line break"):
        ex.portable(CompactFeatures(compact.offsets, compact.sentences, odd, compact.left, compact.right,
                                    compact.context_lengths, compact.context))


def test_a_shard_read_at_once_gives_each_documents_features_and_skips_refused_bytes():
    writer = FeatureExtractor()
    texts = NOTES + many_bigrams(2, seed=6)
    items = [(text, writer.portable(writer.compact(text))) for text in texts]
    items.insert(2, (texts[0], b"written by older features"))
    reader = FeatureExtractor()
    read = reader.from_portable_many(items)
    assert read[2] is None and all(compact is not None for k, compact in enumerate(read) if k != 2)
    together = [reader.assemble(text, compact) for (text, _), compact in zip(items, read) if compact is not None]
    assert [token_rows(f) for f in together] == [token_rows(FeatureExtractor().extract(text)) for text in texts]


def test_a_fresh_cache_reads_what_another_process_stored_instead_of_featurizing_it(monkeypatch):
    store = MemoryStore()
    first = FeatureCache(shared=store)
    extracted = first.get_many(FeatureExtractor(), NOTES)
    assert set(store.stored) == set(NOTES) and store.puts == 1 and first.shared_hits == 0
    first.get_many(get_extractor(), NOTES[:2])  # another extractor (configuration): read, not written again
    assert first.shared_hits == 2 and store.puts == 1

    import learning.core.features as features

    def no_tokenizing(text):
        raise AssertionError("tokenized again")

    monkeypatch.setattr(features, "tokenize", no_tokenizing)
    fresh = FeatureCache(shared=store)
    reader = FeatureExtractor()
    read = fresh.get_many(reader, NOTES, keep=True)
    assert fresh.shared_hits == len(NOTES) and store.puts == 1
    assert [token_rows(f) for f in read] == [token_rows(f) for f in extracted]
    # Held now: asked again, nothing is read from the store.
    hits = fresh.shared_hits
    assert fresh.get(reader, NOTES[0]) is read[0]
    assert fresh.shared_hits == hits


def test_stored_bytes_of_an_older_layout_are_extracted_again_and_replaced():
    store = MemoryStore()
    store.stored[NOTES[0]] = b"written by older features"
    cache = FeatureCache(shared=store)
    feats = cache.get(FeatureExtractor(), NOTES[0])
    assert cache.shared_hits == 0 and store.puts == 1
    assert token_rows(feats) == token_rows(FeatureExtractor().extract(NOTES[0]))
    assert FeatureExtractor().from_portable(NOTES[0], store.stored[NOTES[0]]).n_tokens == feats.n_tokens


def test_tokens_inside_parentheses_carry_their_comma_separated_slot_on_their_line():
    text = "Gentamicina (Gevramycin 40 mg, Schering-Plough, Madrid; España, UE) y (Lilly)\nsin cambios)."
    feats = FeatureExtractor().extract(text)
    marks = [(tok.text, sorted(a for a in feats.token_attributes(t) if a.startswith("par:")))
             for t, tok in enumerate(feats.tokens)]
    inside = {text: attrs_ for text, attrs_ in marks if attrs_}
    assert inside["Gevramycin"] == inside["mg"] == ["par:0", "par:in"]
    assert inside["Plough"] == ["par:1", "par:in"] and inside["Madrid"] == ["par:2", "par:in"]
    assert inside["España"] == inside["UE"] == ["par:3+", "par:in"]
    assert inside["Lilly"] == ["par:0", "par:in"]  # a new parenthesis starts at its first slot
    # The parentheses and separators themselves, the words outside and the next line are not marked.
    assert {text for text, _ in marks} - set(inside) == {"Gentamicina", "(", ")", ",", ";", "y", "sin", "cambios", "."}


# A vocabulary shared between processes (FeatureExtractor.vocabulary_snapshot) ---------------------------

def test_a_fresh_extractor_that_adopts_a_snapshot_reads_stored_features_with_the_writers_ids():
    writer = FeatureExtractor(scope="7")
    texts = NOTES + many_bigrams(2, seed=2)
    blobs = [writer.portable(writer.compact(text)) for text in texts]
    snapshot = writer.vocabulary_snapshot()

    reader = FeatureExtractor(scope="7")
    assert reader.fresh and reader.adopt_vocabulary(snapshot) and not reader.fresh
    assert reader.vocabulary.strings == writer.vocabulary.strings and reader.n_forms == writer.n_forms
    for text, blob in zip(texts, blobs):
        read = reader.assemble(text, reader.from_portable(text, blob))
        written = writer.assemble(text, writer.from_portable(text, blob))
        assert np.array_equal(read.indices, written.indices) and np.array_equal(read.indptr, written.indptr)
        assert token_rows(read) == token_rows(FeatureExtractor().extract(text))
    assert len(reader.vocabulary) == len(writer.vocabulary)  # nothing was worked out again
    # What it learns afterwards it learns as any extractor does.
    new_text = "Bilbao, 3 de mayo: la paciente Zuriñe Etxeberria acude a consulta."
    assert token_rows(reader.extract(new_text)) == token_rows(FeatureExtractor().extract(new_text))
    # An extractor that has read something keeps its own ids.
    assert not reader.adopt_vocabulary(snapshot)


def test_a_snapshot_of_another_layout_or_that_does_not_hold_together_is_refused():
    import struct
    import zlib

    writer = FeatureExtractor()
    writer.extract(NOTES[0])
    data = zlib.decompress(writer.vocabulary_snapshot())
    header = struct.Struct("<I5I")
    magic, n_strings, n_forms, n_lower, n_bigrams, n_values = header.unpack_from(data)
    body = data[header.size:]
    layouts = [
        header.pack(12345, n_strings, n_forms, n_lower, n_bigrams, n_values) + body,  # older features
        header.pack(magic, n_strings + 1, n_forms, n_lower, n_bigrams, n_values) + body,  # a string missing
        header.pack(magic, n_strings, n_forms, n_lower, n_bigrams, n_values + 1) + body,  # tables that don't add up
        header.pack(magic, n_strings, n_forms, n_lower, n_bigrams, n_values) + body[:-40],  # cut short
    ]
    # An attribute id past the last string.
    tables = np.frombuffer(body, dtype=np.int32, count=5 * (n_forms + 2) + n_values).copy()
    tables[5 * (n_forms + 2)] = n_strings
    layouts.append(header.pack(magic, n_strings, n_forms, n_lower, n_bigrams, n_values) + tables.tobytes()
                   + body[tables.nbytes:])
    for blob in [b"", b"not a vocabulary"] + [zlib.compress(layout, 1) for layout in layouts]:
        reader = FeatureExtractor()
        with pytest.raises(ValueError):
            reader.adopt_vocabulary(blob)
        assert reader.fresh  # nothing of it taken
    # A text with a NUL character cannot be shared this way: no snapshot rather than a wrong one.
    odd = FeatureExtractor()
    odd.extract("a\x00b c")
    assert odd.vocabulary_snapshot() is None


def test_a_scoped_extractor_shares_its_vocabulary_and_a_fresh_process_adopts_it_instead_of_working_it_out(
        monkeypatch):
    store = MemoryStore()
    first = FeatureCache(shared=store)
    first.SHARE_MIN_FORMS = 10
    texts = NOTES + many_bigrams(2, seed=3)
    written = first.get_many(FeatureExtractor(scope="3"), texts)
    assert list(store.vocabularies) == [(FeatureExtractor(scope="3").key, "3")]
    first.get_many(FeatureExtractor(), texts[:1])  # an extractor of any documents shares no vocabulary
    assert len(store.vocabularies) == 1

    def worked_out(self, text):
        raise AssertionError(f"{text!r} worked out again")

    monkeypatch.setattr(FeatureExtractor, "lexical_attributes", worked_out)
    fresh = FeatureCache(shared=store)  # another process
    read = fresh.get_many(FeatureExtractor(scope="3"), texts)
    assert [token_rows(f) for f in read] == [token_rows(f) for f in written]
    # Another project's extractor finds nothing to adopt: it works its forms out.
    with pytest.raises(AssertionError, match="worked out again"):
        FeatureCache(shared=store).get_many(FeatureExtractor(scope="4"), texts[:1])


def test_a_vocabulary_is_shared_again_only_once_it_has_grown_by_a_quarter():
    store = MemoryStore()
    cache = FeatureCache(shared=store)
    cache.SHARE_MIN_FORMS = 10
    ex = FeatureExtractor(scope="5")
    texts = many_bigrams(1, seed=4) + NOTES
    cache.get_many(ex, texts[:1])
    shared_forms = store.vocabularies[(ex.key, "5")][0]
    assert shared_forms == ex.n_forms > 100
    cache.get_many(ex, texts[1:2])  # a few forms more: not shared again
    assert ex.n_forms > shared_forms and store.vocabularies[(ex.key, "5")][0] == shared_forms
