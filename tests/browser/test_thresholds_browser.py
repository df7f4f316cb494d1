"""The thresholds page (/notifications/thresholds/) at phone width, as every role sees it: the
read-only table of supervisors and operators, the form of shift leads and administrators. No
sideways scroll at 390 px, no browser console error, no failed request."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from console.models import NotificationThreshold
from recovery.engine.decisions import Reason
from tests.browser.strict import VIEWPORTS, sideways_overflow, watch
from tests.console_personas import make_user

PASSWORD = "browser-test-pw"
ROLES = {"supervisor": "supervisor", "operator": "operator", "shiftlead": "shift lead", "admin": None}


@pytest.fixture
def accounts(transactional_db, live_server):
    for name, role in ROLES.items():
        if role:
            make_user(name, role, password=PASSWORD)
        else:
            User.objects.create_superuser(name, password=PASSWORD)
    # One code set by a shift lead (the longest code), the others at the default.
    longest = max((r.value for r in Reason), key=len)
    NotificationThreshold.objects.create(reason_code=longest, paused_too_long_minutes=10080)
    return live_server


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
@pytest.mark.parametrize("username", list(ROLES))
def test_the_thresholds_page_fits_the_screen_for_every_role(browser, accounts, artifacts, username, viewport):
    context = browser.new_context(**VIEWPORTS[viewport])
    page = context.new_page()
    problems = watch(page)
    page.goto(accounts.url + "/notifications/thresholds/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Notification thresholds")).to_be_visible()
    editing = username in ("shiftlead", "admin")
    if editing:
        expect(page.get_by_role("button", name="Save thresholds")).to_be_visible()
    else:
        expect(page.get_by_role("button", name="Save thresholds")).to_have_count(0)
        for reason in Reason:
            expect(page.get_by_role("cell", name=reason.value, exact=True)).to_be_visible()
    page.screenshot(path=artifacts / f"thresholds-{username}-{viewport}.png", full_page=True)
    width = VIEWPORTS[viewport]["viewport"]["width"]
    overflow = sideways_overflow(page, width)
    assert overflow <= 0, f"{username} at {width} px: the page scrolls sideways by {overflow}px"
    # Nothing inside the content is cut off or wider than the window either.
    widest = page.evaluate("""() => Math.max(...[...document.querySelectorAll('main *')]
                                   .map(e => e.getBoundingClientRect().right))""")
    assert widest <= width, f"{username} at {width} px: an element ends at {widest}px"
    assert problems == []
    context.close()
