"""People: a project's members (added, created, given a role, removed by its leads and admins) and the site's
accounts (activated, deactivated, given a new password by a site administrator).

The rules, besides the role rule of ``annotator.permissions``:
- only an admin (of the project, or a site administrator) makes someone admin, or changes or removes an admin;
- a lead cannot remove or demote the project's last lead (an admin can: admins still run the project);
- a password handed out by someone else is shown once, never stored in clear, and must be changed at the
  first login; an invitation is a signed link that expires and works once (it is bound to the account's
  password, which accepting it sets).

Membership changes are audited by ``annotator.receivers`` whichever way they are made; the account changes made
here (created, invited, activated, deactivated, password reset, invitation accepted) are audited here. No
password ever goes to the audit log.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from django.utils.translation import gettext

from annotator.models import AuditEvent, Membership, Project, Session
from annotator.permissions import ADMIN, LEAD, administers_site, role_in
from annotator.services.accounts import password_changed, require_password_change
from annotator.services.audit import record_event
from annotator.services.notify import close_member_sockets
from annotator.services.projects import set_membership

User = get_user_model()

#: How a new account gets its first password: one generated now (shown once), or a link to choose it.
ONE_TIME_PASSWORD, INVITATION = "password", "invitation"


class MemberError(ValueError):
    """A change of people refused as asked; ``field`` names the form field the message belongs next to."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class InvitationError(ValueError):
    """An invitation link that is malformed, used already or expired."""


@dataclass(frozen=True)
class NewAccount:
    """A user just created: exactly one of ``password`` (to hand over once) and ``invitation_path`` is set."""

    user: object
    membership: Membership
    password: str | None = None
    invitation_path: str | None = None


class _InvitationTokens(PasswordResetTokenGenerator):
    """Django's password-reset tokens under a salt of their own: an invitation is not a reset link. A token
    expires after ``PASSWORD_RESET_TIMEOUT`` and stops working once the password it is bound to changes."""

    key_salt = "annotator.services.members.invitation"


invitation_tokens = _InvitationTokens()


def one_time_password() -> str:
    """A random password to hand over once (about 96 bits)."""
    return secrets.token_urlsafe(12)


def invitation_days() -> float:
    return settings.PASSWORD_RESET_TIMEOUT / 86400


# --- a project's members -------------------------------------------------------------------------------------


def _check_role_change(*, project: Project, by, member, old_role: str | None, new_role: str | None) -> None:
    """Refuse what the acting user's role may not do: ``new_role`` None means removing the member."""
    acting_role = role_in(user=by, project=project)
    if acting_role not in (ADMIN, LEAD):
        raise MemberError(gettext("only the project's leads and admins change its members"))
    if new_role is not None and new_role not in Membership.Role.values:
        raise MemberError(gettext('unknown role %(new_role)r; choose one of %(items)s') % {"new_role": new_role, "items": ', '.join(Membership.Role.values)},
                          field="role")
    if acting_role != ADMIN and ADMIN in (old_role, new_role):
        if new_role == ADMIN:
            raise MemberError(gettext("only an admin can make someone admin"), field="role")
        raise MemberError(gettext('%(name)s is an admin: only an admin can change or remove them') % {"name": member.get_username()})
    if acting_role != ADMIN and old_role == LEAD and new_role != LEAD:
        leads = Membership.objects.filter(project=project, role=LEAD).count()
        if leads <= 1:
            action = gettext("removed") if new_role is None else gettext("given another role")
            raise MemberError(gettext("%(name)s is the project's last lead and cannot be %(action)s: make someone else lead first") % {"name": member.get_username(), "action": action})


def _locked(project: Project) -> Project:
    # One change of people at a time per project: two leads demoting each other at once must not leave none.
    return Project.objects.select_for_update().get(pk=project.pk)


@transaction.atomic
def add_member(*, project: Project, by, username: str, role: str) -> Membership:
    """Add an existing, active account to the project with ``role``."""
    project = _locked(project)
    user = _account_named(username.strip())
    if user is None:
        raise MemberError(gettext('there is no user named %(value)r: create the account instead') % {"value": username.strip()},
                          field="username")
    if not user.is_active:
        raise MemberError(gettext("%(name)s's account is deactivated: a site administrator can activate it") % {"name": user.get_username()},
                          field="username")
    if Membership.objects.filter(project=project, user=user).exists():
        raise MemberError(gettext('%(name)s is a member already: change their role below') % {"name": user.get_username()}, field="username")
    _check_role_change(project=project, by=by, member=user, old_role=None, new_role=role)
    return set_membership(project=project, user=user, role=role)


def _account_named(username: str):
    """The account of that name: spelt exactly, else in any letter case when only one account matches."""
    exact = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if exact is not None:
        return exact
    matches = list(User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": username})[:2])
    return matches[0] if len(matches) == 1 else None


@transaction.atomic
def create_member(*, project: Project, by, username: str, role: str, email: str = "",
                  access: str = ONE_TIME_PASSWORD) -> NewAccount:
    """Create an account and add it to the project. ``access`` says how its owner gets in: a one-time password
    (returned, to show once; it must be changed at the first login) or an invitation link (returned as a path)
    that lets them choose their password."""
    if access not in (ONE_TIME_PASSWORD, INVITATION):
        raise MemberError(gettext('unknown way in %(access)r') % {"access": access}, field="access")
    project = _locked(project)
    username = username.strip()
    _check_role_change(project=project, by=by, member=User(**{User.USERNAME_FIELD: username}), old_role=None,
                       new_role=role)
    if not username:
        raise MemberError(gettext("a new account needs a username"), field="username")
    try:
        User._meta.get_field(User.USERNAME_FIELD).run_validators(username)
    except ValidationError as error:
        raise MemberError(" ".join(error.messages), field="username") from None
    if User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": username}).exists():
        raise MemberError(gettext('the username %(username)r is taken: add that user instead, or choose another name') % {"username": username},
                          field="username")
    try:
        with transaction.atomic():
            user = User.objects.create_user(username, email=email.strip())
    except IntegrityError:  # created at the same moment by someone else
        raise MemberError(gettext('the username %(username)r is taken') % {"username": username}, field="username") from None
    password = invitation_path = None
    if access == ONE_TIME_PASSWORD:
        password = one_time_password()
        user.set_password(password)
        user.save(update_fields=["password"])
        require_password_change(user=user)
    else:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        invitation_path = invitation_path_for(user)
    record_event(user=by, action=AuditEvent.Action.MEMBERSHIP, project=project, obj=user, detail={
        "member": username, "change": "account created",
        "access": "one-time password" if access == ONE_TIME_PASSWORD else "invitation link",
    })
    membership = set_membership(project=project, user=user, role=role)
    return NewAccount(user=user, membership=membership, password=password, invitation_path=invitation_path)


@transaction.atomic
def change_role(*, project: Project, by, member_id: int, role: str) -> Membership:
    project = _locked(project)
    membership = _membership(project=project, member_id=member_id)
    if membership.role == role:
        return membership
    _check_role_change(project=project, by=by, member=membership.user, old_role=membership.role, new_role=role)
    return set_membership(project=project, user=membership.user, role=role)


@transaction.atomic
def remove_member(*, project: Project, by, member_id: int) -> None:
    project = _locked(project)
    membership = _membership(project=project, member_id=member_id)
    _check_role_change(project=project, by=by, member=membership.user, old_role=membership.role, new_role=None)
    membership.delete()


def _membership(*, project: Project, member_id: int) -> Membership:
    membership = Membership.objects.select_related("user").filter(project=project, user_id=member_id).first()
    if membership is None:
        raise MemberError(gettext("this person is not a member of the project (any more)"))
    return membership


# --- invitations ---------------------------------------------------------------------------------------------


def invitation_path_for(user) -> str:
    """The path of a link that lets ``user`` choose their password; it expires and works once."""
    return reverse("annotator:invitation", kwargs={
        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)), "token": invitation_tokens.make_token(user),
    })


def invited_user(*, uidb64: str, token: str):
    """The account an invitation link is for; InvitationError when it is malformed, used or expired."""
    try:
        user = User.objects.get(pk=int(force_str(urlsafe_base64_decode(uidb64))), is_active=True)
    except (TypeError, ValueError, OverflowError, User.DoesNotExist):
        user = None
    if user is None or not invitation_tokens.check_token(user, token):
        raise InvitationError("this invitation link is not valid: it was used already, has expired or was not "
                              "copied whole. Ask the project's lead for a new one.")
    return user


@transaction.atomic
def accept_invitation(*, user, password: str) -> None:
    """The invited ``user`` chooses their password (checked by the site's password validators)."""
    try:
        password_validation.validate_password(password, user)
    except ValidationError as error:
        raise MemberError(" ".join(error.messages), field="new_password1") from None
    user.set_password(password)
    user.save(update_fields=["password"])
    password_changed(user=user)
    record_event(user=user, action=AuditEvent.Action.EDIT, obj=user,
                 detail={"account": user.get_username(), "change": "invitation accepted, password chosen"})


# --- the site's accounts (site administrators) ---------------------------------------------------------------


def _require_site_admin(by) -> None:
    if not administers_site(by):
        raise MemberError(gettext("only a site administrator manages accounts"))


@transaction.atomic
def set_active(*, by, user_id: int, active: bool):
    """Activate or deactivate an account. A deactivated user's sessions end and their open sockets close; a
    request they still make is anonymous (Django's backend refuses inactive users), and so is the API."""
    _require_site_admin(by)
    user = User.objects.select_for_update().filter(pk=user_id).first()
    if user is None:
        raise MemberError(gettext("there is no such account"))
    if user.pk == by.pk and not active:
        raise MemberError(gettext("you cannot deactivate your own account"))
    if user.is_active == active:
        return user
    user.is_active = active
    user.save(update_fields=["is_active"])
    if not active:
        end_sessions(user=user)
        project_ids = list(Membership.objects.filter(user=user).values_list("project_id", flat=True))

        def close_sockets() -> None:
            for project_id in project_ids:
                close_member_sockets(project_id=project_id, user_id=user.pk)

        transaction.on_commit(close_sockets)
    record_event(user=by, action=AuditEvent.Action.EDIT, obj=user, detail={
        "account": user.get_username(), "change": "activated" if active else "deactivated",
    })
    return user


@transaction.atomic
def reset_password(*, by, user_id: int) -> str:
    """Give the account a new one-time password (returned, to show once), to be changed at the next login.
    Changing the password ends the user's other sessions (Django checks the password's hash in each)."""
    _require_site_admin(by)
    user = User.objects.select_for_update().filter(pk=user_id).first()
    if user is None:
        raise MemberError(gettext("there is no such account"))
    if user.pk == by.pk:
        raise MemberError(gettext("change your own password on the password page"))
    password = one_time_password()
    user.set_password(password)
    user.save(update_fields=["password"])
    require_password_change(user=user)
    end_sessions(user=user)
    record_event(user=by, action=AuditEvent.Action.EDIT, obj=user,
                 detail={"account": user.get_username(), "change": "password reset (one-time password)"})
    return password


def end_sessions(*, user) -> int:
    """Delete the user's stored sessions; returns how many."""
    return Session.objects.filter(user=user).delete()[0]
