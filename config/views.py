"""The site's own account views: the API token endpoint and the password change."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordChangeForm
from django.core.exceptions import ValidationError
from django.urls import reverse_lazy
from django.utils.translation import gettext
from drf_spectacular import authentication as spectacular_authentication
from rest_framework import exceptions
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response

from annotator.services.accounts import must_change_password, password_changed
from config.authentication import PASSWORD_CHANGE_REQUIRED


class ObtainTokenView(ObtainAuthToken):
    """POST a username and password, get the user's API token (``Authorization: Token KEY``). Failed attempts
    count towards the same lockout as the login page."""

    authentication_classes = ()

    def get_serializer_context(self):
        # django-axes marks the Django request it is handed; its middleware then answers a locked-out attempt.
        return {**super().get_serializer_context(), "request": self.request._request}

    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        if must_change_password(user):
            raise exceptions.PermissionDenied(PASSWORD_CHANGE_REQUIRED)
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class NewPasswordChangeForm(PasswordChangeForm):
    """Django's password change, which also refuses keeping the same password."""

    def clean(self):
        cleaned = super().clean()
        new_password = cleaned.get("new_password1")
        if new_password and not self.errors and self.user.check_password(new_password):
            self.add_error("new_password2", ValidationError(
                "The new password must differ from the current one.", code="password_unchanged"))
        return cleaned


class PasswordChangeView(auth_views.PasswordChangeView):
    form_class = NewPasswordChangeForm
    success_url = reverse_lazy(settings.LOGIN_REDIRECT_URL)

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "required": must_change_password(self.request.user)}

    def form_valid(self, form):
        response = super().form_valid(form)
        password_changed(user=form.user)
        messages.success(self.request, gettext("Your password was changed."))
        return response


# The API's authentication classes are drf-spectacular's, subclassed: the schema describes them the same way.
class SessionScheme(spectacular_authentication.SessionScheme):
    target_class = "config.authentication.SessionAuthentication"


class BasicScheme(spectacular_authentication.BasicScheme):
    target_class = "config.authentication.BasicAuthentication"
