"""The REST API of deid: the (de-identified) export and de-identifying a text, over the same services as the
pages."""
from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.models import Document
from annotator.permissions import managed_project
from annotator.services.exports import EXPORT_FORMATS
from corpus.formats.errors import FormatError
from deid.api import serializers
from deid.selectors.export import export_refusals
from deid.services.deidentify import NoModelError, deidentify_text
from deid.services.exports import EXPORT_CONCEALMENTS, export_archive
from deid.services.policy import DeidError


class ExportView(APIView):
    """The project's gold standard, as annotated (``conceal=none``) or de-identified (a .zip with report.json)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=list(EXPORT_FORMATS), required=True),
            OpenApiParameter("include_evaluation", bool, required=False),
            OpenApiParameter("conceal", str, enum=list(EXPORT_CONCEALMENTS), required=False),
            OpenApiParameter("statuses", str, many=True, required=False, enum=list(Document.Status.values),
                             description="records' statuses to export (repeat it); every record with gold without it"),
        ],
        responses={(200, "application/octet-stream"): bytes},
    )
    def get(self, request, project_id: int):
        project = managed_project(request.user, project_id)
        payload = serializers.ExportRequestSerializer(data=request.query_params)
        payload.is_valid(raise_exception=True)
        choice = payload.validated_data
        statuses = sorted(choice.get("statuses") or ()) or None  # none chosen: every record with gold
        refusals = export_refusals(project=project, fmt=choice["format"], conceal=choice["conceal"],
                                   include_evaluation=choice["include_evaluation"], statuses=statuses)
        if refusals:
            raise ValidationError(refusals)
        try:
            content, filename = export_archive(
                project=project, fmt=choice["format"], conceal=choice["conceal"], user=request.user,
                include_evaluation=choice["include_evaluation"], statuses=statuses,
            )
        except (DeidError, FormatError) as error:
            raise ValidationError({"detail": str(error)}) from None
        response = HttpResponse(content, content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class DeidentifyView(APIView):
    """De-identify a text with the project's current model: the concealed text, its spans (at their offsets in
    the concealed text, with the strategy and the model's confidence) and the report."""

    @extend_schema(request=serializers.DeidentifyRequestSerializer,
                   responses={200: serializers.DeidentifyResponseSerializer, 400: dict, 409: dict})
    def post(self, request, project_id: int):
        project = managed_project(request.user, project_id)
        payload = serializers.DeidentifyRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        text = payload.validated_data["text"]
        limit = settings.DEIDLOOP_DEIDENTIFY_MAX_TEXT_BYTES
        if len(text.encode("utf-8")) > limit:
            raise ValidationError({"detail": f"the text is larger than {limit} bytes; send it in parts, or use the "
                                             f"de-identification page or command for large inputs"})
        try:
            result, report = deidentify_text(
                project=project, text=text, policy=payload.validated_data["policy"],
                recall_bias=payload.validated_data.get("recall_bias"), user=request.user, source="api",
                request=request,
            )
        except NoModelError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        except DeidError as error:
            raise ValidationError({"detail": str(error)}) from None
        return Response({"text": result.text, "spans": [span.as_dict() for span in result.spans], "report": report})
