from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from collections.abc import Callable

from django.dispatch import Signal, receiver

from annotator.models import AuditEvent
from annotator.services.audit import record_event


@receiver(user_logged_in)
def audit_login(sender, request, user, **kwargs):
    record_event(user=user, action=AuditEvent.Action.LOGIN, request=request)


@receiver(user_login_failed)
def audit_login_failure(sender, credentials, request=None, **kwargs):
    """Every refused login (a wrong password, an unknown name, a locked-out account or address), with the name
    that was tried; Django has already masked the password in ``credentials``."""
    locked_out = bool(getattr(request, "axes_locked_out", False))
    record_event(
        user=None, action=AuditEvent.Action.LOGIN_FAILED, request=request,
        username=str(credentials.get("username") or ""), detail={"locked_out": True} if locked_out else None,
    )


@receiver(user_logged_out)
def audit_logout(sender, request, user, **kwargs):
    if user is not None:
        record_event(user=user, action=AuditEvent.Action.LOGOUT, request=request)


# Sent after a submission commits; the learning app listens (annotator never imports learning).
annotation_submitted = Signal()

# Sent while a project page renders: a receiver may answer one line about the project to show there (the
# learning app says that the first model is training), or None.
project_page_note = Signal()


def project_page_notes(*, project) -> list[str]:
    """The lines other apps want the project page to show."""
    return [note for _receiver, note in project_page_note.send(sender=type(project), project=project) if note]


# Sent when a record's suggestions become an annotator's draft: a receiver may answer a predicate
# ``hide(text, span) -> bool`` for suggestions that must not be shown as PHI (the deid app hides eponyms
# such as "enfermedad de Parkinson"), or None.
suggestion_guard = Signal()


def suggestion_guards(*, project) -> list[Callable]:
    """The predicates other apps give for hiding a suggestion of ``project`` from annotators."""
    return [hide for _receiver, hide in suggestion_guard.send(sender=type(project), project=project) if hide]


# Sent when a record's suggestions become an annotator's draft, before the guards: a receiver may answer a
# function ``complete(text, stored) -> stored`` that completes the stored pre-annotations from the record's
# own text (the learning app shows every mention of a tagged string and adds structured PHI a sure pattern
# finds), or None.
suggestion_completion = Signal()


def complete_suggestions(*, project, text: str, stored: dict) -> dict:
    """``stored`` pre-annotations completed by every function other apps give for ``project``."""
    for _receiver, complete in suggestion_completion.send(sender=type(project), project=project):
        if complete:
            stored = complete(text, stored)
    return stored


# Sent while the record list renders, with its records that two or more people submitted
# (``[{"id", "text", "spans": {username: [Span, …]}}]``): a receiver may answer their agreement as
# ``{record id: figures}`` (the learning app: strict span F1 and token κ, as on its agreement page), or None.
record_agreement = Signal()


def records_agreement(*, project, records: list[dict]) -> dict[int, dict]:
    """Each record's agreement figures, by record id, from the apps that compute them (none: no figures)."""
    figures: dict[int, dict] = {}
    if records:
        for _receiver, answer in record_agreement.send(sender=type(project), project=project, records=records):
            figures.update(answer or {})
    return figures
