"""People managed in the browser: a project's members (leads and admins add, create, change and remove them)
and the site's accounts (site administrators activate, deactivate and reset passwords). Each rule is checked
through the service and, where a page shows it, through the page; every change is in the audit log."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotator.models import Account, AuditEvent, Membership, Session
from annotator.services.accounts import must_change_password
from annotator.services.members import (
    INVITATION,
    InvitationError,
    MemberError,
    accept_invitation,
    add_member,
    change_role,
    create_member,
    invited_user,
    remove_member,
    reset_password,
    set_active,
)
from annotator.services.projects import create_project, set_membership

pytestmark = pytest.mark.django_db
User = get_user_model()
ADMIN, LEAD, ANNOTATOR = Membership.Role.ADMIN, Membership.Role.LEAD, Membership.Role.ANNOTATOR
NEW_PASSWORD = "a-long-new-passphrase-42"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _roles(project) -> dict[str, str]:
    return dict(project.memberships.values_list("user__username", "role"))


def _membership_events(project) -> list[tuple[str, str, str]]:
    return [(event.username, event.detail["member"], event.detail["change"]) for event in
            AuditEvent.objects.filter(project=project, action=AuditEvent.Action.MEMBERSHIP).order_by("id")]


# --- who may open the pages ------------------------------------------------------------------------------------


def test_the_members_page_is_for_leads_and_admins_only(users, projects):
    a, b = projects["A"], projects["B"]
    url = f"/projects/{a.pk}/members/"
    assert _client(users["lead"]).get(url).status_code == 200
    assert _client(users["admin"]).get(url).status_code == 200
    assert _client(users["annotator"]).get(url).status_code == 403
    assert _client(users["outsider"]).get(url).status_code == 404
    assert _client(users["lead"]).get(f"/projects/{b.pk}/members/").status_code == 404
    # Not even a POST gets through for those who may not manage the project, and nothing changes.
    refused = _client(users["annotator"]).post(url, {"add-username": "otto", "add-role": ANNOTATOR})
    assert refused.status_code == 403
    assert "otto" not in _roles(a)


def test_the_project_page_links_to_members_for_those_allowed(users, projects):
    a = projects["A"]
    assert b'id="members-link"' in _client(users["lead"]).get(f"/projects/{a.pk}/").content
    assert b'id="members-link"' not in _client(users["annotator"]).get(f"/projects/{a.pk}/").content


def test_the_users_page_is_for_site_administrators_only(users, projects):
    assert _client(users["admin"]).get("/users/").status_code == 200
    for name in ("lead", "annotator", "outsider"):
        assert _client(users[name]).get("/users/").status_code == 403
        response = _client(users[name]).post(f"/users/{users['annotator'].pk}/active/", {"active": "0"})
        assert response.status_code == 403
    assert User.objects.get(pk=users["annotator"].pk).is_active
    assert b'href="/users/"' in _client(users["admin"]).get("/").content
    assert b'href="/users/"' not in _client(users["lead"]).get("/").content


# --- adding, creating, changing, removing ---------------------------------------------------------------------


def test_a_lead_adds_an_existing_user_and_the_change_is_audited(users, projects):
    a = projects["A"]
    response = _client(users["lead"]).post(f"/projects/{a.pk}/members/",
                                           {"add-username": "OTTO", "add-role": ANNOTATOR})
    assert response.status_code == 302
    assert _roles(a)["otto"] == ANNOTATOR
    assert _membership_events(a)[-1] == ("lea", "otto", "added as annotator")


def test_adding_is_refused_next_to_the_field_for_unknown_members_and_inactive_users(users, projects):
    a = projects["A"]
    lead = _client(users["lead"])
    for username, reason in [("nobody", "there is no user named"), ("ana", "is a member already")]:
        response = lead.post(f"/projects/{a.pk}/members/", {"add-username": username, "add-role": ANNOTATOR})
        assert response.status_code == 400
        assert reason in response.content.decode()
        assert re.search(r'class="field invalid">\s*<label for="id_add-username"', response.content.decode())
    User.objects.filter(pk=users["outsider"].pk).update(is_active=False)
    with pytest.raises(MemberError, match="deactivated"):
        add_member(project=a, by=users["lead"], username="otto", role=ANNOTATOR)
    assert _roles(a) == {"lea": LEAD, "ana": ANNOTATOR}


def test_a_lead_creates_an_account_with_a_one_time_password_shown_once(users, projects):
    a = projects["A"]
    lead = _client(users["lead"])
    response = lead.post(f"/projects/{a.pk}/members/new/", {
        "create-username": "nora", "create-email": "nora@example.org", "create-role": ANNOTATOR,
        "create-access": "password",
    })
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    password = re.search(r'<code id="one-time-password">([^<]+)</code>', response.content.decode()).group(1)
    nora = User.objects.get(username="nora")
    assert nora.check_password(password) and len(password) >= 16
    assert must_change_password(nora)
    assert _roles(a)["nora"] == ANNOTATOR
    # Shown once: the page does not show it again, and the audit log never holds it.
    assert password not in lead.get(f"/projects/{a.pk}/members/").content.decode()
    events = AuditEvent.objects.filter(project=a, object_id=str(nora.pk))
    assert {event.detail["change"] for event in events} == {"account created", "added as annotator"}
    assert all(password not in str(event.detail) for event in events)
    assert {event.username for event in events} == {"lea"}


def test_a_second_account_of_the_same_name_is_refused(users, projects):
    a = projects["A"]
    response = _client(users["lead"]).post(f"/projects/{a.pk}/members/new/", {
        "create-username": "Ana", "create-role": ANNOTATOR, "create-access": "password"})
    assert response.status_code == 400
    assert "the username &#x27;Ana&#x27; is taken" in response.content.decode()
    assert User.objects.filter(username__iexact="ana").count() == 1
    with pytest.raises(MemberError, match="Enter a valid username"):
        create_member(project=a, by=users["lead"], username="bad name!", role=ANNOTATOR)


def test_an_invitation_link_lets_the_user_choose_a_password_once(users, projects):
    a = projects["A"]
    created = create_member(project=a, by=users["lead"], username="ines", role=ANNOTATOR, access=INVITATION)
    assert created.password is None
    ines = created.user
    assert not ines.has_usable_password() and not must_change_password(ines)
    page = Client().get(created.invitation_path)  # no login needed
    assert page.status_code == 200 and "Welcome, <b>ines</b>" in page.content.decode()
    weak = Client().post(created.invitation_path, {"new_password1": "short", "new_password2": "short"})
    assert weak.status_code == 400 and "too short" in weak.content.decode()
    done = Client().post(created.invitation_path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/login/"
    ines.refresh_from_db()
    assert ines.check_password(NEW_PASSWORD)
    # Used once: the same link no longer works.
    again = Client().get(created.invitation_path)
    assert again.status_code == 404 and "not valid" in again.content.decode()
    assert AuditEvent.objects.filter(user=ines, detail__change="invitation accepted, password chosen").count() == 1


def test_an_invitation_expires_and_a_forged_one_is_refused(users, projects, settings):
    a = projects["A"]
    created = create_member(project=a, by=users["lead"], username="ines", role=ANNOTATOR, access=INVITATION)
    _, _, uidb64, token, _ = created.invitation_path.split("/")
    assert invited_user(uidb64=uidb64, token=token) == created.user
    with pytest.raises(InvitationError):
        invited_user(uidb64=uidb64, token=token[:-1] + ("a" if token[-1] != "a" else "b"))
    settings.PASSWORD_RESET_TIMEOUT = -1  # every link is past its time
    with pytest.raises(InvitationError):
        invited_user(uidb64=uidb64, token=token)
    assert Client().get(created.invitation_path).status_code == 404


def test_a_lead_changes_a_role_and_removes_a_member_audited(users, projects):
    a = projects["A"]
    lead = _client(users["lead"])
    ana = users["annotator"]
    assert lead.post(f"/projects/{a.pk}/members/{ana.pk}/", {"role": LEAD}).status_code == 302
    assert _roles(a)["ana"] == LEAD
    assert lead.post(f"/projects/{a.pk}/members/{ana.pk}/", {"remove": "on"}).status_code == 302
    assert "ana" not in _roles(a)
    assert _membership_events(a)[-2:] == [("lea", "ana", "role annotator → lead"),
                                          ("lea", "ana", "removed (was lead)")]
    # Nothing chosen: refused with the reason.
    response = lead.post(f"/projects/{a.pk}/members/{users['lead'].pk}/", {})
    assert response.status_code == 400 and "Choose a role, or remove the member." in response.content.decode()


def test_a_lead_cannot_remove_or_demote_the_last_lead(users, projects):
    a = projects["A"]
    lea = users["lead"]
    response = _client(lea).post(f"/projects/{a.pk}/members/{lea.pk}/", {"remove": "on"})
    assert response.status_code == 400 and "the project&#x27;s last lead" in response.content.decode()
    with pytest.raises(MemberError, match="last lead and cannot be given another role"):
        change_role(project=a, by=lea, member_id=lea.pk, role=ANNOTATOR)
    assert _roles(a)["lea"] == LEAD
    # With a second lead, one may go.
    change_role(project=a, by=lea, member_id=users["annotator"].pk, role=LEAD)
    remove_member(project=a, by=lea, member_id=lea.pk)
    assert _roles(a) == {"ana": LEAD}


def test_only_admins_make_or_touch_admins(users, projects):
    a = projects["A"]
    lea, ana, otto = users["lead"], users["annotator"], users["outsider"]
    response = _client(lea).post(f"/projects/{a.pk}/members/{ana.pk}/", {"role": ADMIN})
    assert response.status_code == 400 and "only an admin can make someone admin" in response.content.decode()
    with pytest.raises(MemberError, match="only an admin can make someone admin"):
        add_member(project=a, by=lea, username="otto", role=ADMIN)
    with pytest.raises(MemberError, match="only an admin can make someone admin"):
        create_member(project=a, by=lea, username="nora", role=ADMIN)
    assert not User.objects.filter(username="nora").exists()
    # A lead is not offered the admin role at all.
    assert b'<option value="admin"' not in _client(lea).get(f"/projects/{a.pk}/members/").content
    # A site administrator may; a project admin then may too, and a lead cannot demote or remove that admin.
    change_role(project=a, by=users["admin"], member_id=ana.pk, role=ADMIN)
    add_member(project=a, by=ana, username="otto", role=ADMIN)
    assert _roles(a) == {"lea": LEAD, "ana": ADMIN, "otto": ADMIN}
    with pytest.raises(MemberError, match="otto is an admin: only an admin can change or remove them"):
        change_role(project=a, by=lea, member_id=otto.pk, role=ANNOTATOR)
    with pytest.raises(MemberError, match="only an admin can change or remove them"):
        remove_member(project=a, by=lea, member_id=otto.pk)
    # An admin may remove even the last lead: admins still run the project.
    remove_member(project=a, by=ana, member_id=lea.pk)
    assert "lea" not in _roles(a)


def test_a_member_of_another_project_cannot_be_changed_from_this_one(users, projects):
    a, b = projects["A"], projects["B"]
    otto = users["outsider"]  # an annotator of B only
    response = _client(users["lead"]).post(f"/projects/{a.pk}/members/{otto.pk}/", {"remove": "on"})
    assert response.status_code == 400
    assert _roles(b) == {"otto": ANNOTATOR}


# --- the site's accounts ----------------------------------------------------------------------------------------


def test_deactivating_ends_the_sessions_and_blocks_the_next_request(users, projects):
    ana = users["annotator"]
    browser = Client()
    assert browser.post("/login/", {"username": "ana", "password": "pw-ana"}).status_code == 302
    assert browser.get(f"/projects/{projects['A'].pk}/").status_code == 200
    session_key = browser.session.session_key
    assert Session.objects.filter(pk=session_key).exists()
    response = _client(users["admin"]).post(f"/users/{ana.pk}/active/", {"active": "0"})
    assert response.status_code == 302
    assert not User.objects.get(pk=ana.pk).is_active
    assert not Session.objects.filter(pk=session_key).exists()
    assert browser.get(f"/projects/{projects['A'].pk}/").status_code == 302  # back to the login page
    assert browser.post("/login/", {"username": "ana", "password": "pw-ana"}).status_code == 200  # refused
    event = AuditEvent.objects.filter(action=AuditEvent.Action.EDIT, object_id=str(ana.pk)).get()
    assert (event.username, event.detail["change"]) == ("root", "deactivated")
    # Activated again, the account logs in; its memberships were kept.
    set_active(by=users["admin"], user_id=ana.pk, active=True)
    assert browser.post("/login/", {"username": "ana", "password": "pw-ana"}).status_code == 302
    assert _roles(projects["A"])["ana"] == ANNOTATOR


def test_an_administrator_cannot_deactivate_themselves(users):
    root = users["admin"]
    response = _client(root).post(f"/users/{root.pk}/active/", {"active": "0"})
    assert response.status_code == 400 and "you cannot deactivate your own account" in response.content.decode()
    assert User.objects.get(pk=root.pk).is_active
    with pytest.raises(MemberError, match="only a site administrator"):
        set_active(by=users["lead"], user_id=users["annotator"].pk, active=False)


def test_a_password_reset_is_shown_once_and_must_be_changed(users, projects):
    ana = users["annotator"]
    browser = Client()
    browser.post("/login/", {"username": "ana", "password": "pw-ana"})
    response = _client(users["admin"]).post(f"/users/{ana.pk}/password/")
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    password = re.search(r'<code id="one-time-password">([^<]+)</code>', response.content.decode()).group(1)
    ana.refresh_from_db()
    assert ana.check_password(password) and not ana.check_password("pw-ana")
    assert Account.objects.get(user=ana).must_change_password
    assert browser.get("/").status_code == 302  # the old session ended
    assert password not in _client(users["admin"]).get("/users/").content.decode()
    # The next login goes to the password change first.
    assert browser.post("/login/", {"username": "ana", "password": password}).status_code == 302
    assert browser.get(f"/projects/{projects['A'].pk}/")["Location"] == "/password_change/"
    event = AuditEvent.objects.get(action=AuditEvent.Action.EDIT, object_id=str(ana.pk))
    assert event.username == "root" and password not in str(event.detail)
    with pytest.raises(MemberError, match="only a site administrator"):
        reset_password(by=users["lead"], user_id=ana.pk)


def test_accepting_an_invitation_checks_the_password_rules(users, projects):
    created = create_member(project=projects["A"], by=users["lead"], username="ines", role=ANNOTATOR,
                            access=INVITATION)
    with pytest.raises(MemberError, match="too common"):
        accept_invitation(user=created.user, password="password1234")
    created.user.refresh_from_db()
    assert not created.user.has_usable_password()


def test_an_unknown_role_is_refused(users, projects):
    a = projects["A"]
    set_membership(project=a, user=users["outsider"], role=ANNOTATOR)
    with pytest.raises(MemberError, match="unknown role"):
        change_role(project=a, by=users["lead"], member_id=users["outsider"].pk, role="boss")
    assert _roles(a)["otto"] == ANNOTATOR


@pytest.mark.django_db(transaction=True)
def test_two_leads_demoting_each_other_at_once_leave_one_lead():
    """Each lead demotes the other at the same moment, thirty rounds: one change wins, the other is refused
    (the last lead), never both."""
    from tests.integration.test_races import race

    lea, leo = (User.objects.create_user(name) for name in ("lea", "leo"))
    project = create_project(name="Race", schema="MEDDOCAN", created_by=lea)

    def prepare(_round):
        set_membership(project=project, user=lea, role=LEAD)
        set_membership(project=project, user=leo, role=LEAD)
        return {}

    def check(_scene, outcomes):
        leads = list(project.memberships.filter(role=LEAD).values_list("user__username", flat=True))
        refused = [outcome for outcome in outcomes if isinstance(outcome, MemberError)]
        if len(leads) != 1 or len(refused) != 1:
            return f"leads left {leads}, outcomes {outcomes}"
        return None

    broken = race(prepare=prepare, check=check, rounds=30, contenders=[
        lambda _scene: change_role(project=project, by=lea, member_id=leo.pk, role=ANNOTATOR),
        lambda _scene: change_role(project=project, by=leo, member_id=lea.pk, role=ANNOTATOR),
    ])
    assert broken == []
