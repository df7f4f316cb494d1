"""Four eyes with directory accounts (design §14): a directory user is their stable key (OIDC issuer
and subject, LDAP entry), never their display name. Two people who share a name are two shift
leads, and may propose and approve; one person signed in from two browsers is one shift lead, and
may not approve their own proposal."""

from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator

from console.models import CancelProposal, RepairAudit
from tests.console.identity.ldap_support import PASSWORD
from tests.console.identity.oidc_support import provider_sign_in
from tests.console.repair.test_four_eyes import decide_proposal, propose
from tests.repair_support import paused
from tests.wms_state import diff, snapshot


def oidc_browser(client_class, login: str):
    browser = client_class()
    assert browser.get(provider_sign_in(browser, login)).status_code == 302
    return browser


def ldap_browser(client_class, username: str):
    browser = client_class()
    response = browser.post("/accounts/login/", {"username": username, "password": PASSWORD, "next": "/"})
    assert response.status_code == 302
    return browser


def signed_in(browser) -> User:
    return User.objects.get(pk=browser.session["_auth_user_id"])


def test_two_oidc_people_with_one_display_name_propose_and_approve(repair_db, oidc_on, client):
    first, second = oidc_browser(client.__class__, "lead-a"), oidc_browser(client.__class__, "lead-b")
    a, b = signed_in(first), signed_in(second)
    assert (a.first_name, b.first_name) == ("Kim Lee", "Kim Lee") and a.pk != b.pk
    assert a.username == "kim" and b.username.startswith("kim+")
    UnicodeUsernameValidator()(b.username)  # a name the admin's forms accept
    wid = paused(repair_db, "job_missing").workflow_id
    assert propose(first, wid).status_code == 303
    proposal = CancelProposal.objects.get()
    assert proposal.proposed_by == a
    response = decide_proposal(second, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR")
    assert response.status_code == 303, response.content.decode()[:400]
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("APPLIED", b)


def test_one_oidc_person_in_two_browsers_cannot_approve_their_own_proposal(repair_db, oidc_on, client):
    first, again = oidc_browser(client.__class__, "lead-a"), oidc_browser(client.__class__, "lead-a")
    assert signed_in(first).pk == signed_in(again).pk
    assert User.objects.filter(directory_identity__source="oidc").count() == 1
    wid = paused(repair_db, "job_missing").workflow_id
    propose(first, wid)
    proposal = CancelProposal.objects.get()
    before = snapshot()
    assert decide_proposal(again, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR").status_code == 403
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "PENDING"
    assert RepairAudit.objects.get(action="CANCEL_APPROVE").outcome == "REFUSED:SELF_APPROVAL"


def test_two_ldap_people_with_one_display_name_propose_and_approve(repair_db, ldap_on, client):
    first, second = ldap_browser(client.__class__, "kim"), ldap_browser(client.__class__, "kimberly")
    a, b = signed_in(first), signed_in(second)
    assert (a.get_full_name(), b.get_full_name()) == ("Kim Lee", "Kim Lee") and a.pk != b.pk
    wid = paused(repair_db, "job_missing").workflow_id
    propose(first, wid)
    proposal = CancelProposal.objects.get()
    assert decide_proposal(second, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR").status_code == 303
    proposal.refresh_from_db()
    assert (proposal.status, proposal.proposed_by, proposal.decided_by) == ("APPLIED", a, b)


def test_one_ldap_person_in_two_browsers_cannot_approve_their_own_proposal(repair_db, ldap_on, client):
    first, again = ldap_browser(client.__class__, "kim"), ldap_browser(client.__class__, "kim")
    assert signed_in(first).pk == signed_in(again).pk
    wid = paused(repair_db, "job_missing").workflow_id
    propose(first, wid)
    proposal = CancelProposal.objects.get()
    assert decide_proposal(again, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR").status_code == 403
    proposal.refresh_from_db()
    assert proposal.status == "PENDING"
