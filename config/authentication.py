"""Logging in: the answer to a locked-out login (django-axes) and the API's authentication, which refuses a user
who must change their password (the first-run accounts) until they have. The views are in config.views."""
from __future__ import annotations

import math

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.http import JsonResponse
from django.shortcuts import render
from rest_framework import authentication, exceptions

from annotator.services.accounts import must_change_password
from config.sessions import user_loaded_with_session

PASSWORD_CHANGE_REQUIRED = (
    "You must change the password you were given before using deidloop: log in on the web site, choose a new "
    "password on /password_change/, then try again."
)


def lockout_minutes() -> int:
    return max(1, math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60))


def lockout_message() -> str:
    return (
        f"Too many failed logins for this account or from this address ({settings.AXES_FAILURE_LIMIT} in a row). "
        f"Logins are refused for {lockout_minutes()} minutes, even with the right password. "
        "An administrator can lift the lockout sooner."
    )


def login_context() -> dict:
    """What the login page says about the lockout."""
    return {"failure_limit": settings.AXES_FAILURE_LIMIT, "lockout_minutes": lockout_minutes()}


def lockout_response(request, original_response=None, credentials=None):
    """django-axes' answer to a login attempt while the account or the address is locked out (429): JSON for
    the API, the lockout page for the site."""
    retry_after = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"detail": lockout_message()}, status=429)
    else:
        response = render(request, "registration/lockout.html", {"message": lockout_message()}, status=429)
    response["Retry-After"] = retry_after
    return response


class AccountModelBackend(ModelBackend):
    """Django's model backend, loading the user of a session with their account (``must_change_password``
    asks it on every request): read with the session itself (``config.sessions``), else in one statement."""

    def get_user(self, user_id):
        user = user_loaded_with_session(user_id)
        if user is None:
            try:
                user = get_user_model()._default_manager.select_related("deidloop_account").get(pk=user_id)
            except get_user_model().DoesNotExist:
                return None
        return user if self.user_can_authenticate(user) else None


class _RefusedUntilPasswordChanged:
    """An API authentication that refuses (403, with the reason) a user who must change their password."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is not None and must_change_password(result[0]):
            raise exceptions.PermissionDenied(PASSWORD_CHANGE_REQUIRED)
        return result


class SessionAuthentication(_RefusedUntilPasswordChanged, authentication.SessionAuthentication):
    pass


class TokenAuthentication(_RefusedUntilPasswordChanged, authentication.TokenAuthentication):
    pass


class BasicAuthentication(_RefusedUntilPasswordChanged, authentication.BasicAuthentication):
    pass
