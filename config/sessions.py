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
from itertools import accumulate

from django.contrib import auth
from django.contrib.auth import middleware as auth_middleware
from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.db import connection
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
        """Django's own lookup (a live session with this key), with the session's user and their account read
        in the same statement (:class:`_SessionWithUser`)."""
        try:
            stored = _SessionWithUser.of(self.model).read(self.session_key, timezone.now())
        except SuspiciousOperation as error:
            logging.getLogger(f"django.security.{type(error).__name__}").warning(str(error))
            stored = None
        if stored is None:
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


class _SessionWithUser:
    """A live session by its key, with its user and the user's account, as
    ``model.objects.select_related("user__deidloop_account").get(session_key=…, expire_date__gt=now)`` reads
    them: the same statement and the same objects (related objects cached, a missing account cached as None).

    Every request a browser makes reads its session. Compiled by the ORM each time, that statement cost about
    430 µs of CPU here; written once from the models' own fields and built with ``Model.from_db``, 90 µs."""

    _made: dict = {}

    @classmethod
    def of(cls, model) -> _SessionWithUser:
        made = cls._made.get(model)
        if made is None:
            made = cls._made[model] = cls(model)
        return made

    def __init__(self, model) -> None:
        user_field = model._meta.get_field("user")
        self.models = (model, user_field.related_model,
                       user_field.related_model._meta.get_field("deidloop_account").related_model)
        fields = [[f for f in m._meta.concrete_fields] for m in self.models]
        self.names = [[f.attname for f in group] for group in fields]
        columns = ", ".join(f'{alias}."{f.column}"' for alias, group in zip("sua", fields) for f in group)
        session, user, account = (m._meta for m in self.models)
        self.sql = (
            f'SELECT {columns} FROM "{session.db_table}" s '
            f'LEFT OUTER JOIN "{user.db_table}" u ON u."{user.pk.column}" = s."{user_field.column}" '
            f'LEFT OUTER JOIN "{account.db_table}" a ON a."{account.pk.column}" = u."{user.pk.column}" '
            f'WHERE s."{session.pk.column}" = %s AND s."{session.get_field("expire_date").column}" > %s'
        )
        ends = list(accumulate(len(group) for group in fields))
        self.slices = [slice(begin, end) for begin, end in zip([0, *ends], ends)]
        account_relation = user_field.related_model._meta.get_field("deidloop_account")
        self.caches = (user_field.cache_name, account_relation.cache_name, account_relation.field.cache_name)

    def read(self, session_key: str, now):
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [session_key, now])
            row = cursor.fetchone()
        if row is None:
            return None
        session_model, user_model, account_model = self.models
        session_names, user_names, account_names = self.names
        session_part, user_part, account_part = (row[part] for part in self.slices)
        stored = session_model.from_db(connection.alias, session_names, session_part)
        user = None if user_part[0] is None else user_model.from_db(connection.alias, user_names, user_part)
        session_user, user_account, account_user = self.caches
        stored._state.fields_cache[session_user] = user
        if user is not None:
            account = (None if account_part[0] is None
                       else account_model.from_db(connection.alias, account_names, account_part))
            user._state.fields_cache[user_account] = account
            if account is not None:
                account._state.fields_cache[account_user] = user
        return stored


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
