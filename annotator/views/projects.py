"""HTML pages: thin views over the services and selectors (the REST API calls the same ones)."""
from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotator.access import USER_INPUT_ERRORS, managed_project, visible_project
from annotator.forms import ExportForm, ImportForm
from annotator.models import Annotation, AuditEvent, Document
from annotator.selectors import (
    can_manage, document_segments, documents_for, project_overview, projects_for, role_in, workbench_payload,
)
from annotator.services.audit import record_event
from annotator.services.exports import export_archive
from annotator.services.notify import active_annotators
from annotator.services.queue import next_record
from annotator.services.uploads import import_uploaded_files
from annotator.signals import project_page_notes


def project_list(request):
    projects = projects_for(user=request.user).order_by("name")
    rows = [{"project": project, "role": role_in(user=request.user, project=project),
             "overview": project_overview(project=project)} for project in projects]
    return render(request, "annotator/project_list.html", {"rows": rows})


def project_detail(request, project_id: int):
    project = visible_project(request.user, project_id)
    documents = documents_for(user=request.user, project=project).defer("text", "meta").order_by("id")
    role_filter = request.GET.get("role")
    if role_filter in Document.Role.values:
        documents = documents.filter(role=role_filter)
    page = Paginator(documents, 50).get_page(request.GET.get("page"))
    template = "annotator/_document_table.html" if request.htmx else "annotator/project_detail.html"
    manages = can_manage(user=request.user, project=project)
    context = {
        "project": project, "page": page, "role_filter": role_filter,
        "overview": project_overview(project=project),
        "role": role_in(user=request.user, project=project),
        "can_manage": manages,
        "members": project.memberships.select_related("user").order_by("role", "user__username"),
        # Who is annotating what, for leads; the page keeps it current over the project's websocket.
        "presence": active_annotators(project_id=project.pk) if manages and not request.htmx else [],
        "notes": [] if request.htmx else project_page_notes(project=project),
    }
    return render(request, template, context)


def document_detail(request, project_id: int, document_id: int):
    project = visible_project(request.user, project_id)
    document = get_object_or_404(documents_for(user=request.user, project=project), pk=document_id)
    annotation = (
        Annotation.objects.filter(document=document, state=Annotation.State.SUBMITTED)
        .order_by("-submitted_at", "-id").first()
    )
    record_event(user=request.user, action=AuditEvent.Action.VIEW, project=project, obj=document)
    spans = annotation.spans if annotation else []
    return render(request, "annotator/document_detail.html", {
        "project": project, "document": document, "annotation": annotation,
        "segments": document_segments(text=document.text, spans=spans),
    })


def import_upload(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            report = import_uploaded_files(
                project=project, files=form.cleaned_data["files"], fmt=form.cleaned_data["format"],
                evaluation=form.cleaned_data["evaluation"], user=request.user,
                annotated=False if form.cleaned_data["unannotated"] else None,
            )
        except USER_INPUT_ERRORS as error:
            form.add_error(None, str(error))
        else:
            messages.success(
                request,
                f"Imported {report.created} documents ({report.annotated} annotated, {report.spans} spans); "
                f"{report.duplicates} were already in the project.",
            )
            return redirect("annotator:project-detail", project_id=project.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "annotator/import.html", {"project": project, "form": form}, status=status)


def export_download(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        content, filename = export_archive(
            project=project, fmt=form.cleaned_data["format"], user=request.user,
            include_evaluation=form.cleaned_data["include_evaluation"],
        )
        response = HttpResponse(content, content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    return render(request, "annotator/export.html", {"project": project, "form": form})


def annotate_next(request, project_id: int):
    project = visible_project(request.user, project_id)
    handout = next_record(project=project, user=request.user)
    if handout is None:
        return render(request, "annotator/pool_empty.html", {"project": project})
    return redirect("annotator:annotate", project_id=project.pk, document_id=handout.assignment.document_id)


def annotate(request, project_id: int, document_id: int):
    project = visible_project(request.user, project_id)
    annotation = get_object_or_404(
        Annotation.objects.select_related("document__project"),
        document__project=project, document_id=document_id, annotator=request.user,
    )
    record_event(user=request.user, action=AuditEvent.Action.VIEW, project=project, obj=annotation.document)
    return render(request, "annotator/workbench.html", {
        "project": project, "document": annotation.document, "annotation": annotation,
        "payload": workbench_payload(annotation=annotation),
    })
