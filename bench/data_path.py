"""Speed of the data path: import MEDDOCAN train (500 documents, 11,333 spans) through the import service and
export it again, against a per-row ORM reference measured in the same run.

Prints one JSON line. Goal: import <= 1.4 s and export <= 1 s.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from django_env import SHARED, setup_scratch_database


def main() -> None:
    setup_scratch_database()
    from corpus.formats import read_corpus, write_corpus
    from corpus.span_json import write_span
    from annotator.models import Annotation, Document
    from annotator.services.exports import export_corpus
    from annotator.services.imports import content_hash, import_path
    from annotator.services.projects import create_project

    train = SHARED / "meddocan" / "train"
    out = Path(tempfile.mkdtemp(prefix="deidloop-bench-"))
    try:
        project = create_project(name="bench", schema="MEDDOCAN")
        started = time.perf_counter()
        report = import_path(project=project, path=train, fmt="brat")
        import_seconds = time.perf_counter() - started

        started = time.perf_counter()
        summary = export_corpus(project=project, fmt="brat", out=out / "brat")
        export_seconds = time.perf_counter() - started
        round_trip_equal = {(d.name, d.text, d.spans) for d in read_corpus(train, "brat")} == {
            (d.name, d.text, d.spans) for d in read_corpus(out / "brat", "brat")}

        # Reference: the same work row by row through the ORM (one INSERT per document and annotation,
        # one SELECT per document on export), as a straightforward implementation would do it.
        reference = create_project(name="reference", schema="MEDDOCAN")
        started = time.perf_counter()
        for document in read_corpus(train, "brat"):
            row = Document.objects.create(
                project=reference, external_id=document.name, text=document.text,
                content_hash=content_hash(document.text),
                status=Document.Status.SUBMITTED,
            )
            Annotation.objects.create(
                document=row, source=Annotation.Source.IMPORT, state=Annotation.State.SUBMITTED,
                spans=[write_span(s, origin="human") for s in document.spans],
            )
        reference_import_seconds = time.perf_counter() - started
        started = time.perf_counter()
        from corpus.span_json import gold_spans
        from corpus.types import Document as CorpusDocument

        documents = []
        for row in Document.objects.filter(project=reference).order_by("id"):
            annotation = row.annotations.filter(state=Annotation.State.SUBMITTED).latest("id")
            documents.append(CorpusDocument(text=row.text, name=row.external_id,
                                            spans=gold_spans(annotation.spans)))
        write_corpus(documents, out / "reference", "brat")
        reference_export_seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(out, ignore_errors=True)

    print(json.dumps({
        "benchmark": "data_path",
        "corpus": "meddocan/train",
        "documents": report.created,
        "spans": report.spans,
        "import_seconds": round(import_seconds, 3),
        "export_seconds": round(export_seconds, 3),
        "exported_spans": summary.spans,
        "round_trip_equal": round_trip_equal,
        "reference_import_seconds": round(reference_import_seconds, 3),
        "reference_export_seconds": round(reference_export_seconds, 3),
        "import_speedup_vs_reference": round(reference_import_seconds / import_seconds, 2),
        "export_speedup_vs_reference": round(reference_export_seconds / export_seconds, 2),
        "goal_import_seconds": 1.4,
        "goal_export_seconds": 1.0,
    }))


if __name__ == "__main__":
    main()
