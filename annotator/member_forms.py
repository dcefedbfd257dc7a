"""The forms of the members and users pages. They check the shape of what was typed; the rules (who may give
which role, the last lead, taken usernames) are the services' (``annotator.services.members``), whose refusals
the views put back next to the field they concern."""
from __future__ import annotations

from django import forms
from django.contrib.auth.forms import SetPasswordForm
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Membership
from annotator.services.members import INVITATION, ONE_TIME_PASSWORD, MemberError


class MemberFormMixin:
    def add_service_error(self, error: MemberError) -> None:
        """Show a service's refusal next to its field (or above the form)."""
        self.add_error(error.field if error.field in self.fields else None, str(error))


def role_field(*, choices) -> forms.ChoiceField:
    return forms.ChoiceField(choices=choices, initial=Membership.Role.ANNOTATOR, label=_("Role"))


class AddMemberForm(MemberFormMixin, forms.Form):
    """Add someone who has an account already."""

    username = forms.CharField(max_length=150, label=_("Username"))

    def __init__(self, *args, roles, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"] = role_field(choices=roles)


class CreateMemberForm(MemberFormMixin, forms.Form):
    """Create an account and add it to the project."""

    username = forms.CharField(max_length=150, label=_("Username"))
    email = forms.EmailField(required=False, label=_("E-mail (optional)"))
    access = forms.ChoiceField(
        label=_("First password"), widget=forms.RadioSelect, initial=ONE_TIME_PASSWORD,
        choices=[(ONE_TIME_PASSWORD, "A one-time password, shown once, to be changed at the first login"),
                 (INVITATION, "An invitation link, shown once, to choose a password (it expires)")],
    )

    def __init__(self, *args, roles, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"] = role_field(choices=roles)


class MemberChangeForm(forms.Form):
    """A member's new role, or their removal."""

    role = forms.ChoiceField(required=False, choices=Membership.Role.choices)
    remove = forms.BooleanField(required=False)

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("remove") and not cleaned.get("role"):
            self.add_error("role", gettext("Choose a role, or remove the member."))
        return cleaned


class AccountActiveForm(forms.Form):
    active = forms.TypedChoiceField(choices=[("1", "activate"), ("0", "deactivate")], coerce=lambda v: v == "1")


class InvitationPasswordForm(SetPasswordForm):
    """Django's set-password form (the site's validators, typed twice) for an invited user."""
