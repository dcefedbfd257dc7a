"""Sessions that end after a set idle time without a database write on every request.

A session ends ``SESSION_COOKIE_AGE`` seconds after it was last renewed. Renewing it on every request (Django's
SESSION_SAVE_EVERY_REQUEST) costs a write transaction per request, three statements of the nine an API read
makes. Here a request renews its session only once the stored expiry is more than ``RENEW_EVERY_SECONDS`` old,
so a session still ends between ``SESSION_COOKIE_AGE - RENEW_EVERY_SECONDS`` and ``SESSION_COOKIE_AGE`` seconds
after its last request, and an active user's session is written at most once a minute.
"""
from __future__ import annotations

from datetime import timedelta

from django.contrib.sessions.backends import db
from django.utils import timezone
from django.utils.deprecation import MiddlewareMixin

#: The most a session's end can come before SESSION_COOKIE_AGE after its last request (and the least time
#: between two writes of an active session).
RENEW_EVERY_SECONDS = 60


class SessionStore(db.SessionStore):
    """Django's database sessions, remembering the stored expiry of the session they load."""

    stored_expiry = None

    def _get_session_from_db(self):
        stored = super()._get_session_from_db()
        self.stored_expiry = stored.expire_date if stored is not None else None
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
