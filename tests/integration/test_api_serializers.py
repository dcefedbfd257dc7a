"""The read-only API serializers share their fields between instances and threads: what they write out is what
DRF's own per-instance fields write out, and the fields are built once per class."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework import serializers as drf

from annotator.api import serializers
from annotator.models import Annotation, Document
from annotator.services.imports import import_documents
from corpus.types import Document as CorpusDocument
from corpus.types import Span

SHARED = (serializers.DocumentSerializer, serializers.DocumentListSerializer, serializers.AnnotationSerializer)


def _drf_own(serializer_class):
    """The same serializer with DRF's own readable fields: built for each instance."""
    return type(f"PerInstance{serializer_class.__name__}", (serializer_class,),
                {"_readable_fields": drf.Serializer._readable_fields})


@pytest.fixture
def records(projects):
    project = projects["A"]
    text = "Paciente: Blanca Ramos. Ingresa el 3 de marzo de 2019 en Madrid."
    import_documents(project=project, annotated=True, documents=[
        CorpusDocument(text=text, name="r1", spans=[Span(10, 22, "NOMBRE_SUJETO_ASISTENCIA")]),
        CorpusDocument(text=text + " Alta.", name="r2", spans=[]),
    ])
    return list(Document.objects.filter(project=project).order_by("id"))


@pytest.mark.django_db
def test_what_the_shared_fields_write_out_is_what_drfs_own_fields_do(records):
    annotations = list(Annotation.objects.filter(document__in=records).select_related("annotator").order_by("id"))
    assert annotations and any(a.spans for a in annotations)
    for serializer_class in SHARED:
        rows = annotations if serializer_class is serializers.AnnotationSerializer else records
        shared = serializer_class(rows, many=True).data
        assert shared == _drf_own(serializer_class)(rows, many=True).data
        assert shared and set(shared[0]) == set(serializer_class.Meta.fields)


@pytest.mark.django_db
def test_the_fields_are_built_once_per_class_and_serve_every_thread(records, monkeypatch):
    document = records[0]
    expected = _drf_own(serializers.DocumentSerializer)(document).data
    serializers.DocumentSerializer(document).data  # noqa: B018 - builds the shared fields
    built = []
    original = serializers.DocumentSerializer.get_fields
    monkeypatch.setattr(serializers.DocumentSerializer, "get_fields",
                        lambda self: built.append(1) or original(self))
    with ThreadPoolExecutor(4) as pool:
        written = list(pool.map(lambda _: serializers.DocumentSerializer(document).data, range(40)))
    assert built == []
    assert all(one == expected for one in written)
    # A subclass builds its own (its fields may differ).
    sub = type("Sub", (serializers.DocumentSerializer,), {})
    assert sub(document).data == expected and "_shared_readable_fields" in sub.__dict__
