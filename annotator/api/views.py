"""The REST API: thin views over the same services and selectors as the HTML pages."""
from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api import serializers
from annotator.access import USER_INPUT_ERRORS, managed_project, visible_project
from annotator.models import Annotation
from annotator.schemas import UnknownSchemaError
from annotator.selectors import documents_for, projects_for, workbench_payload
from annotator.services.annotations import AnnotationError, StaleAnnotation, save_draft, submit
from annotator.services.exports import export_archive
from annotator.services.projects import ProjectError, create_project
from annotator.services.queue import NotAssigned, next_record
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
                annotated=False if payload.validated_data["unannotated"] else None,
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


class NextRecordView(APIView):
    """Hand out the next record (or the annotator's open one) with its suggestions and tokens."""

    @extend_schema(request=None, responses={200: dict, 204: None})
    def post(self, request, project_id: int):
        project = visible_project(request.user, project_id)
        handout = next_record(project=project, user=request.user)
        if handout is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(workbench_payload(annotation=handout.annotation))


def _own_annotations(request, annotation_id: int):
    """The annotation as a queryset, if it is the user's and in a project they still belong to."""
    return Annotation.objects.filter(
        pk=annotation_id, annotator=request.user, document__project__in=projects_for(user=request.user)
    )


def _own_annotation(request, annotation_id: int) -> Annotation:
    annotation = _own_annotations(request, annotation_id).select_related("document__project").first()
    if annotation is None:
        raise NotFound("no such annotation of yours")
    return annotation


class WorkbenchAnnotationView(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, annotation_id: int):
        return Response(workbench_payload(annotation=_own_annotation(request, annotation_id)))


class StaleConflict(APIException):
    """409: the annotation moved on since the version the client edited."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "stale"

    def __init__(self, stale: StaleAnnotation) -> None:
        super().__init__()
        self.detail = {"detail": str(stale), "current_version": stale.current_version}


class _AnnotationWrite(APIView):
    service = None

    def _write(self, request, annotation_id: int):
        # The service loads and locks the row itself; here only whether it is the user's.
        if not _own_annotations(request, annotation_id).exists():
            raise NotFound("no such annotation of yours")
        payload = serializers.AnnotationWriteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            return type(self).service(annotation_id=annotation_id, user=request.user, **payload.validated_data)
        except StaleAnnotation as stale:
            raise StaleConflict(stale) from None
        except NotAssigned as refused:
            # 403 with the reason: the workbench shows it as is (a 409 would tell it to reload).
            raise PermissionDenied(str(refused), code="not_assigned") from None
        except AnnotationError as error:
            raise ValidationError({"detail": str(error)}) from None
        except Annotation.DoesNotExist:  # released (untouched, expired) between the check above and the lock
            raise NotFound("no such annotation of yours") from None


class DraftView(_AnnotationWrite):
    service = staticmethod(save_draft)

    @extend_schema(request=serializers.AnnotationWriteSerializer, responses={200: dict, 403: dict, 409: dict})
    def put(self, request, annotation_id: int):
        return Response({"version": self._write(request, annotation_id).annotation.version})


class SubmitView(_AnnotationWrite):
    service = staticmethod(submit)

    @extend_schema(request=serializers.AnnotationWriteSerializer, responses={200: dict, 403: dict, 409: dict})
    def post(self, request, annotation_id: int):
        result = self._write(request, annotation_id)
        project_id = result.annotation.document.project_id
        return Response({
            "version": result.annotation.version,
            "state": result.annotation.state,
            "corrections": result.corrections.as_dict(),
            "repeated": result.repeated,
            "next_url": reverse("annotator:annotate-next", args=[project_id]),
        })
