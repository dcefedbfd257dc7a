"""Sessions that end after a set idle time without a database write on every request.

A session ends ``SESSION_COOKIE_AGE`` seconds after it was last renewed. Renewing it on every request (Django's
SESSION_SAVE_EVERY_REQUEST) costs a write transaction per request, three statements of the nine an API read
makes. Here a request renews its session only once the stored expiry is more than ``RENEW_EVERY_SECONDS`` old,
so a session still ends between ``SESSION_COOKIE_AGE - RENEW_EVERY_SECONDS`` and ``SESSION_COOKIE_AGE`` seconds
after its last request, and an active user's session is written at most once a minute.

A stored session (``annotator.models.Session``) names the account signed in to it, and is read with that
account and its deidloop settings in one statement: the authentication middleware here hands the user so read
to the authentication backend (``config.authentication.AccountModelBackend``), which then needs no statement
of its own. Django still checks the user against the session (the password's hash) as it always does.
"""
from __future__ import annotations

import logging
from contextvars import ContextVar
from datetime import timedelta

from django.contrib import auth
from django.contrib.auth import middleware as auth_middleware
from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.utils import timezone
from django.utils.deprecation import MiddlewareMixin
from django.utils.functional import SimpleLazyObject

#: The most a session's end can come before SESSION_COOKIE_AGE after its last request (and the least time
#: between two writes of an active session).
RENEW_EVERY_SECONDS = 60


class SessionStore(db.SessionStore):
    """Django's database sessions, stored with the id of their user, read with that user (``loaded_user``), and
    remembering their stored expiry."""

    stored_expiry = None
    loaded_user = None

    @classmethod
    def get_model_class(cls):
        from annotator.models import Session

        return Session

    def create_model_instance(self, data):
        stored = super().create_model_instance(data)
        try:
            stored.user_id = int(data[auth.SESSION_KEY])
        except (KeyError, TypeError, ValueError):
            stored.user_id = None
        return stored

    def _get_session_from_db(self):
        """Django's own lookup, with the session's user and their account in the same statement."""
        try:
            stored = self.model.objects.select_related("user__deidloop_account").get(
                session_key=self.session_key, expire_date__gt=timezone.now())
        except (self.model.DoesNotExist, SuspiciousOperation) as error:
            if isinstance(error, SuspiciousOperation):
                logging.getLogger(f"django.security.{type(error).__name__}").warning(str(error))
            self._session_key = None
            return None
        self.stored_expiry = stored.expire_date
        self.loaded_user = stored.user
        return stored

    def renewal_due(self) -> bool:
        """Has this loaded session's expiry fallen more than RENEW_EVERY_SECONDS behind a fresh one?"""
        if self.stored_expiry is None:
            return False
        renew_every = min(RENEW_EVERY_SECONDS, self.get_session_cookie_age() // 2)
        return self.stored_expiry - timezone.now() < timedelta(seconds=self.get_session_cookie_age() - renew_every)


class SessionRenewalMiddleware(MiddlewareMixin):
    """Right after Django's SessionMiddleware: a request that read its session marks it changed when its
    renewal is due (SessionStore.renewal_due), so that SessionMiddleware saves it, moving its expiry on."""

    def process_response(self, request, response):
        session = getattr(request, "session", None)
        due = getattr(session, "renewal_due", None)  # on this module's SessionStore (SESSION_ENGINE)
        if due is not None and session.accessed and not session.modified and due():
            session.modified = True
        return response


#: The session whose user is being authenticated, while ``authenticated_user`` runs (else None).
_authenticating: ContextVar[SessionStore | None] = ContextVar("authenticating", default=None)


def user_loaded_with_session(user_id):
    """The user read with the session being authenticated, if it is the one with ``user_id``; else None (the
    backend then reads the user itself: a token, a websocket, a session stored before its user)."""
    session = _authenticating.get()
    user = getattr(session, "loaded_user", None)
    return user if user is not None and str(user.pk) == str(user_id) else None


def authenticated_user(request):
    """Django's ``auth.get_user(request)``, with the request's session known to the backend meanwhile."""
    if not hasattr(request, "_cached_user"):
        token = _authenticating.set(request.session)
        try:
            request._cached_user = auth.get_user(request)
        finally:
            _authenticating.reset(token)
    return request._cached_user


class AuthenticationMiddleware(auth_middleware.AuthenticationMiddleware):
    """Django's, with ``request.user`` from :func:`authenticated_user`."""

    def process_request(self, request):
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: authenticated_user(request))
