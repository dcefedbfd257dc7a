"""The export page, for the project's leads and admins: the gold standard as annotated or de-identified."""
from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotator.permissions import managed_project
from corpus.formats.errors import FormatError
from deid.forms.export import ExportForm
from deid.services.exports import export_archive
from deid.services.policy import DeidError


@require_http_methods(["GET", "POST"])
def export_download(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = ExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            content, filename = export_archive(
                project=project, fmt=form.cleaned_data["format"], conceal=form.cleaned_data["conceal"],
                user=request.user, include_evaluation=form.cleaned_data["include_evaluation"],
            )
        except (DeidError, FormatError) as error:
            form.add_error(None, str(error))
        else:
            response = HttpResponse(content, content_type="application/octet-stream")
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
    status = 400 if request.method == "POST" else 200
    return render(request, "deid/export.html", {"project": project, "form": form}, status=status)
