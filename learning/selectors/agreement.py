"""The agreement page's figures: how far the annotators of double-annotated records agree, over the project,
per PHI label, per record and per day (the formulas are in ``learning.core.agreement``)."""
from __future__ import annotations

from annotator.models import Project
from annotator.selectors import double_annotated
from corpus.text import tokenize
from learning.core.agreement import RecordSubmissions, agreement


def project_agreement(*, project: Project) -> dict:
    """``summary`` (the project overall and per label), ``records`` (each record's figures, in the order they
    were submitted) and ``days`` (the records whose latest submission fell on each day)."""
    rows = double_annotated(project=project)
    records = [RecordSubmissions(row["text"], row["spans"], tokenize(row["text"])) for row in rows]
    days = [row["submitted_at"].date().isoformat() if row["submitted_at"] else None for row in rows]
    figures = agreement(records, labels=project.labels, groups=days)
    per_record = [
        {"id": row["id"], "external_id": row["external_id"], "annotators": sorted(row["spans"]),
         "submitted_at": row["submitted_at"], **own}
        for row, own in zip(rows, figures.pop("per_record"))
    ]
    per_day = [{"day": day, **values} for day, values in sorted(figures.pop("per_group").items()) if day]
    return {"summary": figures, "records": per_record, "days": per_day}
