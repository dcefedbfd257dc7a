"""Logging in: lockout after repeated failures (per account and per address, on the login page and the API's
token endpoint), the audit of failed logins and logouts, the API's authentication, idle sessions, and the
first-run accounts' forced password change."""
from __future__ import annotations

import base64
import io
import os
import re
import stat
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotator.models import Account, AuditEvent, Session

pytestmark = pytest.mark.django_db

LIMIT = settings.AXES_FAILURE_LIMIT
LOCKED = "Too many failed logins for this account or from this address"


def _log_in(client, username: str, password: str, address: str = "127.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def _token(client, username: str, password: str, address: str = "127.0.0.1"):
    return client.post("/api/auth/token/", {"username": username, "password": password}, format="json",
                       REMOTE_ADDR=address)


def test_the_limit_is_a_few_attempts():
    assert 3 <= LIMIT <= 10
    assert settings.AXES_LOCKOUT_PARAMETERS == ["username", "ip_address"]


def test_an_account_is_locked_out_after_the_limit_whatever_the_address(client, users):
    statuses = [_log_in(client, "lea", "wrong", f"10.0.0.{i}").status_code for i in range(1, LIMIT + 1)]
    assert statuses == [200] * (LIMIT - 1) + [429]
    # Now even the right password, from yet another address, is refused with the reason.
    refused = _log_in(client, "lea", "pw-lea", "10.0.1.1")
    assert refused.status_code == 429
    text = refused.content.decode()
    assert LOCKED in text and f"refused for {settings.AXES_COOLOFF_TIME.seconds // 60} minutes" in text
    assert int(refused["Retry-After"]) == int(settings.AXES_COOLOFF_TIME.total_seconds())
    assert "_auth_user_id" not in client.session
    # Another account is not affected.
    assert _log_in(client, "ana", "pw-ana", "10.0.1.1").status_code == 302


def test_an_address_is_locked_out_after_the_limit_whatever_the_account(client, users):
    statuses = [_log_in(client, f"nobody{i}", "wrong", "10.0.2.1").status_code for i in range(LIMIT)]
    assert statuses == [200] * (LIMIT - 1) + [429]
    refused = _log_in(client, "ana", "pw-ana", "10.0.2.1")
    assert refused.status_code == 429 and LOCKED in refused.content.decode()
    # The same account from another address logs in.
    assert _log_in(client, "ana", "pw-ana", "10.0.2.2").status_code == 302


def test_the_login_page_says_there_is_a_limit(client, users):
    page = _log_in(client, "lea", "wrong").content.decode()
    assert "did not match" in page and f"After {LIMIT} failed logins" in page


def test_the_token_endpoint_counts_towards_the_same_lockout(users):
    client = APIClient()
    statuses = [_token(client, "lea", "wrong", f"10.0.3.{i}").status_code for i in range(1, LIMIT + 1)]
    assert statuses == [400] * (LIMIT - 1) + [429]
    refused = _token(client, "lea", "pw-lea", "10.0.3.9")
    assert refused.status_code == 429 and LOCKED in refused.json()["detail"]
    # ... and the login page refuses that account too.
    assert _log_in(APIClient(), "lea", "pw-lea", "10.0.3.10").status_code == 429


def test_failed_logins_and_logouts_are_audited_with_name_and_address(client, users):
    _log_in(client, "lea", "wrong", "10.0.4.1")
    _token(APIClient(), "ghost", "wrong", "10.0.4.2")
    failed = list(AuditEvent.objects.filter(action=AuditEvent.Action.LOGIN_FAILED)
                  .order_by("id").values_list("username", "address", "user_id"))
    assert failed == [("lea", "10.0.4.1", None), ("ghost", "10.0.4.2", None)]
    assert "wrong" not in str(list(AuditEvent.objects.values_list("detail", flat=True)))

    assert _log_in(client, "lea", "pw-lea", "10.0.4.3").status_code == 302
    client.post("/logout/", REMOTE_ADDR="10.0.4.3")
    events = list(AuditEvent.objects.filter(user=users["lead"]).order_by("id").values_list("action", "address"))
    assert events == [("login", "10.0.4.3"), ("logout", "10.0.4.3")]


def test_locked_out_attempts_are_audited_as_such(client, users):
    for _ in range(LIMIT + 1):
        _log_in(client, "lea", "wrong", "10.0.5.1")
    details = list(AuditEvent.objects.filter(action=AuditEvent.Action.LOGIN_FAILED, username="lea")
                   .order_by("id").values_list("detail", flat=True))
    assert len(details) == LIMIT + 1
    assert details[: LIMIT - 1] == [{}] * (LIMIT - 1) and details[-1] == {"locked_out": True}


def test_basic_authentication_is_refused_by_default(users):
    assert not any("Basic" in name for name in settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"])
    client = APIClient()
    credentials = base64.b64encode(b"lea:pw-lea").decode()
    response = client.get("/api/projects/", HTTP_AUTHORIZATION=f"Basic {credentials}")
    assert response.status_code in (401, 403)


def test_a_token_from_the_endpoint_authenticates_the_api(users, projects):
    anonymous = APIClient()
    assert anonymous.get("/api/projects/").status_code in (401, 403)
    token = _token(APIClient(), "lea", "pw-lea").json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    listing = client.get("/api/projects/")
    assert listing.status_code == 200
    assert [project["name"] for project in listing.json()["results"]] == ["A"]
    # The same token again for the same user.
    assert _token(APIClient(), "lea", "pw-lea").json()["token"] == token


def test_sessions_end_after_idle_time_and_with_the_browser(client, users):
    assert settings.SESSION_COOKIE_AGE == 30 * 60
    assert settings.SESSION_EXPIRE_AT_BROWSER_CLOSE
    response = _log_in(client, "lea", "pw-lea")
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["expires"] == "" and cookie["max-age"] == ""  # a browser-session cookie
    assert client.session.get_expiry_age() == 30 * 60
    # A request renews a session whose stored expiry is over a minute old: it moves on to 30 minutes from now.
    key = client.session.session_key
    earlier = timezone.now() + timedelta(minutes=5)
    Session.objects.filter(session_key=key).update(expire_date=earlier)
    client.get("/")
    renewed = Session.objects.get(session_key=key).expire_date
    assert timedelta(minutes=29) < renewed - timezone.now() <= timedelta(minutes=30)
    # One renewed less than a minute ago is not written again: a request costs no write transaction.
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/projects/").status_code == 200
    statements = [query["sql"] for query in queries]
    table = Session._meta.db_table
    assert not [sql for sql in statements if table in sql and not sql.startswith("SELECT")]
    # The session is read with its user and their account, in one statement; the user is not read again.
    session_reads = [sql for sql in statements if table in sql]
    assert len(session_reads) == 1 and '"auth_user"' in session_reads[0] and '"annotator_account"' in session_reads[0]
    assert not [sql for sql in statements if sql.startswith('SELECT "auth_user"')]
    assert Session.objects.get(session_key=key).expire_date == renewed
    # An expired one is gone: the next request is anonymous.
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    assert client.get("/").status_code == 302


def test_password_validators_are_djangos_full_set():
    names = [validator["NAME"].rsplit(".", 1)[1] for validator in settings.AUTH_PASSWORD_VALIDATORS]
    assert names == ["UserAttributeSimilarityValidator", "MinimumLengthValidator", "CommonPasswordValidator",
                     "NumericPasswordValidator"]


@pytest.fixture
def bootstrapped(settings, tmp_path, monkeypatch):
    """The first-run accounts, made by ``bootstrap`` in an empty data folder, and what it printed."""
    settings.DATA_DIR = tmp_path

    def no_chmod(*args, **kwargs):
        raise AssertionError("the credentials file must be created with its mode, not changed afterwards")

    monkeypatch.setattr(os, "chmod", no_chmod)
    out = io.StringIO()
    call_command("bootstrap", "--no-demo", stdout=out)
    monkeypatch.undo()
    credentials = tmp_path / "credentials.txt"
    passwords = dict(re.findall(r"^\s*(\w+)\s+(\S+)$", credentials.read_text(), re.M))
    return {"file": credentials, "passwords": passwords, "printed": out.getvalue()}


def test_bootstrap_prints_the_passwords_once_and_keeps_them_in_a_private_file(bootstrapped):
    passwords = bootstrapped["passwords"]
    assert sorted(passwords) == ["admin", "annotator", "lead"]
    assert stat.S_IMODE(bootstrapped["file"].stat().st_mode) == 0o600
    assert all(password in bootstrapped["printed"] for password in passwords.values())
    assert set(Account.objects.filter(must_change_password=True).values_list("user__username", flat=True)) == set(
        passwords)

    again = io.StringIO()
    call_command("bootstrap", "--no-demo", stdout=again)
    assert "created on first run" in again.getvalue() and str(bootstrapped["file"]) in again.getvalue()
    assert not any(password in again.getvalue() for password in passwords.values())
    assert stat.S_IMODE(bootstrapped["file"].stat().st_mode) == 0o600


def test_first_login_must_change_the_generated_password(client, bootstrapped):
    password = bootstrapped["passwords"]["lead"]
    logged_in = _log_in(client, "lead", password)
    assert logged_in.status_code == 302
    # Every page leads to the password change; htmx requests are sent there too.
    for path in ["/", "/admin/", "/projects/1/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"] == "/password_change/", path
    assert client.get("/", HTTP_HX_REQUEST="true")["HX-Redirect"] == "/password_change/"
    page = client.get("/password_change/")
    assert page.status_code == 200 and "choose a password of your own" in page.content.decode()
    # The API refuses them with the reason, by session and by token.
    api = client.get("/api/projects/")
    assert api.status_code == 403 and "must change the password" in api.json()["detail"]
    token = _token(APIClient(), "lead", password)
    assert token.status_code == 403 and "must change the password" in token.json()["detail"]

    # Keeping the same password is refused; so is a weak one.
    same = client.post("/password_change/", {"old_password": password, "new_password1": password,
                                              "new_password2": password})
    assert same.status_code == 200 and "must differ" in same.content.decode()
    weak = client.post("/password_change/", {"old_password": password, "new_password1": "12345678",
                                              "new_password2": "12345678"})
    assert weak.status_code == 200 and "too short" in weak.content.decode()
    assert Account.objects.get(user__username="lead").must_change_password

    new_password = "a-Much-better-passphrase-7"
    changed = client.post("/password_change/", {"old_password": password, "new_password1": new_password,
                                                "new_password2": new_password})
    assert changed.status_code == 302 and changed["Location"] == "/"
    assert not Account.objects.get(user__username="lead").must_change_password
    assert client.get("/").status_code == 200  # still logged in, now free to go
    assert client.get("/api/projects/").status_code == 200
    assert _token(APIClient(), "lead", new_password).status_code == 200


def test_every_page_carries_the_content_security_policy(client, users):
    header = client.get("/login/")["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}
    assert directives["script-src"] == ["'self'"]
    assert directives["default-src"] == ["'self'"] and directives["object-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]


def test_a_session_names_its_user_and_ends_with_the_account(client, users):
    _log_in(client, "lea", "pw-lea")
    other = Client()
    _log_in(other, "ana", "pw-ana")
    stored = Session.objects.get(session_key=client.session.session_key)
    assert stored.user_id == users["lead"].pk
    assert sorted(Session.objects.exclude(user=None).values_list("user_id", flat=True)) == sorted(
        [users["lead"].pk, users["annotator"].pk])
    assert client.get("/api/projects/").status_code == 200

    users["lead"].delete()
    assert not Session.objects.filter(session_key=stored.session_key).exists()
    assert client.get("/api/projects/").status_code == 403  # anonymous now
    assert other.get("/api/projects/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_session_stored_for_an_account_that_is_gone_is_saved_and_read_as_nobodys():
    from config.sessions import SessionStore

    store = SessionStore()
    store[SESSION_KEY] = "999999"  # an account deleted while its session was being stored
    saving = threading.Thread(target=store.create, daemon=True)
    saving.start()
    saving.join(timeout=20)
    assert not saving.is_alive()  # saved once: no constraint of the database refuses it, and no retry loop
    assert Session.objects.get(session_key=store.session_key).user_id == 999999
    again = SessionStore(store.session_key)
    assert again[SESSION_KEY] == "999999" and again.loaded_user is None


def _fields(instance):
    return None if instance is None else (type(instance), [
        getattr(instance, field.attname) for field in instance._meta.concrete_fields])


@pytest.mark.django_db
def test_a_session_is_read_with_its_user_and_account_as_the_orms_select_related_reads_them(client, users):
    from config.sessions import SessionStore

    _log_in(client, "lea", "pw-lea")
    key = client.session.session_key
    lead = users["lead"]

    def both():
        try:
            orm = Session.objects.select_related("user__deidloop_account").get(
                session_key=key, expire_date__gt=timezone.now())
        except Session.DoesNotExist:
            orm = None
        return orm, SessionStore(key)._get_session_from_db()

    Account.objects.update_or_create(user=lead, defaults={"must_change_password": True})
    orm, ours = both()
    assert _fields(ours) == _fields(orm) and _fields(ours.user) == _fields(orm.user)
    assert _fields(ours.user.deidloop_account) == _fields(orm.user.deidloop_account)
    assert ours.user.deidloop_account.user is ours.user  # each side of the relation cached, as the ORM does
    with CaptureQueriesContext(connection) as queries:
        assert ours.user.deidloop_account.must_change_password and ours.user.username == "lea"
    assert not queries.captured_queries

    Account.objects.filter(user=lead).delete()  # no account: cached as missing, not read again
    orm, ours = both()
    field = type(lead)._meta.get_field("deidloop_account")
    assert field.is_cached(ours.user) and field.get_cached_value(ours.user) is None
    assert field.get_cached_value(orm.user) is None and _fields(ours.user) == _fields(orm.user)

    Session.objects.filter(session_key=key).update(user_id=999999)  # an account that is gone
    orm, ours = both()
    assert ours.user is None and orm.user is None and _fields(ours) == _fields(orm)

    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    assert both() == (None, None)


def test_sessions_of_djangos_own_table_move_with_their_users_and_leave_nothing_behind(client, users):
    """What an upgrade finds: sessions stored before sessions named their user, in ``django_session``."""
    from importlib import import_module

    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session as OldSession

    move_sessions = import_module("annotator.migrations.0015_sessions_moved").move_sessions
    _log_in(client, "lea", "pw-lea")
    signed_in = Session.objects.get(session_key=client.session.session_key)
    gone = Client()
    _log_in(gone, "otto", "pw-otto")
    gone_row = Session.objects.get(session_key=gone.session.session_key)
    later = timezone.now() + timedelta(hours=1)
    old = [
        OldSession(session_key=signed_in.session_key, session_data=signed_in.session_data, expire_date=later),
        OldSession(session_key=gone_row.session_key, session_data=gone_row.session_data, expire_date=later),
        OldSession(session_key="expired" * 4, session_data=signed_in.session_data,
                   expire_date=timezone.now() - timedelta(seconds=1)),
        OldSession(session_key="altered" * 4, session_data="not-signed:" + signed_in.session_data[11:],
                   expire_date=later),
    ]
    Session.objects.all().delete()
    OldSession.objects.bulk_create(old)
    users["outsider"].delete()
    before = Client()
    before.cookies[settings.SESSION_COOKIE_NAME] = signed_in.session_key
    assert before.get("/api/projects/").status_code == 403  # not read from the old table

    assert move_sessions(OldSession, Session, get_user_model()) == 3
    assert not OldSession.objects.exists()
    assert dict(Session.objects.values_list("session_key", "user_id")) == {
        signed_in.session_key: users["lead"].pk, gone_row.session_key: None, "altered" * 4: None}
    assert client.get("/api/projects/").status_code == 200  # still signed in after the upgrade
    assert gone.get("/api/projects/").status_code == 403
    assert move_sessions(OldSession, Session, get_user_model()) == 0  # run again: nothing to do
