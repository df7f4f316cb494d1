"""A supervisor acknowledges a notification in a real browser, at desktop and phone width,
with JavaScript (htmx swaps the row) and without it (the plain form). Any browser console
error or page error fails the test."""

import re

import pytest
from playwright.sync_api import expect

from console.models import Notification, NotificationAcknowledgement
from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from tests.browser.strict import sideways_overflow
from tests.console_personas import make_user
from tests.notification_support import recovery_is_fresh

PASSWORD = "browser-test-pw"
VIEWPORTS = {"desktop": {"viewport": {"width": 1280, "height": 900}},
             "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}}


@pytest.fixture
def floor(notify_db, live_server, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    make_user("sup", "supervisor", password=PASSWORD)
    recovery_is_fresh()
    built = notify_db.build("paused")
    notify_db.build("paused", reason="RECOVERY_JOB_MISMATCH")
    evaluate_notifications()
    deliver_pending()
    return built


def open_page(browser, live_server, viewport: str, *, javascript: bool = True):
    context = browser.new_context(**VIEWPORTS[viewport], java_script_enabled=javascript)
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(live_server.url + "/notifications/")
    page.get_by_label("User name").fill("sup")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Notifications")).to_be_visible()
    return context, page, problems


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "no-js"])
def test_a_supervisor_acknowledges_a_notification(browser, live_server, floor, artifacts, viewport, javascript):
    n = Notification.objects.get(dedup_key="paused:RECOVERY_JOB_MISSING:A01")
    context, page, problems = open_page(browser, live_server, viewport, javascript=javascript)
    row = page.locator(f"#notification-{n.pk}")
    expect(row).to_contain_text(f"Workflow {floor.workflow_id} paused: RECOVERY_JOB_MISSING")
    expect(page.locator("#notification-counts")).to_contain_text("Open 2")
    tag = f"{viewport}-{'htmx' if javascript else 'no-js'}"
    page.screenshot(path=artifacts / f"notifications-{tag}-open.png", full_page=True)

    row.get_by_role("button", name=f"Acknowledge notification {n.pk}").click()
    expect(row.locator(".ack")).to_contain_text("by sup")
    expect(row.get_by_role("button")).to_have_count(0)
    expect(page.locator("#notification-counts")).to_contain_text("Open 1 · acknowledged 1")
    if javascript:
        expect(page).to_have_url(re.compile(r"/notifications/$"))  # swapped in place, no navigation
    page.screenshot(path=artifacts / f"notifications-{tag}-acknowledged.png", full_page=True)

    assert list(NotificationAcknowledgement.objects.values_list("notification_id", "username")) == [(n.pk, "sup")]
    overflow = sideways_overflow(page)
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    page.get_by_label("State").select_option("acknowledged")
    if not javascript:
        page.get_by_role("button", name="Apply").click()
    expect(page.locator("tbody tr.notification")).to_have_count(1)
    assert problems == []
    context.close()
