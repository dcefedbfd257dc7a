"""Membership changes go to the audit log, however they are made: the admin, a service, a management command.
The acting user and the client's address come from the request being served, when there is one. A member
removed, or whose role changed, has their open websockets on the project closed (once the change commits)."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from annotator.models import AuditEvent, Membership, Project
from annotator.permissions import forget_roles
from annotator.services.audit import acting_user, record_event
from annotator.services.notify import close_member_sockets


@receiver(pre_save, sender=Membership, dispatch_uid="annotator.audit_membership_old_role")
def remember_old_role(sender, instance: Membership, using, **kwargs) -> None:
    # The role as stored before this save; None for a new membership.
    instance._audit_old_role = (
        Membership.objects.using(using).filter(pk=instance.pk).values_list("role", flat=True).first()
        if instance.pk is not None else None
    )


@receiver(post_save, sender=Membership, dispatch_uid="annotator.audit_membership_saved")
def audit_membership_saved(sender, instance: Membership, created: bool, **kwargs) -> None:
    old_role = getattr(instance, "_audit_old_role", None)
    if created or old_role is None:
        change = f"added as {instance.role}"
    elif old_role != instance.role:
        change = f"role {old_role} → {instance.role}"
    else:
        return  # saved without a change of role
    instance._audit_old_role = instance.role
    _record(instance, change)
    if not created and old_role is not None:
        _close_sockets(instance, removed=False)


@receiver(post_delete, sender=Membership, dispatch_uid="annotator.audit_membership_deleted")
def audit_membership_deleted(sender, instance: Membership, **kwargs) -> None:
    _record(instance, f"removed (was {instance.role})")
    _close_sockets(instance, removed=True)


@receiver(post_save, sender=Membership, dispatch_uid="annotator.forget_roles_saved")
@receiver(post_delete, sender=Membership, dispatch_uid="annotator.forget_roles_deleted")
def membership_changed(sender, **kwargs) -> None:
    forget_roles()  # the request that changed it checks roles from the database again


def _close_sockets(membership: Membership, *, removed: bool) -> None:
    project_id, user_id = membership.project_id, membership.user_id
    transaction.on_commit(lambda: close_member_sockets(project_id=project_id, user_id=user_id, removed=removed))


def _record(membership: Membership, change: str) -> None:
    member = _member(membership)
    record_event(
        user=acting_user(), action=AuditEvent.Action.MEMBERSHIP, project=_project(membership), obj=member,
        detail={"member": member.get_username(), "role": membership.role, "change": change},
    )


def _member(membership: Membership):
    """The member; when the membership goes with its user, the user may be gone from the database already."""
    try:
        return membership.user
    except get_user_model().DoesNotExist:
        return get_user_model()(pk=membership.user_id)


def _project(membership: Membership) -> Project:
    try:
        return membership.project
    except Project.DoesNotExist:
        return Project(pk=membership.project_id)
