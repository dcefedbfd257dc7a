from __future__ import annotations

from annotator.models import AuditEvent, Project


def record_event(
    *, user, action: str, project: Project | None = None, obj=None, detail: dict | None = None
) -> AuditEvent:
    return AuditEvent.objects.create(
        user=user if getattr(user, "is_authenticated", False) else None,
        action=action,
        project=project,
        object_type=type(obj).__name__ if obj is not None else "",
        object_id=str(getattr(obj, "pk", "") or "") if obj is not None else "",
        detail=detail or {},
    )
