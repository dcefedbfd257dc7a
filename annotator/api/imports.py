"""Importing documents over REST: the upload, and the job an upload too large for a web request becomes."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.access import USER_INPUT_ERRORS
from annotator.api import serializers
from annotator.api.serializers import ImportJobSerializer
from annotator.models import ImportJob
from annotator.permissions import managed_project
from annotator.services.uploads import import_uploaded_files
from annotator.tasks import enqueue_import


def job_payload(request, job: ImportJob) -> dict:
    return ImportJobSerializer(job, context={"request": request}).data


class ImportJobView(APIView):
    """A large upload's import: queued, running (files read so far), done (its report) or failed (why)."""

    @extend_schema(responses={200: ImportJobSerializer})
    def get(self, request, project_id: int, job_id: int):
        project = managed_project(request.user, project_id)
        job = get_object_or_404(ImportJob.objects.filter(project=project), pk=job_id)
        return Response(job_payload(request, job))


class ImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=serializers.ImportRequestSerializer,
        responses={201: serializers.ImportReportSerializer, 202: ImportJobSerializer},
        description="Small uploads are imported at once (201, the report). An upload unpacking to more than "
                    "DEIDLOOP_SYNC_IMPORT_BYTES is imported by a worker: 202 with the job and its status_url.",
    )
    def post(self, request, project_id: int):
        project = managed_project(request.user, project_id)
        payload = serializers.ImportRequestSerializer(
            data={**request.data.dict(), "files": request.FILES.getlist("files")}
        )
        payload.is_valid(raise_exception=True)
        try:
            report = import_uploaded_files(
                project=project, files=payload.validated_data["files"], fmt=payload.validated_data["format"],
                evaluation=payload.validated_data["evaluation"], user=request.user,
                annotated=False if payload.validated_data["unannotated"] else None,
                evaluation_share=payload.validated_data["evaluation_share"],
            )
        except USER_INPUT_ERRORS as error:
            raise ValidationError({"detail": str(error)}) from None
        if isinstance(report, ImportJob):  # too large for this request: a worker imports it
            enqueue_import(report)
            payload = job_payload(request, report)
            return Response(payload, status=status.HTTP_202_ACCEPTED, headers={"Location": payload["status_url"]})
        return Response(report.as_dict(), status=status.HTTP_201_CREATED)
