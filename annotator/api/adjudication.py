"""Adjudication over REST: the queue of records whose annotators disagree, a record's conflicts, the decision."""
from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.models import AuditEvent, Document
from annotator.permissions import Can, adjudicable_document, project_for
from annotator.selectors import adjudication_payload, adjudication_queue
from annotator.services.adjudication import AdjudicationError, AdjudicatorConflict, adjudicate
from annotator.services.audit import record_event

QUEUE_LIMIT = 1000


class AdjudicationWriteSerializer(serializers.Serializer):
    choices = serializers.ListField(child=serializers.CharField(allow_null=True), required=False, max_length=10_000,
                                    help_text="per conflict, in order: the annotator whose version to take, or null")
    spans = serializers.ListField(child=serializers.DictField(), required=False, max_length=10_000,
                                  help_text="the record's gold spans, when not given as choices")

    def validate(self, data):
        if ("choices" in data) == ("spans" in data):
            raise serializers.ValidationError("send either 'choices' (one per conflict) or 'spans'")
        return data


class AdjudicationQueueView(APIView):
    """The records awaiting a person's decision, oldest first (without their text)."""

    @extend_schema(operation_id="projects_adjudication_queue", responses={200: dict})
    def get(self, request, project_id: int):
        project = project_for(request.user, project_id, Can.ADJUDICATE)
        queue = adjudication_queue(project=project, user=request.user)
        return Response({
            "count": queue.count(),
            "results": [{"id": document.pk, "external_id": document.external_id, "submissions": document.submissions,
                         "url": reverse("project-adjudication", args=[project.pk, document.pk])}
                        for document in queue[:QUEUE_LIMIT]],
        })


class AdjudicationView(APIView):
    """GET: a record's text, the spans everybody marked and each conflict with every annotator's version.
    POST: the decision, as one choice per conflict or as the gold spans."""

    @extend_schema(operation_id="projects_adjudication_record", responses={200: dict})
    def get(self, request, project_id: int, document_id: int):
        document = adjudicable_document(request.user, project_id, document_id)
        record_event(user=request.user, action=AuditEvent.Action.VIEW, project=document.project, obj=document,
                     request=request, detail={"adjudication": True})
        return Response(adjudication_payload(document=document, user=request.user))

    @extend_schema(operation_id="projects_adjudication_decide", request=AdjudicationWriteSerializer,
                   responses={200: dict, 400: dict, 403: dict})
    def post(self, request, project_id: int, document_id: int):
        document = adjudicable_document(request.user, project_id, document_id)
        payload = AdjudicationWriteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            gold = adjudicate(document=document, user=request.user, **payload.validated_data)
        except AdjudicationError as error:
            raise ValidationError({"detail": str(error)}) from None
        except AdjudicatorConflict as refused:  # checked again under the record's lock
            raise PermissionDenied(str(refused)) from None
        following = adjudication_queue(project=document.project, user=request.user).first()
        return Response({
            "gold": gold.spans, "status": Document.Status.ADJUDICATED,
            "next_url": (reverse("annotator:adjudicate", args=[document.project_id, following.pk]) if following
                         else reverse("annotator:adjudication-queue", args=[document.project_id])),
        })
