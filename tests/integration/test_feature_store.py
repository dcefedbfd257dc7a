"""Records' features shared through PostgreSQL (``learning.services.feature_store``): written once by the
first process that featurizes a record, read by a process that has featurized nothing, deleted with the
record."""
from __future__ import annotations

import pytest

from annotator.models import Document
from annotator.services.imports import import_documents
from corpus.synthetic import generate_notes
from learning.core.features import FeatureCache, FeatureExtractor
from learning.models import StoredFeatures, StoredVocabulary
from learning.services.feature_store import DocumentFeatureStore

pytestmark = pytest.mark.django_db


def rows(feats) -> list:
    return [((t.text, t.start, t.end), feats.token_attributes(i)) for i, t in enumerate(feats.tokens)]


@pytest.fixture
def notes(projects):
    notes = generate_notes(6, seed=3)
    import_documents(project=projects["A"], documents=notes, annotated=False)
    return [note.text for note in notes]


def test_a_process_that_has_featurized_nothing_reads_what_another_stored(notes):
    first = FeatureCache(shared=DocumentFeatureStore())
    extracted = first.get_many(FeatureExtractor(), notes)
    assert first.shared_hits == 0
    assert StoredFeatures.objects.count() == len(notes)

    fresh = FeatureCache(shared=DocumentFeatureStore())  # another worker process: its own extractor
    read = fresh.get_many(FeatureExtractor(), notes)
    assert fresh.shared_hits == len(notes)
    assert [rows(f) for f in read] == [rows(f) for f in extracted]


def test_features_go_with_their_document_and_a_text_of_no_document_is_not_stored(projects, notes):
    store = DocumentFeatureStore()
    ex = FeatureExtractor()
    blob = ex.portable(ex.compact(notes[0]))
    import_documents(project=projects["B"], documents=generate_notes(1, seed=3), annotated=False)  # same text
    sentence = notes[0].split("\n")[0]
    store.put_many([(notes[0], blob), (sentence, ex.portable(ex.compact(sentence)))])
    assert store.get_many([notes[0], sentence, notes[1]]) == [blob, None, None]
    assert StoredFeatures.objects.count() == 2  # one row for each document of that text, in A and in B

    Document.objects.filter(project=projects["A"], text=notes[0]).delete()
    assert StoredFeatures.objects.count() == 1 and store.get_many([notes[0]]) == [blob]
    projects["B"].delete()
    assert not StoredFeatures.objects.exists() and store.get_many([notes[0]]) == [None]


def test_features_stored_by_older_code_are_extracted_again_and_replaced(notes):
    document = Document.objects.get(text=notes[0])
    StoredFeatures.objects.create(document=document, content_hash=document.content_hash, data=b"older layout")
    cache = FeatureCache(shared=DocumentFeatureStore())
    feats = cache.get(FeatureExtractor(), notes[0])
    assert cache.shared_hits == 0
    data = bytes(StoredFeatures.objects.get(document=document).data)
    assert data != b"older layout"
    reader = FeatureExtractor()
    assert rows(reader.assemble(notes[0], reader.from_portable(notes[0], data))) == rows(feats)


def test_a_projects_vocabulary_is_replaced_only_by_a_larger_one_and_goes_with_the_project(projects, notes):
    store = DocumentFeatureStore()
    scope = str(projects["A"].pk)
    small, large = FeatureExtractor(scope=scope), FeatureExtractor(scope=scope)
    small.extract(notes[0])
    for text in notes:
        large.extract(text)
    store.put_vocabulary(small.key, scope, small.n_forms, small.vocabulary_snapshot())
    assert store.get_vocabulary(small.key, scope) == small.vocabulary_snapshot()
    assert store.get_vocabulary(small.key, str(projects["B"].pk)) is None

    store.put_vocabulary(large.key, scope, large.n_forms, large.vocabulary_snapshot())
    store.put_vocabulary(small.key, scope, small.n_forms, small.vocabulary_snapshot())  # knows less: kept out
    adopter = FeatureExtractor(scope=scope)
    assert adopter.adopt_vocabulary(store.get_vocabulary(large.key, scope)) and adopter.n_forms == large.n_forms

    # A vocabulary of another configuration (gazetteers, features) replaces the project's older ones.
    other = FeatureExtractor({"names": ["Ana"]}, scope=scope)
    other.extract(notes[0])
    store.put_vocabulary(other.key, scope, other.n_forms, other.vocabulary_snapshot())
    assert list(StoredVocabulary.objects.values_list("extractor_key", flat=True)) == [other.key]
    projects["A"].delete()
    assert not StoredVocabulary.objects.exists()
    store.put_vocabulary(other.key, scope, other.n_forms, other.vocabulary_snapshot())  # the project is gone
    assert not StoredVocabulary.objects.exists()


def test_a_worker_process_starting_on_a_project_adopts_the_vocabulary_another_shared(projects, notes):
    scope = str(projects["A"].pk)
    first = FeatureCache(shared=DocumentFeatureStore())
    first.SHARE_MIN_FORMS = 10
    written = first.get_many(FeatureExtractor(scope=scope), notes)
    assert StoredVocabulary.objects.filter(project=projects["A"]).count() == 1

    reader = FeatureExtractor(scope=scope)
    read = FeatureCache(shared=DocumentFeatureStore()).get_many(reader, notes)
    assert [rows(f) for f in read] == [rows(f) for f in written]
    assert reader.n_forms == StoredVocabulary.objects.get(project=projects["A"]).forms


def test_a_projects_retrain_reads_its_documents_with_its_own_vocabulary_and_shares_it(projects, monkeypatch):
    from learning.core import features
    from learning.selectors.loop import loop_tagger, project_settings
    from learning.services.retrain import train_and_rank

    project = projects["A"]
    project.gazetteers = {"HOSPITAL": ["Hospital La Paz"]}
    project.save()
    notes = generate_notes(30, seed=5)
    import_documents(project=project, documents=notes[:20], annotated=True)
    import_documents(project=project, documents=notes[20:], annotated=False)
    tagger = loop_tagger(project)[2]()
    assert (tagger.vocabulary_scope, tagger.gazetteers) == (str(project.pk), project.gazetteers)
    assert project_settings(project, "flair") == {}

    monkeypatch.setattr(features.DEFAULT_CACHE, "shared", DocumentFeatureStore())
    monkeypatch.setattr(FeatureCache, "SHARE_MIN_FORMS", 10)
    assert train_and_rank(project=project) is not None
    extractor = tagger._extractor()
    stored = StoredVocabulary.objects.get(project=project)
    assert stored.extractor_key == extractor.key != FeatureExtractor().key and 0 < stored.forms <= extractor.n_forms
    assert not StoredVocabulary.objects.exclude(project=project).exists()
