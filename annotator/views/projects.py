"""HTML pages: thin views over the services and selectors (the REST API calls the same ones)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotator.models import Annotation, AuditEvent
from annotator.permissions import (
    Can, allows, annotations_for, documents_for, project_for, projects_for, role_in,
    visible_project,
)
from annotator.permissions import may_create_projects
from annotator.record_selectors import open_correction
from annotator.selectors import (
    adjudication_queue, document_segments, open_annotation, project_overview, workbench_payload,
)
from annotator.services.audit import record_event
from annotator.services.notify import active_annotators
from annotator.services.queue import next_record, records_waiting
from annotator.views.records import record_table
from annotator.signals import project_page_notes


@require_GET
def project_list(request):
    projects = projects_for(user=request.user).order_by("name")
    rows = [{"project": project, "role": role_in(user=request.user, project=project),
             "overview": project_overview(project=project)} for project in projects]
    return render(request, "annotator/project_list.html", {
        "rows": rows, "can_create_project": may_create_projects(request.user),
    })


@require_GET
def project_detail(request, project_id: int):
    project = visible_project(request.user, project_id)
    template = "annotator/_document_table.html" if request.htmx else "annotator/project_detail.html"
    manages = allows(user=request.user, project=project, action=Can.MANAGE)
    sees_people = allows(user=request.user, project=project, action=Can.SEE_PEOPLE)
    context = {
        "project": project, **record_table(request, project=project),
        "overview": project_overview(project=project),
        "role": role_in(user=request.user, project=project),
        "can_manage": manages,
        "can_see_people": sees_people,
        "adjudication_waiting": (adjudication_queue(project=project, user=request.user).count()
                                 if allows(user=request.user, project=project, action=Can.ADJUDICATE) else None),
        "members": (project.memberships.select_related("user").order_by("role", "user__username")
                    if sees_people else []),
        # Who is annotating what, for leads; the page keeps it current over the project's websocket.
        "presence": active_annotators(project_id=project.pk) if sees_people and not request.htmx else [],
        "notes": [] if request.htmx else project_page_notes(project=project),
    }
    return render(request, template, context)


@require_GET
def document_detail(request, project_id: int, document_id: int):
    """A record and its latest submitted annotation that the user may read (for an annotator, their own)."""
    project = visible_project(request.user, project_id)
    document = get_object_or_404(documents_for(user=request.user, project=project), pk=document_id)
    annotation = (
        annotations_for(user=request.user, project=project)
        .filter(document=document, state=Annotation.State.SUBMITTED)
        .order_by("-submitted_at", "-id").first()
    )
    record_event(user=request.user, action=AuditEvent.Action.VIEW, project=project, obj=document,
                 request=request)
    spans = annotation.spans if annotation else []
    return render(request, "annotator/document_detail.html", {
        "project": project, "document": document, "annotation": annotation,
        "segments": document_segments(text=document.text, spans=spans),
    })


@require_http_methods(["GET", "POST"])
def annotate_next(request, project_id: int):
    """GET: the user's open record, or a button asking for the next one; POST: hand out the next record.
    Only a POST claims a record (a link preview or a prefetch must not)."""
    project = project_for(request.user, project_id, Can.ANNOTATE)
    if request.method == "GET":
        annotation = open_annotation(project=project, user=request.user)
        if annotation is not None:
            return redirect("annotator:annotate", project_id=project.pk, document_id=annotation.document_id)
        if not records_waiting(project=project, user=request.user):
            return render(request, "annotator/pool_empty.html", {"project": project})
        return render(request, "annotator/annotate_start.html", {"project": project})
    handout = next_record(project=project, user=request.user)
    if handout is None:
        return render(request, "annotator/pool_empty.html", {"project": project})
    return redirect("annotator:annotate", project_id=project.pk, document_id=handout.assignment.document_id)


@require_GET
def annotate(request, project_id: int, document_id: int):
    project = project_for(request.user, project_id, Can.ANNOTATE)
    annotation = get_object_or_404(
        Annotation.objects.select_related("document__project"),
        document__project=project, document_id=document_id, annotator=request.user,
    )
    record_event(user=request.user, action=AuditEvent.Action.VIEW, project=project, obj=annotation.document,
                 request=request)
    return render(request, "annotator/workbench.html", {
        "project": project, "document": annotation.document, "annotation": annotation,
        "payload": workbench_payload(annotation=annotation),
        "correction": open_correction(annotation=annotation),
    })
