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


# Sent inside the transaction that renames a label of a project (``annotator.services.labels``), with
# ``project``, ``old``, ``new`` and ``user``: a receiver renames the spans it keeps in its own tables (the learning app's
# silver sentences) and answers how many spans and which records (a set of document ids) it changed.
label_renamed = Signal()

# Sent when a label is to be deleted, with ``project`` and ``label``: a receiver answers the spans of that
# label in its own tables and their records, (count, set of document ids), or None.
label_usage = Signal()


def label_usage_elsewhere(*, project, label: str) -> tuple[int, set[int]]:
    """The spans of ``label`` that other apps keep for ``project``, and their records."""
    spans, records = 0, set()
    for _receiver, usage in label_usage.send(sender=type(project), project=project, label=label):
        if usage:
            spans += usage[0]
            records |= set(usage[1])
    return spans, records


def rename_label_elsewhere(*, project, old: str, new: str, user=None) -> tuple[int, set[int]]:
    """Ask other apps to rename ``old`` to ``new`` in the spans they keep; the spans and records changed."""
    spans, records = 0, set()
    for _receiver, changed in label_renamed.send(sender=type(project), project=project, old=old, new=new,
                                                 user=user):
        if changed:
            spans += changed[0]
            records |= set(changed[1])
    return spans, records
