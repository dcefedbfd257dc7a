"""The loop over the REST API: its state, a lead's "retrain now", and the project's de-identification model."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.permissions import Can, managed_project, project_for
from learning.models import ModelVersion, RetrainJob
from learning.selectors.loop import job_progress, loop_state
from learning.selectors.models import deid_model_state, deid_model_summary
from learning.tasks import request_deid_model, request_lead_retrain


def _model(version: ModelVersion | None) -> dict | None:
    if version is None:
        return None
    return {"id": version.pk, "tagger": version.tagger_kind, "created_at": version.created_at,
            "documents": version.n_documents, "tokens": version.n_tokens,
            "annotator_hours": version.annotator_hours, "silver_sentences": version.silver_sentences,
            "train_seconds": version.train_seconds, "scoring_seconds": version.scoring_seconds,
            "metrics": version.metrics, "choices": version.choices}


class LoopStateView(APIView):
    """The current model, a retrain under way, and the measured costs of a project."""

    @extend_schema(responses={200: dict})
    def get(self, request, project_id: int):
        project = project_for(request.user, project_id, Can.SEE_MODEL)
        state = loop_state(project=project)
        costs = state["costs"]
        return Response({
            "model": _model(state["model"]),
            "retrain": state["progress"],
            "submissions": state["submissions"],
            "new_submissions": state["new_submissions"],
            "batch_size": project.batch_size,
            "strategy": project.strategy,
            "costs": {"records": costs["records"],
                      "overall": costs["overall"].as_dict() if costs["overall"] else None,
                      "annotators": {name: fit.as_dict() if fit else None
                                     for name, fit in costs["annotators"].items()}},
        })


class RetrainView(APIView):
    """Queue a retrain now (leads and admins); while one runs, another follows it."""

    @extend_schema(request=None, responses={202: dict})
    def post(self, request, project_id: int):
        project = managed_project(request.user, project_id)
        job, created = request_lead_retrain(project=project, user=request.user)
        return Response({**job_progress(job), "created": created, "reason": job.reason},
                        status=status.HTTP_202_ACCEPTED)


class RetrainJobView(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, project_id: int, job_id: int):
        project = project_for(request.user, project_id, Can.SEE_MODEL)
        job = RetrainJob.objects.filter(project=project, pk=job_id).first()
        if job is None:
            return Response({"detail": "no such retrain"}, status=status.HTTP_404_NOT_FOUND)
        return Response({**job_progress(job), "reason": job.reason, "error": job.error,
                         "model_version": job.model_version_id})


class DeidModelView(APIView):
    """The project's de-identification model (leads and admins): the one in use and the newest asked for; POST
    asks for a new one (202), or answers the one under way."""

    @extend_schema(responses={200: dict})
    def get(self, request, project_id: int):
        state = deid_model_state(managed_project(request.user, project_id))
        return Response({"current": deid_model_summary(state["deid_model"]),
                         "latest": deid_model_summary(state["deid_model_latest"])})

    @extend_schema(request=None, responses={202: dict})
    def post(self, request, project_id: int):
        project = managed_project(request.user, project_id)
        model, created = request_deid_model(project=project, user=request.user, request=request)
        return Response({**deid_model_summary(model), "created": created}, status=status.HTTP_202_ACCEPTED)
