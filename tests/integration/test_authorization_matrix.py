"""The authorization matrix: every URL pattern of the project × every role × the user's own project and another
one, each cell's expected status written once in ``EXPECTED`` below.

The patterns come from the URL resolver, so a page added without a row here fails
``test_every_url_pattern_has_a_row``. The cells follow the rule in ``annotator.permissions``: a project the user
does not belong to answers 404 (outsiders learn nothing), a member whose role lacks the action gets 403, and an
annotator reads only the records handed to them and their own annotations (404 for another annotator's).

The admin site's patterns (``admin:*``, one per model and action) are covered as one group: Django's admin
decides them all with one check (``is_active and is_staff``), so the group is checked on the admin index and on
two model changelists — only the superuser gets in, everyone else is sent to the admin login.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotator import models as annotator_models
from annotator.models import Annotation, Assignment, Document, Membership
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from annotator.services.queue import next_record
from corpus.types import Document as CorpusDocument
from deid.models import DeidJob
from learning.models import Clustering, ModelVersion, RetrainJob, SimulationRun

pytestmark = pytest.mark.django_db
ImportJob = getattr(annotator_models, "ImportJob", None)

ROLES = ("anonymous", "outsider", "annotator", "other_annotator", "lead", "admin")
LOGIN = "302 /login/"  # a page asked for anonymously: redirected to the login page
ADMIN_LOGIN = "302 /admin/login/"  # the admin site, for anyone but staff
ANY = "-"  # a pattern without a project: one column set, no own/other split

# (url name, method) → {"own" | "other" | "-": statuses in the order of ROLES}.
# "own": project A (where annotator, other_annotator and lead are members) and its objects — a document and an
# annotation are the annotator's; "other": project B (none of them is a member) and its objects.
# API anonymous cells are 403: DRF answers 403 when the first authentication class (session) sends no
# WWW-Authenticate challenge.
#                                          anonymous    outsider annotator other  lead  admin
EXPECTED: dict[tuple[str, str], dict[str, tuple]] = {
    # --- HTML pages ------------------------------------------------------------------------------------------
    ("annotator:project-list", "GET"): {ANY: (LOGIN, 200, 200, 200, 200, 200)},
    ("annotator:project-detail", "GET"): {"own": (LOGIN, 404, 200, 200, 200, 200),
                                          "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("annotator:project-import", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                          "other": (LOGIN, 404, 404, 404, 404, 200)},
    # POST without files: the form's 400 for those who may import.
    ("annotator:project-import", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                           "other": (LOGIN, 404, 404, 404, 404, 400)},
    # An upload's preview is its uploader's: one that does not exist, or is another's, answers 404.
    ("annotator:project-import-preview", "GET"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                                  "other": (LOGIN, 404, 404, 404, 404, 404)},
    ("annotator:project-import-preview", "POST"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                                   "other": (LOGIN, 404, 404, 404, 404, 404)},
    # A project's labels: for those who may change its settings (POST without an action: 400).
    ("annotator:project-labels", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                          "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("annotator:project-labels", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                           "other": (LOGIN, 404, 404, 404, 404, 400)},
    # A new project: site administrators (leads too where DEIDLOOP_LEADS_CREATE_PROJECTS allows; off here).
    ("learning:project-new", "GET"): {ANY: (LOGIN, 403, 403, 403, 403, 200)},
    ("learning:project-new", "POST"): {ANY: (LOGIN, 403, 403, 403, 403, 400)},
    # An import under way or done: its page is for those who may import.
    ("annotator:project-import-job", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                              "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("deid:export", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                             "other": (LOGIN, 404, 404, 404, 404, 200)},
    # POST: these projects have no gold, so there is nothing to export: the form's 400 for those who may.
    ("deid:export", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                              "other": (LOGIN, 404, 404, 404, 404, 400)},
    # An export made by a worker is its asker's: one that does not exist, or is another's, answers 404.
    ("deid:export-job", "GET"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                 "other": (LOGIN, 404, 404, 404, 404, 404)},
    ("deid:export-job-download", "GET"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                          "other": (LOGIN, 404, 404, 404, 404, 404)},
    # The document handed to the annotator: the other annotator may not read it.
    ("annotator:document-detail", "GET"): {"own": (LOGIN, 404, 200, 404, 200, 200),
                                           "other": (LOGIN, 404, 404, 404, 404, 200)},
    # GET never claims: both annotators hold an open record (302 to it), lead and admin see the start page.
    ("annotator:annotate-next", "GET"): {"own": (LOGIN, 404, 302, 302, 200, 200),
                                         "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("annotator:annotate-next", "POST"): {"own": (LOGIN, 404, 302, 302, 302, 302),
                                          "other": (LOGIN, 404, 404, 404, 404, 302)},
    # The workbench shows the user's own annotation of the record; nobody else has one of the annotator's record.
    ("annotator:annotate", "GET"): {"own": (LOGIN, 404, 200, 404, 404, 404),
                                    "other": (LOGIN, 404, 404, 404, 404, 404)},
    ("annotator:adjudication-queue", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                              "other": (LOGIN, 404, 404, 404, 404, 200)},
    # The record was handed to one annotator: nothing to adjudicate (404) for those who may adjudicate.
    ("annotator:adjudicate", "GET"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                      "other": (LOGIN, 404, 404, 404, 404, 404)},
    ("annotator:adjudicate", "POST"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                       "other": (LOGIN, 405, 405, 405, 405, 405)},
    # A record's review is for those who see every record; the record is a draft (not submitted): sending it
    # back is refused with the form's 400, and it has no gold to fix (404).
    ("annotator:record-review", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                         "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("annotator:record-send-back", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                             "other": (LOGIN, 404, 404, 404, 404, 400)},
    ("annotator:record-fix", "GET"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                      "other": (LOGIN, 404, 404, 404, 404, 404)},
    ("annotator:record-fix", "POST"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                       "other": (LOGIN, 404, 404, 404, 404, 404)},
    ("annotator:audit", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                 "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("annotator:audit-csv", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                     "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("learning:loop", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                               "other": (LOGIN, 404, 404, 404, 404, 200)},
    # An empty settings form is shown again with its errors (400), nothing saved.
    ("learning:loop", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                "other": (LOGIN, 404, 404, 404, 404, 400)},
    # The fields of a tagger or strategy just chosen; asked for without naming one: 400 for those who may see it.
    ("learning:loop-parameters", "GET"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                          "other": (LOGIN, 404, 404, 404, 404, 400)},
    # POST only: the method is refused before the project is looked up, the same for every id.
    ("learning:retrain", "GET"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                  "other": (LOGIN, 405, 405, 405, 405, 405)},
    ("learning:retrain", "POST"): {"own": (LOGIN, 404, 403, 403, 302, 302),
                                   "other": (LOGIN, 404, 404, 404, 404, 302)},
    ("learning:deid-model-train", "GET"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                           "other": (LOGIN, 405, 405, 405, 405, 405)},
    ("learning:deid-model-train", "POST"): {"own": (LOGIN, 404, 403, 403, 302, 302),
                                            "other": (LOGIN, 404, 404, 404, 404, 302)},
    ("learning:dashboard", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                    "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("learning:model-version", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                        "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("learning:simulation-start", "GET"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                           "other": (LOGIN, 405, 405, 405, 405, 405)},
    # An empty simulation form: 400 with its errors.
    ("learning:simulation-start", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                            "other": (LOGIN, 404, 404, 404, 404, 400)},
    # Without htmx the simulation redirects to the dashboard showing it.
    ("learning:simulation", "GET"): {"own": (LOGIN, 404, 403, 403, 302, 302),
                                     "other": (LOGIN, 404, 404, 404, 404, 302)},
    ("learning:people", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                 "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("learning:agreement", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                    "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("learning:agreement", "POST"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                     "other": (LOGIN, 405, 405, 405, 405, 405)},
    ("learning:clusters", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                   "other": (LOGIN, 404, 404, 404, 404, 200)},
    # A clustering is already queued in the fixtures: the POST says so and redirects.
    ("learning:clusters", "POST"): {"own": (LOGIN, 404, 403, 403, 302, 302),
                                    "other": (LOGIN, 404, 404, 404, 404, 302)},
    ("deid:planner", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                              "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("deid:policy", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                             "other": (LOGIN, 404, 404, 404, 404, 200)},
    # An empty settings form: 400 with its errors, nothing saved.
    ("deid:policy", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                              "other": (LOGIN, 404, 404, 404, 404, 400)},
    ("deid:deidentify", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                 "other": (LOGIN, 404, 404, 404, 404, 200)},
    # Nothing to de-identify: 400 with the form's error.
    ("deid:deidentify", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                  "other": (LOGIN, 404, 404, 404, 404, 400)},
    ("deid:deidentify-job", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                     "other": (LOGIN, 404, 404, 404, 404, 200)},
    # The fixture's job has no result file: nothing to download, even for those who may.
    ("deid:deidentify-download", "GET"): {"own": (LOGIN, 404, 403, 403, 404, 404),
                                          "other": (LOGIN, 404, 404, 404, 404, 404)},
    # The members page and its changes: for the project's leads and admins. Empty forms answer 400 with the
    # reason; a member-change URL names the annotator (in B, B's annotator).
    ("annotator:members", "GET"): {"own": (LOGIN, 404, 403, 403, 200, 200),
                                   "other": (LOGIN, 404, 404, 404, 404, 200)},
    ("annotator:members", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                    "other": (LOGIN, 404, 404, 404, 404, 400)},
    ("annotator:member-create", "GET"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                         "other": (LOGIN, 405, 405, 405, 405, 405)},
    ("annotator:member-create", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                          "other": (LOGIN, 404, 404, 404, 404, 400)},
    ("annotator:member-change", "GET"): {"own": (LOGIN, 405, 405, 405, 405, 405),
                                         "other": (LOGIN, 405, 405, 405, 405, 405)},
    ("annotator:member-change", "POST"): {"own": (LOGIN, 404, 403, 403, 400, 400),
                                          "other": (LOGIN, 404, 404, 404, 404, 400)},
    # The site's accounts: site administrators only (403 with the reason for everyone else signed in). The
    # URLs name B's annotator, whom no column signs in as; a reset shows the new password (200), an empty
    # activation form is 400.
    ("annotator:users", "GET"): {ANY: (LOGIN, 403, 403, 403, 403, 200)},
    ("annotator:user-active", "GET"): {ANY: (LOGIN, 405, 405, 405, 405, 405)},
    ("annotator:user-active", "POST"): {ANY: (LOGIN, 403, 403, 403, 403, 400)},
    ("annotator:user-password", "GET"): {ANY: (LOGIN, 405, 405, 405, 405, 405)},
    ("annotator:user-password", "POST"): {ANY: (LOGIN, 403, 403, 403, 403, 200)},
    # An invitation needs no login; a link that is not a valid invitation is 404 for everyone.
    ("annotator:invitation", "GET"): {"own": (404, 404, 404, 404, 404, 404),
                                      "other": (404, 404, 404, 404, 404, 404)},
    ("annotator:invitation", "POST"): {"own": (404, 404, 404, 404, 404, 404),
                                       "other": (404, 404, 404, 404, 404, 404)},
    # --- accounts --------------------------------------------------------------------------------------------
    ("login", "GET"): {ANY: (200, 200, 200, 200, 200, 200)},
    ("logout", "GET"): {ANY: (LOGIN, 405, 405, 405, 405, 405)},
    ("logout", "POST"): {ANY: (LOGIN, LOGIN, LOGIN, LOGIN, LOGIN, LOGIN)},
    ("password_change", "GET"): {ANY: (LOGIN, 200, 200, 200, 200, 200)},
    # An empty form is shown again with its errors.
    ("password_change", "POST"): {ANY: (LOGIN, 200, 200, 200, 200, 200)},
    # --- the user guide: for everyone logged in; its pictures are the PNG files of docs/img/ only -------------
    ("guide", "GET"): {ANY: (LOGIN, 200, 200, 200, 200, 200)},
    ("guide-image", "GET"): {ANY: (LOGIN, 200, 200, 200, 200, 200)},
    # --- the interface's language: the navigation's picker and the scripts' translations, for everyone -----------
    # Without a language chosen, the picker changes nothing and sends the browser back to the site's root.
    ("set_language", "GET"): {ANY: (302, 302, 302, 302, 302, 302)},
    ("set_language", "POST"): {ANY: (302, 302, 302, 302, 302, 302)},
    ("javascript-catalog", "GET"): {ANY: (200, 200, 200, 200, 200, 200)},
    ("api-token", "GET"): {ANY: (405, 405, 405, 405, 405, 405)},
    # No credentials in the body: 400 with the reason, for everyone (the endpoint needs no session).
    ("api-token", "POST"): {ANY: (400, 400, 400, 400, 400, 400)},
    # --- the API's description (no project data in it) -------------------------------------------------------
    ("api-schema", "GET"): {ANY: (403, 200, 200, 200, 200, 200)},
    ("api-docs", "GET"): {ANY: (403, 200, 200, 200, 200, 200)},
    ("api-redoc", "GET"): {ANY: (403, 200, 200, 200, 200, 200)},
    # --- REST API --------------------------------------------------------------------------------------------
    ("api-root", "GET"): {ANY: (403, 200, 200, 200, 200, 200)},
    ("project-list", "GET"): {ANY: (403, 200, 200, 200, 200, 200)},
    # An empty payload: only administrators create projects (403), and the administrator's is invalid (400).
    ("project-list", "POST"): {ANY: (403, 403, 403, 403, 403, 400)},
    ("project-detail", "GET"): {"own": (403, 404, 200, 200, 200, 200),
                                "other": (403, 404, 404, 404, 404, 200)},
    ("project-document-list", "GET"): {"own": (403, 404, 200, 200, 200, 200),
                                       "other": (403, 404, 404, 404, 404, 200)},
    ("project-document-detail", "GET"): {"own": (403, 404, 200, 404, 200, 200),
                                         "other": (403, 404, 404, 404, 404, 200)},
    ("project-annotation-list", "GET"): {"own": (403, 404, 200, 200, 200, 200),
                                         "other": (403, 404, 404, 404, 404, 200)},
    ("project-annotation-detail", "GET"): {"own": (403, 404, 200, 404, 200, 200),
                                           "other": (403, 404, 404, 404, 404, 200)},
    # POST only: DRF authenticates first, then refuses the method (405) before the view looks at the project.
    ("project-import", "GET"): {"own": (403, 405, 405, 405, 405, 405),
                                "other": (403, 405, 405, 405, 405, 405)},
    ("project-import", "POST"): {"own": (403, 404, 403, 403, 400, 400),
                                 "other": (403, 404, 404, 404, 404, 400)},
    ("project-import-job", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                    "other": (403, 404, 404, 404, 404, 200)},
    ("deid:api-export", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                 "other": (403, 404, 404, 404, 404, 200)},
    ("deid:api-deidentify", "GET"): {"own": (403, 405, 405, 405, 405, 405),
                                     "other": (403, 405, 405, 405, 405, 405)},
    # An empty payload: 400 for those who may de-identify.
    ("deid:api-deidentify", "POST"): {"own": (403, 404, 403, 403, 400, 400),
                                      "other": (403, 404, 404, 404, 404, 400)},
    ("project-next", "GET"): {"own": (403, 405, 405, 405, 405, 405),
                              "other": (403, 405, 405, 405, 405, 405)},
    ("project-next", "POST"): {"own": (403, 404, 200, 200, 200, 200),
                               "other": (403, 404, 404, 404, 404, 200)},
    ("project-adjudication-queue", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                            "other": (403, 404, 404, 404, 404, 200)},
    ("project-adjudication", "GET"): {"own": (403, 404, 403, 403, 404, 404),
                                      "other": (403, 404, 404, 404, 404, 404)},
    ("project-adjudication", "POST"): {"own": (403, 404, 403, 403, 404, 404),
                                       "other": (403, 404, 404, 404, 404, 404)},
    # own: the annotator's annotation; other: an annotation in project B. Only its author may open or write it.
    ("annotation-workbench", "GET"): {"own": (403, 404, 200, 404, 404, 404),
                                      "other": (403, 404, 404, 404, 404, 404)},
    # An empty payload: the author's is invalid (400); to anyone else the annotation does not exist.
    ("annotation-draft", "PUT"): {"own": (403, 404, 400, 404, 404, 404),
                                  "other": (403, 404, 404, 404, 404, 404)},
    ("annotation-submit", "POST"): {"own": (403, 404, 400, 404, 404, 404),
                                    "other": (403, 404, 404, 404, 404, 404)},
    ("learning:api-loop", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                   "other": (403, 404, 404, 404, 404, 200)},
    ("learning:api-agreement", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                        "other": (403, 404, 404, 404, 404, 200)},
    ("learning:api-retrain", "GET"): {"own": (403, 405, 405, 405, 405, 405),
                                      "other": (403, 405, 405, 405, 405, 405)},
    ("learning:api-retrain", "POST"): {"own": (403, 404, 403, 403, 202, 202),
                                       "other": (403, 404, 404, 404, 404, 202)},
    ("learning:api-deid-model", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                         "other": (403, 404, 404, 404, 404, 200)},
    ("learning:api-deid-model", "POST"): {"own": (403, 404, 403, 403, 202, 202),
                                          "other": (403, 404, 404, 404, 404, 202)},
    ("learning:api-job", "GET"): {"own": (403, 404, 403, 403, 200, 200),
                                  "other": (403, 404, 404, 404, 404, 200)},
    # --- the admin site: one group for every admin:* pattern (see the module's docstring) --------------------
    ("admin:index", "GET"): {ANY: (ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, 200)},
    # Behind the index, the site's login-required middleware sends anonymous visitors to the site's login.
    ("admin:annotator_project_changelist", "GET"): {
        ANY: (LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, 200)},
    ("admin:annotator_annotation_changelist", "GET"): {
        ANY: (LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, 200)},
}
ADMIN_GROUP = "admin:"

# What a request sends, where a body or a query matters (everything else sends nothing).
PAYLOADS: dict[tuple[str, str], dict] = {
    ("deid:export", "POST"): {"data": {"format": "jsonl", "statuses": "submitted"}},
    ("deid:api-export", "GET"): {"data": {"format": "jsonl"}},
    ("deid:api-deidentify", "POST"): {"data": "{}", "content_type": "application/json"},
    ("annotation-draft", "PUT"): {"data": "{}", "content_type": "application/json"},
    ("annotation-submit", "POST"): {"data": "{}", "content_type": "application/json"},
    ("project-list", "POST"): {"data": "{}", "content_type": "application/json"},
}


def url_patterns() -> list[tuple[str, str, frozenset[str]]]:
    """(namespaced name, route, keyword arguments) of every pattern, walked from the root resolver."""
    found = []

    def walk(resolver: URLResolver, prefix: str, namespaces: tuple[str, ...]) -> None:
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                inner = namespaces + ((entry.namespace,) if entry.namespace else ())
                walk(entry, prefix + str(entry.pattern), inner)
            elif isinstance(entry, URLPattern):
                name = ":".join(namespaces + (entry.name or "<unnamed>",))
                regex = (prefix + str(entry.pattern)).replace("^", "").replace("$", "")
                kwargs = set(entry.pattern.regex.groupindex)
                for outer in _prefix_kwargs(prefix):
                    kwargs.add(outer)
                found.append((name, regex, frozenset(kwargs)))

    walk(get_resolver(), "", ())
    return found


def _prefix_kwargs(prefix: str) -> list[str]:
    return [part.split(">")[0].split(":")[-1] for part in prefix.split("<")[1:]]


# --- the world the matrix is checked in ----------------------------------------------------------------------


@dataclass
class Objects:
    project: object
    document: Document  # handed to the annotator (in B: to B's annotator)
    annotation: Annotation  # the annotator's draft of that document
    version: ModelVersion
    run: SimulationRun
    job: RetrainJob
    import_job: object | None
    deid_job: object | None = None


def _notes(prefix: str, count: int) -> list[CorpusDocument]:
    return [CorpusDocument(text=f"Paciente {prefix} {i}: Ana Ruiz, vista el 3 de mayo.", name=f"{prefix}-{i}")
            for i in range(count)]


def _objects_of(project, annotator) -> Objects:
    import_documents(project=project, documents=_notes(project.name, 5), annotated=False)
    import_documents(project=project, documents=_notes(f"{project.name}-eval", 1), annotated=True, evaluation=True)
    handout = next_record(project=project, user=annotator)
    return Objects(
        project=project,
        document=handout.annotation.document,
        annotation=handout.annotation,
        version=ModelVersion.objects.create(project=project, tagger_kind="crf", status="ready"),
        run=SimulationRun.objects.create(project=project, strategies=["random"], batch_sizes=[2]),
        job=RetrainJob.objects.create(project=project, reason=RetrainJob.Reason.LEAD, status="done"),
        import_job=(ImportJob.objects.create(project=project, format="jsonl", status="done")
                    if ImportJob is not None else None),
        deid_job=DeidJob.objects.create(project=project, status="done", filenames=["text.txt"]),
    )


@pytest.fixture
def world(db):
    User = get_user_model()
    people = {
        "anonymous": None,
        "outsider": User.objects.create_user("otto", password="pw"),
        "annotator": User.objects.create_user("ana", password="pw"),
        "other_annotator": User.objects.create_user("olga", password="pw"),
        "lead": User.objects.create_user("lea", password="pw"),
        "admin": User.objects.create_superuser("root", password="pw"),
    }
    b_annotator = User.objects.create_user("bert", password="pw")
    a = create_project(name="A", schema="MEDDOCAN", created_by=people["lead"])
    set_membership(project=a, user=people["annotator"], role=Membership.Role.ANNOTATOR)
    set_membership(project=a, user=people["other_annotator"], role=Membership.Role.ANNOTATOR)
    b = create_project(name="B", schema="MEDDOCAN")
    set_membership(project=b, user=b_annotator, role=Membership.Role.ANNOTATOR)
    own = _objects_of(a, people["annotator"])
    next_record(project=a, user=people["other_annotator"])  # the other annotator holds a record of their own
    other = _objects_of(b, b_annotator)
    for project in (a, b):  # a clustering under way: a POST to the clusters page only says so
        Clustering.objects.create(project=project)
    return people, {"own": own, "other": other}


def _kwargs(name: str, wanted: frozenset[str], objects: Objects | None) -> dict:
    values = {}
    for key in wanted:
        if key == "format":
            values[key] = "json"
        elif key == "project_id":
            values[key] = objects.project.pk
        elif key == "document_id":
            values[key] = objects.document.pk
        elif key == "annotation_id":
            values[key] = objects.annotation.pk
        elif key == "version_id":
            values[key] = objects.version.pk
        elif key == "run_id":
            values[key] = objects.run.pk
        elif key == "job_id" and name in ("annotator:project-import-job", "project-import-job"):
            values[key] = objects.import_job.pk
        elif key == "job_id" and name in ("deid:deidentify-job", "deid:deidentify-download"):
            values[key] = objects.deid_job.pk
        elif key == "job_id":
            values[key] = objects.job.pk
        elif key == "user_id" and objects is None:  # an account of the site, not of a project
            values[key] = get_user_model().objects.get(username="bert").pk
        elif key == "user_id":
            values[key] = objects.annotation.annotator_id
        elif key == "name" and name == "guide-image":
            values[key] = "workbench.png"
        elif key == "uidb64":
            values[key] = "MQ"
        elif key == "token":
            values[key] = "not-an-invitation"
        elif key == "pk" and name == "project-detail":
            values[key] = objects.project.pk
        elif key == "pk" and name == "project-document-detail":
            values[key] = objects.document.pk
        elif key == "pk" and name == "project-annotation-detail":
            values[key] = objects.annotation.pk
        else:
            raise AssertionError(f"no value for {key!r} of {name}: add one to _kwargs")
    return values


def _client(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _outcome(response) -> int | str:
    if response.status_code == 302:
        location = response["Location"]
        if location.startswith("/admin/login/"):
            return ADMIN_LOGIN
        if location.startswith("/login/"):
            return LOGIN
    return response.status_code


def _is_object_kwarg(key: str) -> bool:
    return key not in {"format", "user_id", "name"}  # name: a picture of the guide, of no project


@pytest.mark.parametrize("row", list(EXPECTED), ids=lambda row: f"{row[1]} {row[0]}")
def test_matrix_row(world, row):
    people, objects = world
    name, method = row
    routes = {kwargs for found, _route, kwargs in url_patterns() if found == name}
    assert routes, f"{name} is in the table but no URL pattern has that name"
    payload = PAYLOADS.get(row, {})
    wrong = []
    for kwargs in sorted(routes, key=sorted):
        scoped = any(_is_object_kwarg(key) for key in kwargs)
        targets = ["own", "other"] if scoped else [ANY]
        for target in targets:
            assert target in EXPECTED[row], f"{row}: no {target!r} cells for the route with {sorted(kwargs)}"
            url = reverse(name, kwargs=_kwargs(name, kwargs, objects.get(target)))
            for role, expected in zip(ROLES, EXPECTED[row][target], strict=True):
                response = getattr(_client(people[role]), method.lower())(url, **payload)
                got = _outcome(response)
                if got != expected:
                    wrong.append(f"{method} {url} as {role} ({target}): expected {expected}, got {got}")
    assert wrong == []


def test_every_url_pattern_has_a_row():
    """A new page without expectations fails here; so does a row for a page that no longer exists."""
    names = {name for name, _route, _kwargs in url_patterns()}
    listed = {name for name, _method in EXPECTED}
    missing = sorted(name for name in names - listed if not name.startswith(ADMIN_GROUP))
    assert missing == [], f"URL patterns without a row in EXPECTED: {missing}"
    assert sorted(listed - names) == []
    assert "<unnamed>" not in names


def test_every_row_checks_every_role():
    for row, cells in EXPECTED.items():
        for target, statuses in cells.items():
            assert len(statuses) == len(ROLES), (row, target)


def test_get_on_annotate_next_claims_nothing(world):
    """Only a POST hands out a record: a GET (a link preview, a prefetch) must leave the pool as it is."""
    people, objects = world
    a = objects["own"].project
    before = Assignment.objects.filter(document__project=a).count()
    for role in ("annotator", "other_annotator", "lead", "admin"):
        response = _client(people[role]).get(reverse("annotator:annotate-next", args=[a.pk]))
        assert response.status_code in (200, 302)
    assert Assignment.objects.filter(document__project=a).count() == before == 2
    assert not Assignment.objects.filter(annotator__in=[people["lead"], people["admin"]]).exists()
    claimed = _client(people["lead"]).post(reverse("annotator:annotate-next", args=[a.pk]))
    assert claimed.status_code == 302
    assert Assignment.objects.filter(document__project=a, annotator=people["lead"]).count() == 1


def test_annotator_lists_hold_only_their_own_work(world):
    """In the lists that answer 200 to both annotators, neither sees the other's record, annotation or name,
    nor the evaluation set."""
    people, objects = world
    a = objects["own"].project
    evaluation = Document.objects.get(project=a, role=Document.Role.EVALUATION)
    theirs = Annotation.objects.get(document__project=a, annotator=people["other_annotator"])
    client = _client(people["annotator"])
    documents = client.get(f"/api/projects/{a.pk}/documents/").json()["results"]
    annotations = client.get(f"/api/projects/{a.pk}/annotations/").json()["results"]
    assert [row["id"] for row in documents] == [objects["own"].document.pk]
    assert [(row["id"], row["annotator"]) for row in annotations] == [(objects["own"].annotation.pk, "ana")]
    page = client.get(reverse("annotator:project-detail", args=[a.pk])).content.decode()
    assert evaluation.external_id not in page and theirs.document.external_id not in page
    assert objects["own"].document.external_id in page


# --- the project's websocket ---------------------------------------------------------------------------------


def _session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()


def _socket(project_id: int, cookie):
    from channels.testing import WebsocketCommunicator

    from config.asgi import application

    headers = [(b"origin", b"http://127.0.0.1:8000"), *([cookie] if cookie else [])]
    return WebsocketCommunicator(application, f"/ws/projects/{project_id}/", headers=headers)


@pytest.mark.django_db(transaction=True)
def test_websocket_refuses_outsiders_and_closes_on_membership_changes(users, projects):
    """Outsiders are refused (4403); a member is let in; removing the member closes the open socket for good
    (4403, and a new connection is refused), changing the role closes it to be checked afresh (4409). The
    changes go through the membership service and the model, whose receivers close the sockets."""
    from asgiref.sync import async_to_sync, sync_to_async

    from annotator.services.projects import set_membership

    a = projects["A"]
    cookies = {role: _session_cookie(user) for role, user in users.items()}
    timeout = 5

    async def scenario():
        outsider = _socket(a.pk, cookies["outsider"])
        assert await outsider.connect(timeout=timeout) == (False, 4403)
        anonymous = _socket(a.pk, None)
        assert await anonymous.connect(timeout=timeout) == (False, 4403)

        annotator = _socket(a.pk, cookies["annotator"])
        lead = _socket(a.pk, cookies["lead"])
        assert (await annotator.connect(timeout=timeout))[0] is True
        assert (await lead.connect(timeout=timeout))[0] is True
        assert (await lead.receive_output(timeout=timeout))["type"] == "websocket.send"  # presence on connect

        # The lead becomes an annotator: their socket closes with "role changed"; the annotator's stays open.
        await sync_to_async(set_membership)(project=a, user=users["lead"], role=Membership.Role.ANNOTATOR)
        assert await lead.receive_output(timeout=timeout) == {"type": "websocket.close", "code": 4409}
        assert await annotator.receive_nothing(timeout=0.3)

        # The annotator is removed: closed for good, and a new connection is refused.
        await sync_to_async(lambda: Membership.objects.get(project=a, user=users["annotator"]).delete())()
        assert await annotator.receive_output(timeout=timeout) == {"type": "websocket.close", "code": 4403}
        again = _socket(a.pk, cookies["annotator"])
        assert await again.connect(timeout=timeout) == (False, 4403)

    async_to_sync(scenario)()
