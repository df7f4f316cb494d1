"""/notifications/channels/ (design §15): shift leads see each chat channel's kind, filters, host,
last success, last failure with the vendor's code and what waits; "send a test message" queues one
message (audited, rate limited) that the delivery worker sends once to a robot-like receiver."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.models import ChannelTestMessage
from console.notifications.delivery import deliver_pending
from tests.chat_receivers import ChatReceiver, configure_channels

pytestmark = pytest.mark.usefixtures("committed_db")

URL = "/notifications/channels/"


@pytest.fixture
def robot():
    r = ChatReceiver("wecom")
    yield r
    r.stop()


@pytest.fixture
def floor(notify_db, personas, settings, tmp_path, robot):
    settings.CONSOLE_BASE_URL = "https://console.warehouse.example"
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor-wecom"
kind = "wecom"
url = "{robot.url}"
language = "zh-Hans"
events = ["paused", "stalled"]
mention = ["13800000000"]
""")
    return notify_db


def test_only_shift_leads_see_the_channels(client, personas, floor, robot):
    assert client.get(URL).status_code == 302  # to the sign-in page
    for name in ("norole", "operator", "supervisor"):
        client.force_login(personas[name])
        assert client.get(URL).status_code == 403
        assert client.post(f"{URL}floor-wecom/test").status_code == 403
    assert ChannelTestMessage.objects.count() == 0 and robot.accepted == []
    client.force_login(personas["shiftlead"])
    response = client.get(URL)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="channel-floor-wecom"' in html and "wecom" in html and "paused, stalled" in html
    assert f"127.0.0.1:{robot.port}" in html and robot.token not in html and "key=" not in html
    assert "mentions 1 person on escalation" in html and "none yet" in html


def test_the_test_button_sends_one_message_and_audits_it(client, personas, floor, robot):
    lead = personas["shiftlead"]
    client.force_login(lead)
    assert client.get(f"{URL}floor-wecom/test").status_code == 405
    response = client.post(f"{URL}floor-wecom/test")
    assert response.status_code == 303 and response["Location"].startswith(f"{URL}?tested=floor-wecom")
    (test,) = ChannelTestMessage.objects.all()
    assert (test.channel, test.username, test.requested_by_id, test.state) == ("floor-wecom", "shiftlead", lead.pk,
                                                                                "pending")
    assert "queued" in client.get(response["Location"]).content.decode()
    assert robot.accepted == []  # never sent from the request

    deliver_pending()
    deliver_pending()
    (text,) = robot.texts()  # one message, in the channel's language
    assert "整理恢复控制台的测试消息" in text and "shiftlead 在渠道页面请求了这条测试消息" in text
    assert "floor-wecom" in text
    test.refresh_from_db()
    assert (test.state, test.error) == ("sent", "")
    html = client.get(URL).content.decode()
    assert "Last test by shiftlead" in html and ": sent" in html


def test_a_refused_test_message_shows_the_vendors_code(client, personas, floor, robot, settings, tmp_path):
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor-wecom"
kind = "wecom"
url = "{robot.url_with('revoked')}"
""")
    client.force_login(personas["shiftlead"])
    client.post(f"{URL}floor-wecom/test")
    deliver_pending()
    test = ChannelTestMessage.objects.get()
    assert (test.state, test.vendor_code) == ("failed", "93000")
    html = client.get(URL).content.decode()
    assert "93000" in html and "invalid webhook url" in html and ": failed" in html


def test_an_unknown_channel_is_a_404_naming_it_and_stores_nothing(client, personas, floor):
    client.force_login(personas["shiftlead"])
    response = client.post(f"{URL}no-such-robot/test")
    assert response.status_code == 404 and "no-such-robot" in response.content.decode()
    response = client.post(f"{URL}%00%E2%80%AE/test")
    assert response.status_code == 404
    assert ChannelTestMessage.objects.count() == 0


def test_test_messages_are_rate_limited_like_other_buttons(client, personas, floor, settings):
    settings.CHANNEL_TESTS_PER_USER_PER_HOUR = 2
    client.force_login(personas["shiftlead"])
    assert [client.post(f"{URL}floor-wecom/test").status_code for _ in range(2)] == [303, 303]
    response = client.post(f"{URL}floor-wecom/test")
    assert response.status_code == 429 and int(response["Retry-After"]) > 3000
    assert "2 test messages in the last hour" in response.content.decode()
    assert ChannelTestMessage.objects.count() == 2


def test_the_page_speaks_chinese_and_refreshes_its_fragment(client, personas, floor):
    client.force_login(personas["shiftlead"])
    html = client.get(URL, headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "聊天渠道" in html and "发送测试消息" in html and "最近失败" in html
    fragment = client.get(URL, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<section id="channels-list"') and "<html" not in fragment


def test_without_channels_the_page_says_how_to_configure_them(client, personas, notify_db, settings):
    settings.NOTIFY_CHANNELS, settings.NOTIFY_CHANNELS_FILE = (), ""
    client.force_login(personas["shiftlead"])
    html = client.get(URL).content.decode()
    assert "No chat channel is configured" in html and "NOTIFY_CHANNELS_FILE" in html


def test_the_query_count_does_not_grow_with_channels(client, personas, notify_db, settings, tmp_path):
    client.force_login(personas["shiftlead"])

    def count(n: int) -> int:
        configure_channels(settings, tmp_path, "".join(
            f'[[channel]]\nname = "c{i}"\nkind = "slack"\nurl = "https://hooks.slack.com/services/{i}"\n'
            for i in range(n)))
        with CaptureQueriesContext(connection) as queries:
            assert client.get(URL).status_code == 200
        return len(queries)

    assert count(1) == count(8)
