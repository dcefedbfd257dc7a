"""Records' features shared through PostgreSQL (``learning.services.feature_store``): written once by the
first process that featurizes a record, read by a process that has featurized nothing, deleted with the
record."""
from __future__ import annotations

import pytest

from annotator.models import Document
from annotator.services.imports import import_documents
from corpus.synthetic import generate_notes
from learning.core.features import FeatureCache, FeatureExtractor
from learning.models import StoredFeatures
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
