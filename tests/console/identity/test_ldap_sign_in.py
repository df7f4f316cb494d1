"""LDAP / Active Directory sign-in against a real slapd (design §14): the ordinary form checks the
password at the directory, roles follow the groups at every sign-in (audited with the source and
the groups seen), failed directory passwords count toward the lockout, and a directory that does
not answer is named on the sign-in page while a local superuser still signs in."""

import socket
import time

from axes.models import AccessAttempt
from django.contrib.auth.models import User

from console.models import DirectoryIdentity, RoleChangeAudit
from console.roles import OPERATOR, SHIFT_LEAD, user_roles
from tests.console.identity.ldap_support import (
    LEADS,
    PASSWORD,
    group_dn,
    person_dn,
    set_membership,
)

LOGIN = "/accounts/login/"


def sign_in(client, username, password=PASSWORD):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/"})


def signed_in_user(client) -> User | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id) if user_id else None


def test_a_shift_lead_of_the_directory_signs_in_with_the_ordinary_form_and_gets_the_role(client, ldap_on):
    response = sign_in(client, "lena")
    assert response.status_code == 302 and response["Location"] == "/"
    user = signed_in_user(client)
    assert user.username == "lena" and (user.first_name, user.last_name) == ("Lena", "Berg")
    assert not user.has_usable_password()
    assert user_roles(user) == {SHIFT_LEAD}
    identity = DirectoryIdentity.objects.get(user=user)
    assert (identity.source, identity.key) == ("ldap", person_dn(ldap_on, "lena").lower())
    (row,) = RoleChangeAudit.objects.all()
    assert (row.username, row.before, row.after, row.via) == ("lena", [], [SHIFT_LEAD], "ldap")
    assert [g.lower() for g in row.groups_seen] == [group_dn(ldap_on, LEADS).lower()]
    assert client.get("/security/").status_code == 200  # a shift lead's page


def test_removed_from_the_group_the_next_sign_in_has_no_role_and_the_audit_says_so(client, ldap_on):
    assert sign_in(client, "otto").status_code == 302
    otto = signed_in_user(client)
    assert user_roles(otto) == {OPERATOR}
    set_membership(ldap_on, "otto", "operators", member=False)
    try:
        client.logout()
        assert sign_in(client, "otto").status_code == 302
        otto = User.objects.get(pk=otto.pk)
        assert user_roles(otto) == set()
        last = RoleChangeAudit.objects.order_by("-id").first()
        assert (last.username, last.before, last.after, last.via, last.groups_seen) == (
            "otto", [OPERATOR], [], "ldap", [])
        # Signed in to nothing: every page is 403 and says which groups grant a role.
        page = client.get("/")
        assert page.status_code == 403
        assert group_dn(ldap_on, "operators") in page.content.decode()
        assert RoleChangeAudit.objects.count() == 2  # granted, then removed: nothing else
    finally:
        set_membership(ldap_on, "otto", "operators", member=True)


def test_a_user_in_no_mapped_group_gets_the_403_that_says_whom_to_ask(client, ldap_on):
    assert sign_in(client, "nina").status_code == 302
    page = client.get("/")
    assert page.status_code == 403
    text = page.content.decode()
    assert "company directory" in text and group_dn(ldap_on, LEADS) in text
    assert not RoleChangeAudit.objects.exists()  # no role before, none after: no change


def test_a_wrong_directory_password_fails_and_five_lock_the_user_name(client, ldap_on):
    for attempt in range(4):
        response = sign_in(client, "lena", f"wrong-{attempt}")
        assert response.status_code == 200
        assert "did not match" in response.content.decode()
        assert signed_in_user(client) is None
    assert sign_in(client, "lena", "wrong-5").status_code == 429
    assert sign_in(client, "lena").status_code == 429  # the right password too, while locked
    assert signed_in_user(client) is None
    assert AccessAttempt.objects.get(username="lena").failures_since_start >= 5


def test_a_local_account_of_the_same_name_is_never_taken_over(client, ldap_on):
    local = User.objects.create_user("lena", password="local-password-1234")
    assert sign_in(client, "lena").status_code == 302
    user = signed_in_user(client)
    assert user.pk != local.pk and user.username.startswith("lena+")
    assert user_roles(User.objects.get(pk=local.pk)) == set()


def test_a_stopped_directory_is_named_and_a_local_superuser_still_signs_in(client, ldap_on, settings):
    User.objects.create_superuser("root", password="break-glass-password-1")
    assert sign_in(client, "lena").status_code == 302  # a session from before the outage
    before = client.get("/")
    assert before.status_code == 200
    ldap_on.terminate()
    ldap_on.wait()
    try:
        other = client.__class__()
        started = time.monotonic()
        response = sign_in(other, "lena")
        assert time.monotonic() - started < settings.DIRECTORY_TIMEOUT_SECONDS
        text = response.content.decode()
        assert response.status_code == 200 and signed_in_user(other) is None
        assert "did not answer" in text and ldap_on.ldap_uri in text and "did not match" not in text
        assert client.get("/").status_code == 200  # signed-in sessions go on
        for _ in range(settings.AXES_FAILURE_LIMIT):  # an outage is no guessed password: nobody is locked
            sign_in(other, "lena")
        assert not AccessAttempt.objects.filter(username="lena").exists()
        assert sign_in(other, "root", "break-glass-password-1").status_code == 302
        assert signed_in_user(other).username == "root"
    finally:
        ldap_on.resume()
    assert sign_in(client.__class__(), "lena").status_code == 302  # back, and lena was never locked


def test_a_directory_that_accepts_but_never_answers_is_given_up_after_the_timeout(client, ldap_on, settings):
    settings.DIRECTORY_TIMEOUT_SECONDS = 1
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel accepts the connection; nobody ever answers
    settings.LDAP_SERVER_URI = f"ldap://127.0.0.1:{silent.getsockname()[1]}"
    try:
        started = time.monotonic()
        response = sign_in(client, "lena")
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert response.status_code == 200 and signed_in_user(client) is None
    assert "did not answer" in response.content.decode()
    assert elapsed < 1 + 2  # the timeout, and the little a sign-in costs besides


def test_with_ldap_unset_the_form_checks_local_passwords_only(db, client, directory, settings):
    settings.LDAP_SERVER_URI = ""
    assert sign_in(client, "lena").status_code == 200
    assert not DirectoryIdentity.objects.exists()


def test_an_account_an_administrator_deactivated_stays_out(client, ldap_on):
    assert sign_in(client, "lena").status_code == 302
    lena = signed_in_user(client)
    client.logout()
    User.objects.filter(pk=lena.pk).update(is_active=False)
    assert sign_in(client, "lena").status_code == 200 and signed_in_user(client) is None
