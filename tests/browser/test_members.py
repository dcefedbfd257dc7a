"""The members page in a real browser: an administrator creates an annotator's account from the project's
Members page and is shown its one-time password once; the annotator logs in with it, is made to choose a
password of their own, and then sees the project."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotator.models import AuditEvent, Membership
from annotator.services.projects import create_project
from tests.browser.conftest import (
    CHROMIUM, PASSWORD, choose_own_password, create_account, log_in, screenshot,
)

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.django_db(transaction=True),
]

NEW_PASSWORD = "a-passphrase-of-her-own-7"


def test_an_admin_adds_a_new_annotator_who_logs_in_and_changes_the_password(live_server, new_page):
    admin = get_user_model().objects.create_superuser("root-members", password=PASSWORD)
    project = create_project(name="Members in the browser", schema="MEDDOCAN")

    page = new_page()
    log_in(page, live_server.url, admin.username, f"/projects/{project.pk}/")
    page.click("#members-link")
    page.wait_for_url(f"**/projects/{project.pk}/members/")
    password = create_account(page, username="nina", role=Membership.Role.ANNOTATOR)
    assert len(password) >= 16
    assert "nina" in page.locator("#members").inner_text()
    screenshot(page, "members-new-account")
    # Shown once: opening the page again does not show it.
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    assert page.locator("#one-time-password").count() == 0
    assert password not in page.content()
    assert page.script_errors == []

    nina = get_user_model().objects.get(username="nina")
    assert Membership.objects.get(project=project, user=nina).role == Membership.Role.ANNOTATOR
    assert AuditEvent.objects.filter(project=project, user=admin, action=AuditEvent.Action.MEMBERSHIP,
                                     detail__member="nina").count() == 2  # the account, then the membership

    annotator = new_page()
    log_in(annotator, live_server.url, "nina", "/", password=password)
    annotator.wait_for_url("**/password_change/")
    assert "choose a password of your own" in annotator.inner_text("main")
    # Before the change, the project is out of reach: every page leads back to the password change.
    annotator.goto(f"{live_server.url}/projects/{project.pk}/")
    choose_own_password(annotator, live_server.url, one_time_password=password, new_password=NEW_PASSWORD)
    assert "Your password was changed." in annotator.inner_text("main")
    annotator.click(f"text={project.name}")
    annotator.wait_for_url(f"**/projects/{project.pk}/")
    assert annotator.inner_text("h1") == project.name
    assert annotator.locator("#members-link").count() == 0  # an annotator does not manage members
    screenshot(annotator, "members-annotator-sees-project")
    nina.refresh_from_db()
    assert nina.check_password(NEW_PASSWORD)
    assert annotator.script_errors == []
