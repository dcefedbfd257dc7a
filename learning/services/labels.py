"""The learning app's part in renaming a project's label: its silver sentences carry labelled spans too."""
from __future__ import annotations

from annotator.models import Project
from corpus.span_json import count_label, relabelled
from learning.models import ModelVersion, SilverSentence


def silver_label_usage(*, project: Project, label: str) -> tuple[int, set[int]]:
    """The project's silver spans labelled ``label``, and their records."""
    spans, records = 0, set()
    rows = SilverSentence.objects.filter(project=project, spans__contains=[{"label": label}])
    for document_id, items in rows.values_list("document_id", "spans"):
        spans += count_label(items, label)
        records.add(document_id)
    return spans, records


def rename_silver_label(*, project: Project, old: str, new: str) -> tuple[int, set[int]]:
    """Rename ``old`` to ``new`` in the project's silver sentences (in the caller's transaction); the spans
    and records changed."""
    spans, records, changed_rows = 0, set(), []
    rows = (SilverSentence.objects.select_for_update()
            .filter(project=project, spans__contains=[{"label": old}]).only("id", "document_id", "spans"))
    for row in rows:
        row.spans, changed = relabelled(row.spans, old=old, new=new)
        spans += changed
        records.add(row.document_id)
        changed_rows.append(row)
    SilverSentence.objects.bulk_update(changed_rows, ["spans"], batch_size=500)
    return spans, records


def has_current_model(*, project: Project) -> bool:
    return ModelVersion.objects.filter(project=project, is_current=True).exists()
