"""The REST API: thin views over the same services and selectors as the HTML pages."""
from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api import serializers
from annotator.models import Annotation, AuditEvent, Document
from annotator.permissions import (
    Can, annotations_for, documents_for, project_for, projects_for, visible_project,
)
from annotator.schemas import UnknownSchemaError
from annotator.selectors import workbench_payload
from annotator.services.audit import record_event
from annotator.services.annotations import AnnotationError, StaleAnnotation, save_draft, submit
from annotator.services.projects import ProjectError, create_project
from annotator.services.queue import NotAssigned, next_record


class ProjectViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = serializers.ProjectSerializer

    def get_queryset(self):
        return projects_for(user=self.request.user)

    @extend_schema(request=serializers.ProjectCreateSerializer, responses={201: serializers.ProjectSerializer})
    def create(self, request, *args, **kwargs):  # kwargs: "format" from the router's .json suffix route
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
    """The project's records the user may read (an annotator: those handed to them); the list without text."""

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator asks without a project
            return Document.objects.none()
        self.project = visible_project(self.request.user, self.kwargs["project_id"])
        queryset = documents_for(user=self.request.user, project=self.project).order_by("id")
        if self.action == "list":
            queryset = queryset.defer("text", "meta")
        return queryset

    def retrieve(self, request, *args, **kwargs):
        document = self.get_object()
        record_event(user=request.user, action=AuditEvent.Action.VIEW, project=self.project, obj=document,
                     request=request, detail={"via": "api"})
        return Response(self.get_serializer(document).data)

    def get_serializer_class(self):
        return serializers.DocumentListSerializer if self.action == "list" else serializers.DocumentSerializer


class AnnotationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The project's annotations the user may read: every one for leads and admins, their own for annotators."""

    serializer_class = serializers.AnnotationSerializer

    @extend_schema(parameters=[OpenApiParameter("document", int, description="only this document's annotations")])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator asks without a project
            return Annotation.objects.none()
        project = visible_project(self.request.user, self.kwargs["project_id"])
        queryset = annotations_for(user=self.request.user, project=project).select_related("annotator")
        filters = serializers.AnnotationFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        if filters.validated_data.get("document") is not None:
            queryset = queryset.filter(document_id=filters.validated_data["document"])
        return queryset.order_by("id")


class NextRecordView(APIView):
    """Hand out the next record (or the annotator's open one) with its suggestions and tokens."""

    @extend_schema(request=None, responses={200: dict, 204: None})
    def post(self, request, project_id: int):
        project = project_for(request.user, project_id, Can.ANNOTATE)
        handout = next_record(project=project, user=request.user)
        if handout is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        record_event(user=request.user, action=AuditEvent.Action.VIEW, project=project,
                     obj=handout.annotation.document, request=request, detail={"via": "next"})
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
        annotation = _own_annotation(request, annotation_id)
        record_event(user=request.user, action=AuditEvent.Action.VIEW, project=annotation.document.project,
                     obj=annotation.document, request=request, detail={"via": "workbench"})
        return Response(workbench_payload(annotation=annotation))


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
