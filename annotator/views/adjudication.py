"""Adjudication pages: the queue of records whose annotators disagree, and a record to decide by keyboard.

The record page reads and writes through the REST API (``annotator.api.adjudication``), as the workbench does;
these views check the role and give the page its first payload."""
from __future__ import annotations

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotator.models import AuditEvent
from annotator.permissions import Can, adjudicable_document, project_for
from annotator.selectors import adjudication_payload, adjudication_queue
from annotator.services.audit import record_event

QUEUE_SHOWN = 200


@require_GET
def adjudication_queue_page(request, project_id: int):
    project = project_for(request.user, project_id, Can.ADJUDICATE)
    queue = adjudication_queue(project=project, user=request.user)
    return render(request, "annotator/adjudication_queue.html", {
        "project": project, "queue": queue[:QUEUE_SHOWN], "count": queue.count(), "shown": QUEUE_SHOWN,
    })


@require_GET
def adjudicate(request, project_id: int, document_id: int):
    document = adjudicable_document(request.user, project_id, document_id)
    record_event(user=request.user, action=AuditEvent.Action.VIEW, project=document.project, obj=document,
                 request=request, detail={"adjudication": True})
    payload = adjudication_payload(document=document, user=request.user)
    return render(request, "annotator/adjudicate.html", {
        "project": document.project, "document": document, "payload": payload,
        "api_url": reverse("project-adjudication", args=[document.project_id, document.pk]),
    })
