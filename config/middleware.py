"""Login is required everywhere in the HTML pages; the REST API answers 401/403 through DRF instead. A user who
must change their password (the first-run accounts) is sent to the password change page from every page."""
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.deprecation import MiddlewareMixin
from django_htmx.http import HttpResponseClientRedirect

from annotator.services.accounts import must_change_password


class LoginRequiredExceptApiMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class PasswordChangeRequiredMiddleware(MiddlewareMixin):
    """Every page but the password change and logging out redirects such a user to the password change page.
    The API refuses them itself, whichever way they authenticate (config.authentication)."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        path = request.path_info
        change = reverse("password_change")
        if path.startswith("/api/") or path in {change, reverse("logout")}:
            return None
        if not must_change_password(request.user):
            return None
        if request.headers.get("HX-Request"):
            return HttpResponseClientRedirect(change)
        return HttpResponseRedirect(change)
