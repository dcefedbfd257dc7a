"""Importing documents, for the project's leads and admins: the upload form, the preview of what an upload
holds (imported only once confirmed), and the progress page of an upload too large for a web request (a
worker imports it)."""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from annotator.access import USER_INPUT_ERRORS
from annotator.forms import ImportForm
from annotator.import_forms import ImportConfirmForm
from annotator.models import ImportJob
from annotator.permissions import managed_project
from annotator.schemas import LabelError
from annotator.services.import_preview import (
    LabelsUndecided, PreviewNotFound, cancel_preview, confirm_import, import_preview, stage_preview,
)
from annotator.tasks import enqueue_import


@require_http_methods(["GET", "POST"])
def import_upload(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            token = stage_preview(
                project=project, files=form.cleaned_data["files"], fmt=form.cleaned_data["format"],
                evaluation=form.cleaned_data["evaluation"], user=request.user,
                annotated=False if form.cleaned_data["unannotated"] else None,
                evaluation_share=form.evaluation_share(),
            )
        except USER_INPUT_ERRORS as error:
            form.add_error(None, str(error))
        else:
            return redirect("annotator:project-import-preview", project_id=project.pk, token=token)
    status = 400 if request.method == "POST" else 200
    return render(request, "annotator/import.html", {"project": project, "form": form}, status=status)


@require_http_methods(["GET", "POST"])
def import_preview_page(request, project_id: int, token: str):
    project = managed_project(request.user, project_id)
    error = ""
    try:
        if request.method == "POST":
            form = ImportConfirmForm(request.POST)
            if not form.is_valid():
                error = gettext("Choose Import or Cancel.")
            elif form.cancels():
                cancel_preview(project=project, token=token, user=request.user)
                messages.info(request, gettext("Nothing was imported; the upload was deleted."))
                return redirect("annotator:project-import", project_id=project.pk)
            else:
                try:
                    result = confirm_import(project=project, token=token, user=request.user,
                                            add_unknown_labels=form.adds_unknown_labels())
                except (LabelsUndecided, LabelError, *USER_INPUT_ERRORS) as refused:
                    error = str(refused)
                else:
                    return _imported(request, project, result)
        preview = import_preview(project=project, token=token, user=request.user)
    except PreviewNotFound:
        raise Http404("No such upload to import: it was imported, cancelled or has expired.") from None
    return render(request, "annotator/import_preview.html", {"project": project, "preview": preview, "error": error},
                  status=400 if error else 200)


def _imported(request, project, result):
    if isinstance(result, ImportJob):  # too large for this request: a worker imports it
        enqueue_import(result)
        return redirect("annotator:project-import-job", project_id=project.pk, job_id=result.pk)
    imported = gettext("Imported %(created)s documents (%(annotated)s annotated, %(spans)s spans); %(duplicates)s were "
                       "already in the project.") % {"created": result.created, "annotated": result.annotated,
                                                     "spans": result.spans, "duplicates": result.duplicates}
    if result.evaluation:
        imported += " " + gettext("%(evaluation)s of them set aside as the evaluation set.") % {
            "evaluation": result.evaluation}
    messages.success(request, imported)
    return redirect("annotator:project-detail", project_id=project.pk)


@require_GET
def import_job(request, project_id: int, job_id: int):
    project = managed_project(request.user, project_id)
    job = get_object_or_404(ImportJob.objects.filter(project=project), pk=job_id)
    template = "annotator/import_job_status.html" if request.htmx else "annotator/import_job.html"
    return render(request, template, {"project": project, "job": job})
