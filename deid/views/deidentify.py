"""De-identifying new text with the project's current model, for its leads and admins: paste or upload, see
the original and the de-identified text side by side; large inputs go to a worker, with a progress page and
a download."""
from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from annotator.permissions import managed_project
from annotator.services.uploads import UploadError
from deid.forms.deidentify import DeidentifyForm
from deid.models import DeidJob
from deid.selectors.deidentify import side_by_side
from deid.services.deidentify import NoModelError, deidentify_text
from deid.services.jobs import create_job, open_result, record_download
from deid.services.policy import DeidError
from deid.tasks import enqueue_deidentify


def _small_text_file(files) -> bool:
    return (len(files) == 1 and (files[0].name or "").lower().endswith(".txt")
            and files[0].size <= settings.DEIDLOOP_SYNC_DEIDENTIFY_BYTES)


@require_http_methods(["GET", "POST"])
def deidentify_page(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = DeidentifyForm(request.POST or None, request.FILES or None)
    context = {"project": project, "form": form}
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            files, text = data["files"], data["text"]
            try:
                too_large = (not _small_text_file(files) if files
                             else len(text.encode("utf-8")) > settings.DEIDLOOP_SYNC_DEIDENTIFY_BYTES)
                if too_large:
                    job = create_job(project=project, user=request.user, policy=data["policy"],
                                     recall_bias=data["recall_bias"], files=files, text=text)
                    enqueue_deidentify(job)
                    return redirect("deid:deidentify-job", project_id=project.pk, job_id=job.pk)
                if files:
                    text = files[0].read().decode("utf-8").removeprefix("\ufeff")
                result, report = deidentify_text(project=project, text=text, policy=data["policy"],
                                                 recall_bias=data["recall_bias"], user=request.user,
                                                 source="page", request=request)
            except NoModelError as error:
                form.add_error(None, str(error))
                status = 409
            except UnicodeDecodeError:
                form.add_error("files", gettext("The file is not UTF-8 text."))
            except (DeidError, UploadError) as error:
                form.add_error(None, str(error))
            else:
                status = 200
                context.update(result=result, report=report, segments=side_by_side(
                    original=text, result=result, review_below=project.review_confidence))
    return render(request, "deid/deidentify.html", context, status=status)


@require_GET
def deidentify_job(request, project_id: int, job_id: int):
    project = managed_project(request.user, project_id)
    job = get_object_or_404(DeidJob.objects.filter(project=project), pk=job_id)
    template = "deid/deidentify_job_status.html" if request.htmx else "deid/deidentify_job.html"
    return render(request, template, {"project": project, "job": job})


@require_GET
def deidentify_download(request, project_id: int, job_id: int):
    project = managed_project(request.user, project_id)
    job = get_object_or_404(DeidJob.objects.filter(project=project), pk=job_id)
    result = open_result(job)
    if result is None:
        raise Http404("the de-identified text is not ready")
    record_download(job=job, user=request.user, request=request)
    return FileResponse(result, as_attachment=True, filename=f"deidentified-{job.pk}.zip",
                        content_type="application/zip")
