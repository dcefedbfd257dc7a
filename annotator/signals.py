from django.contrib.auth.signals import user_logged_in
from django.dispatch import Signal, receiver

from annotator.models import AuditEvent
from annotator.services.audit import record_event


@receiver(user_logged_in)
def audit_login(sender, request, user, **kwargs):
    record_event(user=user, action=AuditEvent.Action.LOGIN)


# Sent after a submission commits; the learning app listens (annotator never imports learning).
annotation_submitted = Signal()

# Sent while a project page renders: a receiver may answer one line about the project to show there (the
# learning app says that the first model is training), or None.
project_page_note = Signal()


def project_page_notes(*, project) -> list[str]:
    """The lines other apps want the project page to show."""
    return [note for _receiver, note in project_page_note.send(sender=type(project), project=project) if note]
