"""LOCAL_SIGN_IN (design §14): local passwords are the break-glass path. With LOCAL_SIGN_IN=false
only superusers sign in with one, and every such sign-in is recorded (append-only) and listed on
the security page; directory accounts have no local password at all."""

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, transaction

from console.models import BreakGlassSignIn
from tests.console.identity.ldap_support import PASSWORD

LOGIN = "/accounts/login/"
LOCAL_PASSWORD = "local-password-for-tests"


def sign_in(client, username, password):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/"})


def signed_in(client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id).username if user_id else None


@pytest.fixture
def local_off(ldap_on, settings):
    settings.LOCAL_SIGN_IN = False
    return ldap_on


def test_with_local_sign_in_off_a_local_account_without_superuser_is_refused(client, local_off):
    User.objects.create_user("pia", password=LOCAL_PASSWORD)
    response = sign_in(client, "pia", LOCAL_PASSWORD)
    assert response.status_code == 200 and signed_in(client) is None
    assert "did not match" in response.content.decode()
    assert not BreakGlassSignIn.objects.exists()


def test_with_local_sign_in_off_a_superuser_signs_in_and_it_is_recorded(client, local_off, caplog):
    root = User.objects.create_superuser("root", password=LOCAL_PASSWORD)
    assert sign_in(client, "root", LOCAL_PASSWORD).status_code == 302
    assert signed_in(client) == "root"
    (row,) = BreakGlassSignIn.objects.all()
    assert (row.user_id, row.username, row.address) == (root.pk, "root", "127.0.0.1")
    assert any("break-glass sign-in" in r.getMessage() for r in caplog.records)
    page = client.get("/security/").content.decode()
    assert 'id="break-glass"' in page and "root" in page
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        BreakGlassSignIn.objects.filter(pk=row.pk).delete()


def test_with_local_sign_in_off_directory_accounts_still_sign_in_and_are_not_break_glass(client, local_off):
    assert sign_in(client, "lena", PASSWORD).status_code == 302
    assert signed_in(client) == "lena"
    assert not BreakGlassSignIn.objects.exists()


def test_with_local_sign_in_on_local_accounts_sign_in_unrecorded(client, db, settings):
    assert settings.LOCAL_SIGN_IN is True
    User.objects.create_user("pia", password=LOCAL_PASSWORD)
    assert sign_in(client, "pia", LOCAL_PASSWORD).status_code == 302
    assert not BreakGlassSignIn.objects.exists()


def test_a_directory_account_has_no_local_password(client, ldap_on, settings):
    assert sign_in(client, "lena", PASSWORD).status_code == 302
    client.logout()
    settings.LDAP_SERVER_URI = ""  # the directory switched off: its accounts cannot sign in locally
    assert sign_in(client, "lena", PASSWORD).status_code == 200 and signed_in(client) is None


def test_the_sign_in_page_says_when_the_form_is_for_administrators_only(client, oidc_on, settings):
    settings.LOCAL_SIGN_IN = False
    page = client.get(LOGIN).content.decode()
    assert "Local administrator accounts only" in page and 'id="sign-in-with-oidc"' in page
