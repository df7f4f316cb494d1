"""Security pages in a real browser under the Content Security Policy: the lockout on the
sign-in page, the admin's sign-in, and a shift lead's Security page (no console errors)."""

import re

from playwright.sync_api import expect

from tests.console_personas import make_user

PASSWORD = "browser-test-password"


def _try(page, base, password):
    page.goto(base + "/accounts/login/")
    page.get_by_label("User name").fill("lead")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_a_locked_user_name_is_told_plainly_and_a_shift_lead_sees_it(page, live_server, transactional_db):
    make_user("lead", "shift lead", password=PASSWORD)
    make_user("lead2", "shift lead", password=PASSWORD)
    base = live_server.url
    for attempt in range(4):
        _try(page, base, f"wrong-{attempt}")
        expect(page.get_by_role("alert")).to_contain_text("did not match")
    _try(page, base, "wrong-5")
    expect(page.get_by_role("heading", name="Sign-in locked")).to_be_visible()
    _try(page, base, PASSWORD)
    expect(page.get_by_role("alert")).to_contain_text("Too many failed sign-ins for user name lead")

    page.goto(base + "/admin/login/")
    expect(page.locator("#id_username")).to_be_visible()

    page.goto(base + "/accounts/login/")
    page.get_by_label("User name").fill("lead2")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Security").click()
    expect(page).to_have_url(re.compile(r"/security/$"))
    expect(page.locator("#lockouts-h + .table-wrap")).to_contain_text("lead")
    expect(page.get_by_role("heading", name="Role changes")).to_be_visible()
