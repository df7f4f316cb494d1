"""A real OpenID provider for the identity tests: panva's oidc-provider (npm, OpenID-certified) on
Node, in tests/console/identity/oidc_provider, on a free port of 127.0.0.1. Its node_modules come
from the lock file (`npm ci`, run here under a lock when missing; scripts/test runs it too).

`provider_sign_in` is a person at the provider's own login and consent pages (the development
forms of devInteractions: the login name picks the account), driven with requests."""

import fcntl
import json
import re
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests

HERE = Path(__file__).resolve().parent / "oidc_provider"
CLIENT_ID = "console"
CLIENT_SECRET = "oidc-client-secret-for-tests-only"
OTHER_CLIENT = "other-application"  # the wrong audience
SHORT_LIVED_CLIENT = "short-lived"  # ID tokens that expire after a second
LEADS = "wh-shift-leads"
OPERATORS = "wh-operators"
# The provider's accounts: the login name is the subject. lead-a and lead-b share a name and a
# preferred_username: two people all the same.
ACCOUNTS = {
    "lead-a": {"preferred_username": "kim", "name": "Kim Lee", "email": "kim.a@example.test", "groups": [LEADS]},
    "lead-b": {"preferred_username": "kim", "name": "Kim Lee", "email": "kim.b@example.test", "groups": [LEADS]},
    "op-1": {"preferred_username": "omar", "name": "Omar Haddad", "groups": [OPERATORS, "canteen"]},
    "nobody": {"preferred_username": "nora", "name": "Nora Weiss", "groups": ["canteen"]},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_node_modules() -> None:
    """`npm ci` from the lock file when node_modules is missing (one test process at a time)."""
    if (HERE / "node_modules" / "oidc-provider").is_dir():
        return
    with open(Path(tempfile.gettempdir()) / "tidy-oidc-npm.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (HERE / "node_modules" / "oidc-provider").is_dir():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=HERE, check=True, timeout=300)


@contextmanager
def running_provider(site_urls: list[str]):
    """The provider, its clients allowed to come back to each of `site_urls` (the test client's
    http://testserver, a live server's address). Yields its issuer."""
    ensure_node_modules()
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"

    def client(client_id):
        return {"client_id": client_id, "client_secret": CLIENT_SECRET,
                "redirect_uris": [f"{site}/accounts/oidc/callback/" for site in site_urls],
                "post_logout_redirect_uris": [f"{site}/accounts/login/" for site in site_urls],
                "token_endpoint_auth_method": "client_secret_basic"}

    config = {"issuer": issuer, "accounts": ACCOUNTS, "short_lived": [SHORT_LIVED_CLIENT],
              "clients": [client(CLIENT_ID), client(OTHER_CLIENT), client(SHORT_LIVED_CLIENT)]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(config, fh)
    process = subprocess.Popen(["node", "provider.js", str(port), fh.name], cwd=HERE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{issuer}/.well-known/openid-configuration", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        else:
            pytest.fail("the test OpenID provider did not start")
        yield issuer
    finally:
        process.terminate()
        process.wait(timeout=10)
        Path(fh.name).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def provider():
    """The OpenID provider of this test process, for the test client (http://testserver)."""
    with running_provider(["http://testserver"]) as issuer:
        yield issuer


@pytest.fixture
def oidc_on(db, provider, settings):
    """OpenID Connect sign-in on, against the session's provider."""
    from console.identity import oidc

    oidc.forget_providers()
    for name, value in oidc_settings(provider).items():
        setattr(settings, name, value)
    yield provider
    oidc.forget_providers()


def oidc_settings(issuer: str, **changes) -> dict:
    return {"OIDC_ISSUER": issuer, "OIDC_CLIENT_ID": CLIENT_ID, "OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_SCOPES": "openid profile email", "OIDC_DISPLAY_NAME": "Warehouse SSO",
            "ROLE_GROUPS_SHIFT_LEAD": [LEADS], "ROLE_GROUPS_OPERATOR": [OPERATORS], "ROLE_GROUPS_SUPERVISOR": [],
            **changes}


_FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', re.S)
_INPUT = re.compile(r"<input[^>]*>")
_NAME = re.compile(r'\bname="([^"]+)"')
_VALUE = re.compile(r'\bvalue="([^"]*)"')


def _submit_form(session: requests.Session, page: requests.Response, fields: dict) -> requests.Response:
    match = _FORM.search(page.text)
    assert match, f"no form on the provider's page: {page.text[:300]}"
    data = {}
    for tag in _INPUT.findall(match.group(2)):
        if name := _NAME.search(tag):
            value = _VALUE.search(tag)
            data[name.group(1)] = unescape(value.group(1)) if value else ""
    data.update(fields)
    return session.post(urljoin(page.url, unescape(match.group(1))), data=data, allow_redirects=False)


def follow_to_site(session: requests.Session, response: requests.Response, site: str, *, login: str | None = None,
                   pages: list | None = None) -> str:
    """Follows the provider's redirects and fills its forms (login with `login`, then consent, or a
    sign-out confirmation) until it sends the browser back to `site`; returns that path and query."""
    for _ in range(12):
        if response.is_redirect:
            location = urljoin(response.url, response.headers["Location"])
            if location.startswith(site):
                return location[len(site):]
            response = session.get(location, allow_redirects=False)
            continue
        assert response.status_code == 200, (response.status_code, response.text[:300])
        if pages is not None:
            pages.append(response.text)
        if 'name="login"' in response.text:
            assert login, "the provider asks for a login"
            response = _submit_form(session, response, {"login": login, "password": "any"})
        elif "logoutForm" in response.text:
            response = _submit_form(session, response, {"logout": "yes"})
        else:
            response = _submit_form(session, response, {})
    raise AssertionError("the provider never sent the browser back")


def provider_sign_in(client, login: str, *, browser: requests.Session | None = None, pages=None):
    """The console's "sign in with" button, the provider's pages, and the redirect back to the
    console's callback (not followed: returns the callback's path and query)."""
    browser = browser or requests.Session()
    start = client.get("/accounts/oidc/start/")
    assert start.status_code == 302, start.content[:300]
    response = browser.get(start["Location"], allow_redirects=False)
    return follow_to_site(browser, response, "http://testserver", login=login, pages=pages)
