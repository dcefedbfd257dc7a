"""The export page, for the project's leads and admins: the gold standard as annotated or de-identified, in
any format, with or without the evaluation set, of the records' statuses chosen. An export is written in the
request: reading and writing a project's gold standard takes seconds."""
from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotator.permissions import managed_project
from corpus.formats.errors import FormatError
from deid.forms.export import ExportForm
from deid.selectors.export import STATUS_NAMES, gold_by_status
from deid.services.exports import export_archive
from deid.services.policy import DeidError


@require_http_methods(["GET", "POST"])
def export_download(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ExportForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            content, filename = export_archive(
                project=project, fmt=form.cleaned_data["format"], conceal=form.cleaned_data["conceal"],
                user=request.user, include_evaluation=form.cleaned_data["include_evaluation"],
                statuses=form.cleaned_data["statuses"],
            )
        except (DeidError, FormatError) as error:
            form.add_error(None, str(error))
        else:
            response = HttpResponse(content, content_type="application/octet-stream")
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
    counts = [{**row, "status": str(STATUS_NAMES[row["status"]]).lower()} for row in gold_by_status(project=project)]
    status = 400 if request.method == "POST" else 200
    return render(request, "deid/export.html", {"project": project, "form": form, "counts": counts}, status=status)
