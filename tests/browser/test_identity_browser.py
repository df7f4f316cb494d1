"""OpenID Connect in Chromium (design §14): the sign-in page's button, the provider's own login and
consent pages, back on the dashboard with the role the `groups` claim maps to; signing out ends
the provider's session too (it asks for the login again). The provider is npm's oidc-provider on
this machine (tests/console/identity/oidc_support.py). No console error, no failed request."""

import copy
import re

import pytest
from playwright.sync_api import expect

from console.identity import oidc
from console.models import RoleChangeAudit
from tests.browser.strict import watch
from tests.console.identity.oidc_support import LEADS, oidc_settings, running_provider

pytestmark = pytest.mark.usefixtures("committed_db")


@pytest.fixture(scope="module")
def browser_provider(live_server):
    with running_provider([live_server.url]) as issuer:
        yield issuer


@pytest.fixture
def sso(browser_provider, settings):
    oidc.forget_providers()
    for name, value in oidc_settings(browser_provider).items():
        setattr(settings, name, value)
    # As settings.py does when OIDC_ISSUER is set: the sign-out form may continue at the provider.
    policy = copy.deepcopy(settings.CONTENT_SECURITY_POLICY)
    policy["DIRECTIVES"]["form-action"].append(browser_provider)
    settings.CONTENT_SECURITY_POLICY = policy
    yield browser_provider
    oidc.forget_providers()


def _offline_fonts(page):
    # The provider's development pages import a web font; it is served empty here (no network).
    page.route(re.compile(r"^https://fonts\.(googleapis|gstatic)\.com/.*"),
               lambda route: route.fulfill(status=200, content_type="text/css", body=""))


def test_a_shift_lead_signs_in_at_the_provider_and_signing_out_ends_its_session(page, live_server, sso):
    _offline_fonts(page)
    problems = watch(page)
    base = live_server.url
    page.goto(base + "/accounts/login/")
    page.get_by_role("link", name="Sign in with Warehouse SSO").click()
    # The provider's own login form, then its consent.
    expect(page).to_have_url(re.compile("^" + re.escape(sso) + "/interaction/"))
    page.locator("input[name=login]").fill("lead-a")
    page.locator("input[name=password]").fill("any")
    page.locator("button[type=submit]").first.click()
    page.locator("button[type=submit]").first.click()  # consent: "Continue"
    expect(page).to_have_url(base + "/")
    expect(page.locator(".who")).to_contain_text("kim")
    expect(page.locator(".who .role")).to_contain_text("shift lead")
    (row,) = RoleChangeAudit.objects.all()
    assert (row.via, row.groups_seen, row.after) == ("oidc", [LEADS], ["shift lead"])

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile("^" + re.escape(sso) + "/session/end"))
    page.get_by_role("button", name="Yes, sign me out").click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/accounts/login/"))

    # The provider's session is over: signing in again asks for the login.
    page.get_by_role("link", name="Sign in with Warehouse SSO").click()
    expect(page.locator("input[name=login]")).to_be_visible()
    assert problems == []
