"""Sign-in throttling (django-axes, attempts in PostgreSQL): 5 failed sign-ins for one user name
within 15 minutes lock that user name for 15 minutes, whatever the password, on the console's
sign-in page and on the admin's; the lockout is shown, recorded, logged and listed for shift leads."""

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.urls import reverse

from tests.console_personas import make_user

PASSWORD = "right-password-for-tests"
CONSOLE_LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"


@pytest.fixture
def olga(db):
    return User.objects.create_user("olga", password=PASSWORD, is_staff=True, is_superuser=True)


def sign_in(client, path, username, password):
    return client.post(path, {"username": username, "password": password, "next": "/"})


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("path", [CONSOLE_LOGIN, ADMIN_LOGIN])
def test_five_failures_lock_the_user_name_whatever_the_password(client, olga, path, caplog):
    caplog.set_level(logging.WARNING, logger="console.security")
    for attempt in range(1, 5):
        response = sign_in(client, path, "olga", f"wrong-{attempt}")
        assert response.status_code == 200, attempt
        assert not signed_in(client)
    fifth = sign_in(client, path, "olga", "wrong-5")
    assert fifth.status_code == 429
    assert "Sign-in locked" in fifth.content.decode() and "olga" in fifth.content.decode()

    right = sign_in(client, path, "olga", PASSWORD)
    assert right.status_code == 429
    assert "Too many failed sign-ins" in right.content.decode()
    assert not signed_in(client)

    attempt = AccessAttempt.objects.get(username="olga")
    assert attempt.failures_since_start >= 5
    assert AccessFailureLog.objects.filter(username="olga", locked_out=True).exists()
    assert any("sign-in locked" in r.getMessage() and "olga" in r.getMessage() for r in caplog.records)


def test_a_lock_from_the_console_holds_on_the_admin_and_other_user_names_are_free(client, olga):
    User.objects.create_user("pavel", password=PASSWORD)
    for attempt in range(5):
        sign_in(client, CONSOLE_LOGIN, "olga", f"wrong-{attempt}")
    assert sign_in(client, ADMIN_LOGIN, "olga", PASSWORD).status_code == 429
    assert not signed_in(client)
    # Locked by user name, not by address: the same client signs in as someone else.
    response = sign_in(client, CONSOLE_LOGIN, "pavel", PASSWORD)
    assert response.status_code == 302 and signed_in(client)


def test_changing_address_or_browser_does_not_escape_the_lock(client, olga):
    for attempt in range(5):
        client.post(CONSOLE_LOGIN, {"username": "olga", "password": f"wrong-{attempt}"},
                    REMOTE_ADDR=f"10.0.0.{attempt + 1}", HTTP_USER_AGENT=f"guesser/{attempt}")
    response = client.post(CONSOLE_LOGIN, {"username": "olga", "password": PASSWORD}, REMOTE_ADDR="10.9.9.9",
                           HTTP_USER_AGENT="fresh/1")
    assert response.status_code == 429 and not signed_in(client)
    from console.security.views import current_lockouts

    (lock,) = current_lockouts()
    # The refused attempt made during the lock counts as well (and restarts the cool-off).
    assert (lock["username"], lock["failures"], lock["addresses"]) == ("olga", 6, 6)


def test_the_lock_ends_after_the_cool_off(client, olga):
    for attempt in range(5):
        sign_in(client, CONSOLE_LOGIN, "olga", f"wrong-{attempt}")
    assert sign_in(client, CONSOLE_LOGIN, "olga", PASSWORD).status_code == 429
    # 14 minutes after the last failure: still locked.
    last = AccessAttempt.objects.get(username="olga").attempt_time
    AccessAttempt.objects.filter(username="olga").update(attempt_time=last - timedelta(minutes=14))
    assert sign_in(client, CONSOLE_LOGIN, "olga", PASSWORD).status_code == 429
    # 15 minutes after the last failure: the cool-off is over.
    last = AccessAttempt.objects.get(username="olga").attempt_time
    AccessAttempt.objects.filter(username="olga").update(attempt_time=last - timedelta(minutes=15, seconds=1))
    response = sign_in(client, CONSOLE_LOGIN, "olga", PASSWORD)
    assert response.status_code == 302 and signed_in(client)
    assert not AccessAttempt.objects.filter(username="olga").exists()  # reset on success


def test_four_failures_do_not_lock(client, olga):
    for attempt in range(4):
        sign_in(client, CONSOLE_LOGIN, "olga", f"wrong-{attempt}")
    response = sign_in(client, CONSOLE_LOGIN, "olga", PASSWORD)
    assert response.status_code == 302 and signed_in(client)


def test_a_shift_lead_sees_current_lockouts_and_others_do_not(client, personas):
    make_user("olga", password=PASSWORD)
    for attempt in range(5):
        sign_in(client, CONSOLE_LOGIN, "olga", f"wrong-{attempt}")
    client.force_login(personas["shiftlead"])
    page = client.get(reverse("security"))
    assert page.status_code == 200
    assert [lock["username"] for lock in page.context["lockouts"]] == ["olga"]
    assert "Locked now" in page.content.decode() and "olga" in page.content.decode()
    for who in ("operator", "supervisor", "norole"):
        client.force_login(personas[who])
        assert client.get(reverse("security")).status_code == 403, who
    client.logout()
    assert client.get(reverse("security")).status_code == 302


@pytest.mark.parametrize("password", ["1", "password123", "12345678901234", "short"])
def test_django_password_validators_refuse_weak_passwords(password):
    with pytest.raises(ValidationError):
        validate_password(password, User(username="shiftlead"))
