"""OpenID Connect sign-in against a real provider (design §14): the authorization-code flow with
PKCE, the ID token verified (signature from the provider's keys, issuer, audience, expiry, nonce,
state), roles from the groups claim at every sign-in, and sign-out ending the provider's session.
The Chromium sign-in is tests/browser/test_identity_browser.py."""

import socket
import time

import jwt
import pytest
import requests
from django.contrib.auth.models import User

from console.identity import oidc
from console.identity.views import ID_TOKEN_KEY
from console.models import DirectoryIdentity, RoleChangeAudit
from console.roles import OPERATOR, SHIFT_LEAD, user_roles
from tests.console.identity.oidc_support import (
    CLIENT_ID,
    LEADS,
    OPERATORS,
    OTHER_CLIENT,
    SHORT_LIVED_CLIENT,
    follow_to_site,
    provider_sign_in,
)


def signed_in_user(client) -> User | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id) if user_id else None


def test_the_sign_in_page_offers_the_provider_beside_the_form(client, oidc_on):
    page = client.get("/accounts/login/").content.decode()
    assert 'id="sign-in-with-oidc"' in page and "Sign in with Warehouse SSO" in page
    assert 'name="password"' in page


def test_the_flow_asks_for_a_code_with_pkce_state_and_nonce(client, oidc_on):
    start = client.get("/accounts/oidc/start/?next=/security/")
    location = start["Location"]
    assert location.startswith(f"{oidc_on}/auth?")
    for part in ("response_type=code", f"client_id={CLIENT_ID}", "code_challenge_method=S256", "code_challenge=",
                 "state=", "nonce=", "scope=openid+profile+email"):
        assert part in location
    (flow,) = client.session["oidc_flows"].values()
    assert flow["next"] == "/security/" and oidc.challenge(flow["verifier"]) in location


def test_a_shift_lead_signs_in_and_lands_on_the_dashboard_with_the_role_of_the_groups_claim(client, oidc_on):
    callback = provider_sign_in(client, "lead-a")
    assert callback.startswith("/accounts/oidc/callback/?code=")
    response = client.get(callback)
    assert response.status_code == 302 and response["Location"] == "/"
    user = signed_in_user(client)
    assert user.username == "kim" and user.first_name == "Kim Lee" and not user.has_usable_password()
    assert user_roles(user) == {SHIFT_LEAD}
    identity = DirectoryIdentity.objects.get(user=user)
    assert (identity.source, identity.key, identity.groups) == ("oidc", f"{oidc_on} lead-a", [LEADS])
    (row,) = RoleChangeAudit.objects.all()
    assert (row.before, row.after, row.via, row.groups_seen) == ([], [SHIFT_LEAD], "oidc", [LEADS])
    assert client.get("/").status_code == 200


def test_roles_follow_the_groups_claim_at_every_sign_in(client, oidc_on, settings):
    client.get(provider_sign_in(client, "op-1"))
    omar = signed_in_user(client)
    assert user_roles(omar) == {OPERATOR}
    settings.ROLE_GROUPS_OPERATOR = []  # the site maps the group no more
    settings.ROLE_GROUPS_SUPERVISOR = ["canteen"]
    client.logout()
    client.get(provider_sign_in(client, "op-1"))
    assert signed_in_user(client).pk == omar.pk
    assert user_roles(User.objects.get(pk=omar.pk)) == {"supervisor"}
    last = RoleChangeAudit.objects.order_by("-id").first()
    assert (last.before, last.after, last.via, last.groups_seen) == ([OPERATOR], ["supervisor"], "oidc",
                                                                    sorted(["canteen", OPERATORS]))


def test_a_user_in_no_mapped_group_is_signed_in_to_nothing(client, oidc_on):
    client.get(provider_sign_in(client, "nobody"))
    page = client.get("/")
    assert page.status_code == 403
    assert LEADS in page.content.decode() and OPERATORS in page.content.decode()


def test_a_replayed_state_is_refused(client, oidc_on):
    callback = provider_sign_in(client, "lead-a")
    assert client.get(callback).status_code == 302
    client.logout()
    replay = client.get(callback)
    assert replay.status_code == 400 and signed_in_user(client) is None
    assert "already used" in replay.content.decode()
    stranger = client.__class__()  # another browser with the same callback address
    assert stranger.get(callback).status_code == 400 and signed_in_user(stranger) is None


def test_a_callback_with_another_state_or_a_provider_error_is_refused(client, oidc_on):
    callback = provider_sign_in(client, "lead-a")
    forged = callback.replace("state=", "state=x")
    assert client.get(forged).status_code == 400 and signed_in_user(client) is None
    client.get("/accounts/oidc/start/")
    state = list(client.session["oidc_flows"])[-1]
    assert client.get(f"/accounts/oidc/callback/?state={state}&error=access_denied").status_code == 400
    assert signed_in_user(client) is None


def _id_token_for(client, settings, provider, client_id: str) -> str:
    """A real ID token the provider issued to `client_id` (signed in through the console as that client)."""
    settings.OIDC_CLIENT_ID = client_id
    client.get(provider_sign_in(client, "lead-a"))
    token = client.session[ID_TOKEN_KEY]
    client.logout()
    settings.OIDC_CLIENT_ID = CLIENT_ID
    return token


def test_a_token_for_another_audience_is_refused(client, oidc_on, settings):
    token = _id_token_for(client, settings, oidc_on, OTHER_CLIENT)
    nonce = jwt.decode(token, options={"verify_signature": False})["nonce"]
    with pytest.raises(oidc.OidcRefused, match="InvalidAudience"):
        oidc.verify_id_token(token, found=oidc.provider(), nonce=nonce)


def test_an_expired_token_and_a_wrong_nonce_are_refused(client, oidc_on, settings, monkeypatch):
    settings.OIDC_CLIENT_ID = SHORT_LIVED_CLIENT
    token = _id_token_for(client, settings, oidc_on, SHORT_LIVED_CLIENT)
    settings.OIDC_CLIENT_ID = SHORT_LIVED_CLIENT
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 1
    with pytest.raises(oidc.OidcRefused, match="nonce"):
        oidc.verify_id_token(token, found=oidc.provider(), nonce="another-sign-in")
    monkeypatch.setattr(oidc, "LEEWAY_SECONDS", 0)
    time.sleep(max(0.0, claims["exp"] + 1.1 - time.time()))
    with pytest.raises(oidc.OidcRefused, match="ExpiredSignature"):
        oidc.verify_id_token(token, found=oidc.provider(), nonce=claims["nonce"])


def test_a_token_signed_by_another_key_is_refused(oidc_on):
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    forged = jwt.encode({"iss": oidc_on, "sub": "lead-a", "aud": CLIENT_ID, "iat": now, "exp": now + 60,
                         "nonce": "n"}, key, algorithm="RS256", headers={"kid": "not-the-providers"})
    with pytest.raises(oidc.OidcRefused, match="no key"):
        oidc.verify_id_token(forged, found=oidc.provider(), nonce="n")


def test_signing_out_ends_the_provider_session(client, oidc_on):
    browser = requests.Session()
    client.get(provider_sign_in(client, "lead-a", browser=browser))
    out = client.post("/accounts/logout/")
    assert out.status_code == 302 and out["Location"].startswith(f"{oidc_on}/session/end?")
    assert "id_token_hint=" in out["Location"] and signed_in_user(client) is None
    back = follow_to_site(browser, browser.get(out["Location"], allow_redirects=False), "http://testserver")
    assert back == "/accounts/login/"
    # The provider asks for the login again: its session is over.
    pages = []
    client.get(provider_sign_in(client, "lead-a", browser=browser, pages=pages))
    assert any('name="login"' in page for page in pages)


def test_while_signed_in_the_provider_does_not_ask_again(client, oidc_on):
    browser = requests.Session()
    client.get(provider_sign_in(client, "lead-a", browser=browser))
    client.logout()  # the console's session only (another browser tab's sign-out would be the same)
    pages = []
    client.get(provider_sign_in(client, "lead-a", browser=browser, pages=pages))
    assert not any('name="login"' in page for page in pages)


def test_a_provider_that_is_down_is_named_on_the_sign_in_page(client, oidc_on, settings):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        settings.OIDC_ISSUER = f"http://127.0.0.1:{closed.getsockname()[1]}"
    oidc.forget_providers()
    response = client.get("/accounts/oidc/start/")
    text = response.content.decode()
    assert response.status_code == 503 and "did not answer" in text and settings.OIDC_ISSUER in text


def test_a_provider_that_never_answers_is_given_up_after_the_timeout(client, oidc_on, settings):
    settings.DIRECTORY_TIMEOUT_SECONDS = 1
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    settings.OIDC_ISSUER = f"http://127.0.0.1:{silent.getsockname()[1]}"
    oidc.forget_providers()
    try:
        started = time.monotonic()
        response = client.get("/accounts/oidc/start/")
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert response.status_code == 503 and elapsed < 3


def test_discovery_that_names_another_issuer_is_refused(client, oidc_on, settings):
    settings.OIDC_ISSUER = oidc_on.replace("127.0.0.1", "localhost")
    oidc.forget_providers()
    response = client.get("/accounts/oidc/start/")
    assert response.status_code == 502 and "could not be trusted" in response.content.decode()


def test_without_oidc_the_steps_are_not_there(client, db, settings):
    settings.OIDC_ISSUER = ""
    assert client.get("/accounts/oidc/start/").status_code == 404
    assert client.get("/accounts/oidc/callback/?state=x&code=y").status_code == 404
    assert "sign-in-with-oidc" not in client.get("/accounts/login/").content.decode()


def test_an_account_an_administrator_deactivated_stays_out(client, oidc_on):
    client.get(provider_sign_in(client, "lead-a"))
    kim = signed_in_user(client)
    client.logout()
    User.objects.filter(pk=kim.pk).update(is_active=False)
    response = client.get(provider_sign_in(client, "lead-a"))
    assert response.status_code == 403 and signed_in_user(client) is None


def test_the_sign_in_page_names_the_provider_in_chinese_too(client, oidc_on):
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "使用 Warehouse SSO 登录" in page and "或使用用户名和密码" in page


def test_every_request_to_the_provider_is_journaled_without_its_secrets(client, oidc_on):
    from recovery.models import OutboundHttpRequest

    client.get(provider_sign_in(client, "lead-a"))
    rows = list(OutboundHttpRequest.objects.filter(purpose="oidc").order_by("id").values("method", "url", "status"))
    assert [(r["method"], r["url"].removeprefix(oidc_on), r["status"]) for r in rows] == [
        ("GET", "/.well-known/openid-configuration", 200), ("POST", "/token", 200), ("GET", "/jwks", 200)]
    assert not any("secret" in r["url"] for r in rows)
