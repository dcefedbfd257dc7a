"""Importing documents, for the project's leads and admins: the upload form, and the progress page of an
upload too large for a web request (a worker imports it)."""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotator.access import USER_INPUT_ERRORS
from annotator.forms import ImportForm
from annotator.models import ImportJob
from annotator.permissions import managed_project
from annotator.services.uploads import import_uploaded_files
from annotator.tasks import enqueue_import


@require_http_methods(["GET", "POST"])
def import_upload(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            report = import_uploaded_files(
                project=project, files=form.cleaned_data["files"], fmt=form.cleaned_data["format"],
                evaluation=form.cleaned_data["evaluation"], user=request.user,
                annotated=False if form.cleaned_data["unannotated"] else None,
                evaluation_share=form.evaluation_share(),
            )
        except USER_INPUT_ERRORS as error:
            form.add_error(None, str(error))
        else:
            if isinstance(report, ImportJob):  # too large for this request: a worker imports it
                enqueue_import(report)
                return redirect("annotator:project-import-job", project_id=project.pk, job_id=report.pk)
            set_aside = (f" {report.evaluation} of them set aside as the evaluation set."
                         if form.evaluation_share() else "")
            messages.success(
                request,
                f"Imported {report.created} documents ({report.annotated} annotated, {report.spans} spans); "
                f"{report.duplicates} were already in the project.{set_aside}",
            )
            return redirect("annotator:project-detail", project_id=project.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "annotator/import.html", {"project": project, "form": form}, status=status)



@require_GET
def import_job(request, project_id: int, job_id: int):
    project = managed_project(request.user, project_id)
    job = get_object_or_404(ImportJob.objects.filter(project=project), pk=job_id)
    template = "annotator/import_job_status.html" if request.htmx else "annotator/import_job.html"
    return render(request, template, {"project": project, "job": job})
