"""Agreement between annotators over the REST API (leads and admins)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.permissions import Can, project_for
from learning.selectors.agreement import project_agreement


class AgreementView(APIView):
    """Strict and relaxed span F1, token Cohen's κ and Krippendorff's α of the double-annotated records:
    overall, per label, per record and per day."""

    @extend_schema(responses={200: dict})
    def get(self, request, project_id: int):
        project = project_for(request.user, project_id, Can.SEE_PEOPLE)
        return Response(project_agreement(project=project))
