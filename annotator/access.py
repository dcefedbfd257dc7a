"""The checks both edges (HTML pages and REST API) make before calling a service."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from corpus.formats.errors import FormatError
from annotator.models import Project
from annotator.schemas import UnknownSchemaError
from annotator.selectors import can_manage, projects_for
from annotator.services.imports import ImportRejected
from annotator.services.projects import ProjectError
from annotator.services.uploads import UploadError

# Errors a person causes with what they send; shown to them as such, never as a server error.
USER_INPUT_ERRORS = (FormatError, ImportRejected, UploadError, ProjectError, UnknownSchemaError)


def visible_project(user, project_id: int) -> Project:
    """The project if the user may see it; 404 otherwise (outsiders do not learn that it exists)."""
    return get_object_or_404(projects_for(user=user), pk=project_id)


def managed_project(user, project_id: int) -> Project:
    """The project if the user leads or administers it; 404 for outsiders, 403 for other members."""
    project = visible_project(user, project_id)
    if not can_manage(user=user, project=project):
        raise PermissionDenied("only the project's leads and admins may do this")
    return project
