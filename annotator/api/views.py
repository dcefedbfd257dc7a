"""The REST API: thin views over the same services and selectors as the HTML pages."""
from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api import serializers
from annotator.access import USER_INPUT_ERRORS, managed_project, visible_project
from annotator.models import Annotation
from annotator.schemas import UnknownSchemaError
from annotator.selectors import documents_for, projects_for
from annotator.services.exports import export_archive
from annotator.services.projects import ProjectError, create_project
from annotator.services.uploads import import_uploaded_files


class ProjectViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = serializers.ProjectSerializer

    def get_queryset(self):
        return projects_for(user=self.request.user)

    @extend_schema(request=serializers.ProjectCreateSerializer, responses={201: serializers.ProjectSerializer})
    def create(self, request):
        if not request.user.is_superuser:
            raise PermissionDenied("only administrators create projects")
        payload = serializers.ProjectCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            project = create_project(created_by=request.user, **payload.validated_data)
        except (ProjectError, UnknownSchemaError) as error:
            raise ValidationError({"detail": str(error)}) from None
        return Response(serializers.ProjectSerializer(project).data, status=status.HTTP_201_CREATED)


class DocumentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    def get_queryset(self):
        project = visible_project(self.request.user, self.kwargs["project_id"])
        queryset = documents_for(user=self.request.user, project=project)
        if self.action == "list":
            queryset = queryset.defer("text", "meta")
        return queryset

    def get_serializer_class(self):
        return serializers.DocumentListSerializer if self.action == "list" else serializers.DocumentSerializer


class AnnotationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = serializers.AnnotationSerializer

    def get_queryset(self):
        project = visible_project(self.request.user, self.kwargs["project_id"])
        queryset = Annotation.objects.filter(document__project=project).select_related("annotator")
        document = self.request.query_params.get("document")
        if document:
            queryset = queryset.filter(document_id=document)
        return queryset.order_by("id")


class ImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request=serializers.ImportRequestSerializer, responses={201: serializers.ImportReportSerializer})
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
            )
        except USER_INPUT_ERRORS as error:
            raise ValidationError({"detail": str(error)}) from None
        return Response(report.as_dict(), status=status.HTTP_201_CREATED)


class ExportView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["jsonl", "brat", "conll", "i2b2xml"], required=True)],
        responses={(200, "application/octet-stream"): bytes},
    )
    def get(self, request, project_id: int):
        project = managed_project(request.user, project_id)
        payload = serializers.ExportRequestSerializer(data=request.query_params)
        payload.is_valid(raise_exception=True)
        content, filename = export_archive(
            project=project, fmt=payload.validated_data["format"], user=request.user,
            include_evaluation=payload.validated_data["include_evaluation"],
        )
        response = HttpResponse(content, content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
