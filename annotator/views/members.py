"""The people pages: a project's members (for its leads and admins), the site's accounts (for site
administrators), and the page where an invited user chooses a password. Thin: the rules are in
``annotator.services.members`` and ``annotator.permissions``.

A password or invitation link handed out is rendered in the answer to the POST that made it, and nowhere else:
it is not stored, and the answer is marked not to be cached."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.member_forms import (
    AccountActiveForm,
    AddMemberForm,
    CreateMemberForm,
    InvitationPasswordForm,
    MemberChangeForm,
)
from annotator.models import Membership
from annotator.permissions import ADMIN, Can, project_for, require_site_admin, role_in
from annotator.selectors import project_members, site_accounts
from annotator.services.members import (
    InvitationError,
    MemberError,
    accept_invitation,
    add_member,
    change_role,
    create_member,
    invitation_days,
    invited_user,
    remove_member,
    reset_password,
    set_active,
)


def _roles_for(user, project) -> list[tuple[str, str]]:
    """The roles the user may give: admin only by admins."""
    may_make_admin = role_in(user=user, project=project) == ADMIN
    return [(value, label) for value, label in Membership.Role.choices if may_make_admin or value != ADMIN]


def _members_page(request, project, *, add_form=None, create_form=None, created=None, status=200):
    roles = _roles_for(request.user, project)
    add_form = add_form or AddMemberForm(roles=roles, prefix="add")
    create_form = create_form or CreateMemberForm(roles=roles, prefix="create")
    for form in (add_form, create_form):  # a form shown again offers only the roles this user may give
        form.fields["role"].choices = roles
    context = {
        "project": project,
        "members": project_members(project=project),
        "roles": roles,
        "add_form": add_form,
        "create_form": create_form,
        "created": created,
        "invitation_url": request.build_absolute_uri(created.invitation_path)
        if created and created.invitation_path else None,
        "invitation_days": invitation_days(),
    }
    response = render(request, "annotator/members.html", context, status=status)
    if created is not None:
        add_never_cache_headers(response)
    return response


@require_http_methods(["GET", "POST"])
def members(request, project_id: int):
    """GET: the members and the forms; POST: add someone who has an account."""
    project = project_for(request.user, project_id, Can.MANAGE)
    if request.method == "GET":
        return _members_page(request, project)
    form = AddMemberForm(request.POST, roles=Membership.Role.choices, prefix="add")
    if form.is_valid():
        try:
            membership = add_member(project=project, by=request.user, username=form.cleaned_data["username"],
                                    role=form.cleaned_data["role"])
        except MemberError as error:
            form.add_service_error(error)
        else:
            messages.success(request, gettext("%(name)s was added as %(role)s.") % {
                "name": membership.user.get_username(), "role": membership.get_role_display().lower()})
            return redirect("annotator:members", project_id=project.pk)
    return _members_page(request, project, add_form=form, status=400)


@require_POST
def member_create(request, project_id: int):
    """Create an account, add it, and show its one-time password or invitation link once."""
    project = project_for(request.user, project_id, Can.MANAGE)
    form = CreateMemberForm(request.POST, roles=Membership.Role.choices, prefix="create")
    if form.is_valid():
        data = form.cleaned_data
        try:
            created = create_member(project=project, by=request.user, username=data["username"],
                                    email=data["email"], role=data["role"], access=data["access"])
        except MemberError as error:
            form.add_service_error(error)
        else:
            return _members_page(request, project, created=created)
    return _members_page(request, project, create_form=form, status=400)


@require_POST
def member_change(request, project_id: int, user_id: int):
    """Change a member's role, or remove them."""
    project = project_for(request.user, project_id, Can.MANAGE)
    form = MemberChangeForm(request.POST)
    if not form.is_valid():
        return _refused(request, project, " ".join(error for errors in form.errors.values() for error in errors))
    try:
        if form.cleaned_data["remove"]:
            remove_member(project=project, by=request.user, member_id=user_id)
            messages.success(request, gettext("The member was removed."))
        else:
            membership = change_role(project=project, by=request.user, member_id=user_id,
                                     role=form.cleaned_data["role"])
            messages.success(request, gettext("%(name)s is now %(role)s.") % {
                "name": membership.user.get_username(), "role": membership.get_role_display().lower()})
    except MemberError as error:
        return _refused(request, project, str(error))
    return redirect("annotator:members", project_id=project.pk)


def _refused(request, project, reason: str):
    messages.error(request, reason)
    return _members_page(request, project, status=400)


# --- the site's accounts -------------------------------------------------------------------------------------


def _users_page(request, *, reset=None, status=200):
    response = render(request, "annotator/users.html", {"accounts": site_accounts(), "reset": reset},
                      status=status)
    if reset is not None:
        add_never_cache_headers(response)
    return response


@require_GET
def users(request):
    require_site_admin(request.user)
    return _users_page(request)


@require_POST
def user_active(request, user_id: int):
    require_site_admin(request.user)
    form = AccountActiveForm(request.POST)
    if not form.is_valid():
        messages.error(request, gettext("Say whether to activate or deactivate the account."))
        return _users_page(request, status=400)
    try:
        user = set_active(by=request.user, user_id=user_id, active=form.cleaned_data["active"])
    except MemberError as error:
        messages.error(request, str(error))
        return _users_page(request, status=400)
    messages.success(request, (gettext("%(name)s is active.") if user.is_active else gettext("%(name)s is deactivated."))
                     % {"name": user.get_username()})
    return redirect("annotator:users")


@require_POST
def user_password(request, user_id: int):
    require_site_admin(request.user)
    try:
        password = reset_password(by=request.user, user_id=user_id)
    except MemberError as error:
        messages.error(request, str(error))
        return _users_page(request, status=400)
    user = site_accounts().get(pk=user_id)
    return _users_page(request, reset={"user": user, "password": password})


# --- invitations ---------------------------------------------------------------------------------------------


@login_not_required
@require_http_methods(["GET", "POST"])
def invitation(request, uidb64: str, token: str):
    """An invited user chooses their password, then logs in."""
    try:
        user = invited_user(uidb64=uidb64, token=token)
    except InvitationError as error:
        return render(request, "annotator/invitation.html", {"error": str(error)}, status=404)
    form = InvitationPasswordForm(user, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            accept_invitation(user=user, password=form.cleaned_data["new_password1"])
        except MemberError as error:
            form.add_error("new_password1", str(error))
        else:
            messages.success(request, gettext("Your password is set: log in with it."))
            return redirect("login")
    status = 400 if request.method == "POST" else 200
    response = render(request, "annotator/invitation.html", {"form": form, "invitee": user}, status=status)
    response["Referrer-Policy"] = "no-referrer"  # the link is a secret: keep it out of other sites' logs
    return response
