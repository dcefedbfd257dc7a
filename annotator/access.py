"""The errors both edges (HTML pages and REST API) show a person as their own mistake, never as a server error.

Role checks live in ``annotator.permissions``.
"""
from __future__ import annotations

from corpus.formats.errors import FormatError
from annotator.schemas import UnknownSchemaError
from annotator.services.imports import ImportRejected
from annotator.services.projects import ProjectError
from annotator.services.uploads import UploadError

# Errors a person causes with what they send; shown to them as such, never as a server error.
USER_INPUT_ERRORS = (FormatError, ImportRejected, UploadError, ProjectError, UnknownSchemaError)
