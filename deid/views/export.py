"""The export page, for the project's leads and admins: the gold standard as annotated or de-identified, in
any format, with or without the evaluation set, of the records' statuses chosen. An export of more than
``DEIDLOOP_SYNC_EXPORT_RECORDS`` records is made by a worker, on a page that follows it and offers the
download once made; a smaller one is made in the request."""
from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from django.views.decorators.http import require_http_methods

from annotator.permissions import managed_project
from corpus.formats.errors import FormatError
from deid.forms.export import ExportForm
from deid.selectors.export import FORMAT_NAMES, STATUS_NAMES, gold_by_status
from deid.services.export_jobs import (
    ExportJobMissing, export_job, is_long_export, open_export_result, start_export_job,
)
from deid.services.exports import export_archive
from deid.services.policy import DeidError
from deid.tasks import enqueue_export


@require_http_methods(["GET", "POST"])
def export_download(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ExportForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        choice = {"fmt": form.cleaned_data["format"], "conceal": form.cleaned_data["conceal"],
                  "include_evaluation": form.cleaned_data["include_evaluation"],
                  "statuses": form.cleaned_data["statuses"]}
        if is_long_export(project=project, include_evaluation=choice["include_evaluation"],
                          statuses=choice["statuses"]):
            job = start_export_job(project=project, user=request.user, **choice)
            enqueue_export(job)
            return redirect("deid:export-job", project_id=project.pk, token=job.token)
        try:
            content, filename = export_archive(project=project, user=request.user, **choice)
        except (DeidError, FormatError) as error:
            form.add_error(None, str(error))
        else:
            response = HttpResponse(content, content_type="application/octet-stream")
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
    counts = [{**row, "status": str(STATUS_NAMES[row["status"]]).lower()} for row in gold_by_status(project=project)]
    status = 400 if request.method == "POST" else 200
    return render(request, "deid/export.html", {
        "project": project, "form": form, "counts": counts, "sync_records": settings.DEIDLOOP_SYNC_EXPORT_RECORDS,
    }, status=status)


def _job(request, project, token: str):
    try:
        return export_job(project=project, token=token, user=request.user)
    except ExportJobMissing:
        raise Http404("No such export: it was asked for by someone else, or never.") from None


@require_GET
def export_job_page(request, project_id: int, token: str):
    project = managed_project(request.user, project_id)
    job = _job(request, project, token)
    template = "deid/export_job_status.html" if request.htmx else "deid/export_job.html"
    return render(request, template, {"project": project, "job": job, "format_name": FORMAT_NAMES[job.format]})


@require_GET
def export_job_download(request, project_id: int, token: str):
    project = managed_project(request.user, project_id)
    job = _job(request, project, token)
    handle = open_export_result(project=project, job=job, user=request.user, request=request)
    if handle is None:
        raise Http404("The export is not made yet.")
    return FileResponse(handle, as_attachment=True, filename=job.filename, content_type="application/octet-stream")
