from django.contrib.auth.signals import user_logged_in
from django.dispatch import Signal, receiver

from annotator.models import AuditEvent
from annotator.services.audit import record_event


@receiver(user_logged_in)
def audit_login(sender, request, user, **kwargs):
    record_event(user=user, action=AuditEvent.Action.LOGIN)


# Sent after a submission commits; the learning app listens (annotator never imports learning).
annotation_submitted = Signal()
