"""A shift lead reads the chat channels page and sends a test message in a real browser at phone
width (390 px), in English and in Chinese; the message reaches a WeCom-like robot. Any browser
console error or page error fails the test."""

import pytest
from playwright.sync_api import expect

from console.models import ChannelTestMessage
from console.notifications.delivery import deliver_pending
from tests.browser.strict import sideways_overflow
from tests.chat_receivers import ChatReceiver, configure_channels
from tests.console_personas import make_user

PASSWORD = "browser-test-pw"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LANGUAGES = {"en": {"locale": "en-US", "sign_in": "Sign in", "send": "Send a test message to floor-wecom",
                    "queued": "is queued", "sent": ": sent", "title": "Chat channels",
                    "message": "Test message from the Tidy Recovery Console"},
             "zh-hans": {"locale": "zh-CN", "sign_in": "登录", "send": "向 floor-wecom 发送测试消息",
                         "queued": "已排队", "sent": "：已发送", "title": "聊天渠道",
                         "message": "整理恢复控制台的测试消息"}}


@pytest.fixture
def robot():
    r = ChatReceiver("wecom")
    yield r
    r.stop()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_shift_lead_sends_a_test_message_from_a_phone(browser, live_server, notify_db, settings, tmp_path, robot,
                                                        artifacts, language):
    words = LANGUAGES[language]
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor-wecom"
kind = "wecom"
url = "{robot.url}"
language = "{language}"
events = ["paused", "paused_too_long", "stalled"]
mention = ["13800000000"]

[[channel]]
name = "leads-dingtalk-escalations"
kind = "dingtalk"
url = "https://oapi.dingtalk.com/robot/send?access_token=not-used-in-this-test"
secret = "SECnot-used"
escalation_only = true
""")
    make_user("lead", "shift lead", password=PASSWORD)
    context = browser.new_context(**PHONE, locale=words["locale"])
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(live_server.url + "/notifications/channels/")
    page.locator("#id_username").fill("lead")
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name=words["sign_in"]).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(words["title"])
    row = page.locator("#channel-floor-wecom")
    expect(row).to_contain_text(f"127.0.0.1:{robot.port}")
    expect(page.locator("#channel-leads-dingtalk-escalations")).to_contain_text("oapi.dingtalk.com")
    assert "not-used-in-this-test" not in page.content() and robot.token not in page.content()
    assert sideways_overflow(page) <= 0, "the page scrolls sideways"

    page.get_by_role("button", name=words["send"]).click()
    expect(page.locator("#channel-tested")).to_contain_text(words["queued"])
    (test,) = ChannelTestMessage.objects.all()
    assert (test.channel, test.username) == ("floor-wecom", "lead")
    deliver_pending()
    (text,) = robot.texts()
    assert words["message"] in text

    page.goto(live_server.url + "/notifications/channels/")
    expect(page.locator("#channel-floor-wecom-test")).to_contain_text(words["sent"])
    page.screenshot(path=artifacts / f"channels-phone-{language}.png", full_page=True)
    assert sideways_overflow(page) <= 0, "the page scrolls sideways"
    assert problems == []
    context.close()
