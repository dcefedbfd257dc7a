"""Who may do what: the role rule, written once. Every page, API view, websocket and download asks here.

A project's members have one role each: annotators annotate the records handed to them; leads and admins run
the project. Superusers are admins of every project. Outsiders (and anonymous visitors) are told nothing: a
project they do not belong to answers 404, as if it did not exist; a member asking for something their role
does not allow gets 403 with the reason.

An adjudicator is an annotator who may also adjudicate: see every submission of a record whose annotators
disagree — but not of a record they annotated themselves — and decide its gold.

What an annotator sees is narrower than the project: the records handed to them and their own annotations —
never another annotator's work (double annotation must stay independent), never the evaluation set, never
people's cost fits, model internals, job errors, clusters, simulations or the audit log.
"""
from __future__ import annotations

from enum import Enum
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from annotator.middleware import current_request
from annotator.models import Annotation, Assignment, Document, Membership, Project

ADMIN, LEAD, ANNOTATOR = Membership.Role.ADMIN, Membership.Role.LEAD, Membership.Role.ANNOTATOR
ADJUDICATOR = Membership.Role.ADJUDICATOR  # an annotator who also adjudicates (records they did not annotate)
MANAGING_ROLES = (ADMIN, LEAD)


class Can(Enum):
    """What a member may do in a project; the value says it in words for 403 messages."""

    SEE_PROJECT = "see the project"
    ANNOTATE = "annotate records handed to them"
    SEE_ALL_RECORDS = "see every record and every annotation of the project"
    SEE_MODEL = "see the model, its jobs, clusters and simulations"
    SEE_PEOPLE = "see annotators' figures and cost fits"
    SEE_AUDIT = "see the audit log"
    ADJUDICATE = "adjudicate records on which annotators disagree"
    MANAGE = "import, export, retrain and change the project's settings"


# The rule: which roles may do each thing. Nothing else in the code decides it.
RULES: dict[Can, frozenset[str]] = {
    Can.SEE_PROJECT: frozenset({ADMIN, LEAD, ANNOTATOR, ADJUDICATOR}),
    Can.ANNOTATE: frozenset({ADMIN, LEAD, ANNOTATOR, ADJUDICATOR}),
    Can.SEE_ALL_RECORDS: frozenset({ADMIN, LEAD}),
    Can.SEE_MODEL: frozenset({ADMIN, LEAD}),
    Can.SEE_PEOPLE: frozenset({ADMIN, LEAD}),
    Can.SEE_AUDIT: frozenset({ADMIN, LEAD}),
    Can.ADJUDICATE: frozenset({ADMIN, LEAD, ADJUDICATOR}),
    Can.MANAGE: frozenset({ADMIN, LEAD}),
}


def projects_for(*, user) -> QuerySet[Project]:
    """The projects the user belongs to (all of them for superusers)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def _member_role(*, user, project_id):
    """The role column of the user's membership of the project, as a query (:func:`_project_with_role` asks the
    same of the database in its own words)."""
    return Membership.objects.filter(project_id=project_id, user=user).order_by("id").values("role")[:1]


def _roles_of_this_request() -> dict | None:
    """The roles already looked up while serving the current request, by (user id, project id): a page asks
    several times (may they manage? see people? adjudicate?) and each answer is the same within a request.
    None outside a request (a task, a command, a websocket), where nothing is remembered."""
    request = current_request()
    if request is None:
        return None
    try:
        return request._deidloop_roles
    except AttributeError:
        request._deidloop_roles = {}
        return request._deidloop_roles


def forget_roles() -> None:
    """A membership changed while serving this request: its later checks read the database again."""
    request = current_request()
    if request is not None:
        request._deidloop_roles = {}


def role_in(*, user, project: Project | int) -> str | None:
    """The user's role in the project (superusers are admins everywhere); None for outsiders."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return None
    if user.is_superuser:
        return ADMIN
    project_id = project if isinstance(project, int) else project.pk
    known = _roles_of_this_request()
    if known is not None and (user.pk, project_id) in known:
        return known[user.pk, project_id]
    role = _member_role(user=user, project_id=project_id).values_list("role", flat=True).first()
    if known is not None:
        known[user.pk, project_id] = role
    return role


def administers_site(user) -> bool:
    """Site administrators (superusers: admins of every project) manage the site's accounts."""
    return bool(getattr(user, "is_authenticated", False) and user.is_active and user.is_superuser)


def require_site_admin(user) -> None:
    """403 with the reason for anyone signed in who does not administer the site."""
    if not administers_site(user):
        raise PermissionDenied("only a site administrator may manage the site's accounts")


def may_create_projects(user) -> bool:
    """Site administrators create projects; so do the leads (and admins) of a project, where the site allows
    it (``DEIDLOOP_LEADS_CREATE_PROJECTS``)."""
    if administers_site(user):
        return True
    if not (getattr(user, "is_authenticated", False) and user.is_active):
        return False
    return bool(settings.DEIDLOOP_LEADS_CREATE_PROJECTS) and Membership.objects.filter(
        user=user, role__in=MANAGING_ROLES).exists()


def require_project_creator(user) -> None:
    """403 with the reason for anyone signed in who may not create projects."""
    if not may_create_projects(user):
        raise PermissionDenied("only a site administrator may create projects here"
                               + ("" if settings.DEIDLOOP_LEADS_CREATE_PROJECTS else
                                  " (leads may when an administrator allows it)"))


def role_allows(role: str | None, action: Can) -> bool:
    return role is not None and role in RULES[action]


def allows(*, user, project: Project | int, action: Can) -> bool:
    return role_allows(role_in(user=user, project=project), action)


def can_manage(*, user, project: Project | int) -> bool:
    """Leads and admins import, export and change a project's settings."""
    return allows(user=user, project=project, action=Can.MANAGE)


def project_for(user, project_id, action: Can) -> Project:
    """The project, if the user may do ``action`` in it: 404 for outsiders (and ids that are not numbers),
    403 with the reason for members whose role does not allow it."""
    try:
        pk = int(project_id)
    except (TypeError, ValueError):
        raise Http404("no such project") from None
    member = getattr(user, "is_authenticated", False) and user.is_active and not user.is_superuser
    if member:  # the project and the user's role in it, in one statement
        project = _project_with_role(user_id=user.pk, project_id=pk)
    else:
        try:
            project = Project.objects.get(pk=pk) if 0 < pk < _ID_LIMIT else None
        except Project.DoesNotExist:
            project = None
    if project is None:
        raise Http404("no such project")
    known = _roles_of_this_request()
    if member and known is not None:
        known[user.pk, project.pk] = project._member_role
    role = project._member_role if member else role_in(user=user, project=project)
    if role is None:
        raise Http404("no such project")
    if not role_allows(role, action):
        raise PermissionDenied(f"your role ({role}) may not {action.value}")
    return project


#: Ids at or past this are no row's (a bigint's range): answered 404 without asking the database.
_ID_LIMIT = 2**63


def _project_with_role(*, user_id: int, project_id: int) -> Project | None:
    """The project with the user's role in it (``_member_role``, None for an outsider), or None if there is no
    such project: :func:`_member_role` as a subquery of the project's row.

    It runs before nearly every page and API call of a member. Written through the ORM the statement is the
    same, but compiling its subquery anew each time costs about 400 of the lookup's 600 µs; here the statement
    is written once, from the models' own table and column names."""
    if not 0 < project_id < _ID_LIMIT:
        return None
    return next(iter(Project.objects.raw(_project_with_role_sql(), [user_id, project_id])), None)


@lru_cache(maxsize=1)
def _project_with_role_sql() -> str:
    project, membership = Project._meta, Membership._meta
    column = {name: membership.get_field(name).column for name in ("project", "user", "role", "id")}
    return (
        f'SELECT p.*, (SELECT m."{column["role"]}" FROM "{membership.db_table}" m '
        f'WHERE m."{column["project"]}" = p."{project.pk.column}" AND m."{column["user"]}" = %s '
        f'ORDER BY m."{column["id"]}" LIMIT 1) AS _member_role '
        f'FROM "{project.db_table}" p WHERE p."{project.pk.column}" = %s'
    )


def visible_project(user, project_id) -> Project:
    """The project if the user is a member; 404 otherwise (outsiders do not learn that it exists)."""
    return project_for(user, project_id, Can.SEE_PROJECT)


def managed_project(user, project_id) -> Project:
    """The project if the user leads or administers it; 404 for outsiders, 403 for other members."""
    return project_for(user, project_id, Can.MANAGE)


def documents_for(*, user, project: Project) -> QuerySet[Document]:
    """The project's documents the user may read: all of them for leads and admins; for annotators the pool
    records handed to them (or annotated by them), never the evaluation set."""
    role = role_in(user=user, project=project)
    if role is None:
        return Document.objects.none()
    documents = Document.objects.filter(project=project)
    if role_allows(role, Can.SEE_ALL_RECORDS):
        return documents
    handed_to_them = Q(Exists(Assignment.objects.filter(document=OuterRef("pk"), annotator=user))) | Q(
        Exists(Annotation.objects.filter(document=OuterRef("pk"), annotator=user))
    )
    return documents.filter(handed_to_them, role=Document.Role.POOL)


def annotations_for(*, user, project: Project) -> QuerySet[Annotation]:
    """The project's annotations the user may read: all for leads and admins, their own for annotators."""
    role = role_in(user=user, project=project)
    if role is None:
        return Annotation.objects.none()
    annotations = Annotation.objects.filter(document__project=project)
    if role_allows(role, Can.SEE_ALL_RECORDS):
        return annotations
    return annotations.filter(annotator=user, document__role=Document.Role.POOL)


def judges_own_work(*, user, document: Document) -> bool:
    """True for an adjudicator (not a lead or admin) asked about a record they annotated themselves."""
    return (not role_allows(role_in(user=user, project=document.project_id), Can.MANAGE)
            and Annotation.objects.filter(document=document, annotator=user).exists())


def adjudicable_document(user, project_id, document_id) -> Document:
    """The record, if the user may adjudicate it: 404 for outsiders and for a record with fewer than two
    submissions (nothing to adjudicate), 403 for members who may not adjudicate and for an adjudicator's own
    record."""
    project = project_for(user, project_id, Can.ADJUDICATE)
    try:
        document = Document.objects.select_related("project").get(project=project, pk=int(document_id))
    except (Document.DoesNotExist, TypeError, ValueError):
        raise Http404("no such record") from None
    submissions = Annotation.objects.filter(document=document, state=Annotation.State.SUBMITTED,
                                            source=Annotation.Source.HUMAN).count()
    if submissions < 2:
        raise Http404("this record has fewer than two submissions: there is nothing to adjudicate")
    if judges_own_work(user=user, document=document):
        raise PermissionDenied("you annotated this record yourself: a lead or another adjudicator decides it")
    return document
