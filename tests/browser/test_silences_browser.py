"""A shift lead creates and ends a silence in a real browser at phone width (390 px), in English
and in Chinese, and the notification it holds back is marked silenced on the list. Any browser
console error or page error fails the test."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from console.models import Notification, Silence, SilenceEnding
from console.notifications.evaluate import evaluate_notifications
from tests.browser.strict import sideways_overflow
from tests.console_personas import make_user
from tests.notification_support import recovery_is_fresh

PASSWORD = "browser-test-pw"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LANGUAGES = {"en": {"locale": "en-US", "sign_in": "Sign in", "create": "Silence", "end": "End silence",
                    "ended": "ended by lead", "silenced": "Silenced (silence"},
             "zh-hans": {"locale": "zh-CN", "sign_in": "登录", "create": "静默", "end": "结束静默",
                         "ended": "由 lead 于", "silenced": "已静默（静默"}}


@pytest.fixture
def floor(notify_db, live_server, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    make_user("lead", "shift lead", password=PASSWORD)
    recovery_is_fresh()
    notify_db.build("paused")  # in aisle A01
    return notify_db


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_shift_lead_creates_and_ends_a_silence_on_a_phone(browser, live_server, floor, artifacts, language):
    words = LANGUAGES[language]
    context = browser.new_context(**PHONE, locale=words["locale"])
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(live_server.url + "/notifications/silences/")
    page.locator("#id_username").fill("lead")
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name=words["sign_in"]).click()
    expect(page.locator("#silence-form")).to_be_visible()

    end = timezone.localtime(timezone.now() + timedelta(hours=3))
    page.locator("#id_aisle").fill("A01")
    page.locator("#id_ends_at").fill(end.strftime("%Y-%m-%dT%H:%M"))
    page.locator("#id_comment").fill("shuttle A01 maintenance")
    page.locator("#silence-form").get_by_role("button", name=words["create"], exact=True).click()
    expect(page.locator("#silence-created")).to_be_visible()
    (s,) = Silence.objects.all()
    assert (s.aisle, s.username, s.comment) == ("A01", "lead", "shuttle A01 maintenance")
    row = page.locator(f"#silence-{s.pk}")
    expect(row).to_contain_text("shuttle A01 maintenance")
    page.screenshot(path=artifacts / f"silences-phone-{language}-created.png", full_page=True)
    overflow = sideways_overflow(page)
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"

    evaluate_notifications()  # the paused workflow's notification is held back and marked
    page.goto(live_server.url + "/notifications/")
    n = Notification.objects.get()
    expect(page.locator(f"#notification-{n.pk}")).to_contain_text(words["silenced"])
    assert sideways_overflow(page) <= 0

    page.goto(live_server.url + "/notifications/silences/")
    page.get_by_role("button", name=f"{words['end']} {s.pk}").click()
    expect(page.locator("#silences-past")).to_contain_text(words["ended"])
    assert list(SilenceEnding.objects.values_list("silence_id", "username")) == [(s.pk, "lead")]
    page.screenshot(path=artifacts / f"silences-phone-{language}-ended.png", full_page=True)
    assert sideways_overflow(page) <= 0
    assert problems == []
    context.close()
