"""Chat channels end to end (design §15): notifications reach local servers that behave like the
WeCom, DingTalk, Feishu, Slack and Teams robots (tests/chat_receivers.py: they check the body, the
size and the signature, and refuse as the vendors do), through the real delivery worker."""

import itertools
import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import ChannelState, Notification, NotificationDelivery, NotificationDeliveryAttempt
from console.notifications.channels import dingtalk, feishu
from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from recovery.models import OutboundHttpRequest
from tests.chat_receivers import ChatReceiver, configure_channels
from tests.console.notifications.test_groups import pause
from tests.notification_support import recovery_is_fresh

pytestmark = pytest.mark.usefixtures("committed_db")

@pytest.fixture
def quiet(notify_db, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_GROUP_WAIT_SECONDS = 30
    settings.CONSOLE_BASE_URL = "https://console.warehouse.example"
    recovery_is_fresh()
    return notify_db


@pytest.fixture
def robots():
    made = {}

    def robot(kind, **kw):
        made[(kind, len(made))] = r = ChatReceiver(kind, **kw)
        return r

    yield robot
    for r in made.values():
        r.stop()


def test_a_grouped_pause_of_ninety_reaches_each_channel_once_in_its_language_signed(quiet, robots, settings,
                                                                                    tmp_path):
    wecom = robots("wecom")
    ding = robots("dingtalk", secret="SECdingtalk-secret-1")
    lark = robots("feishu", secret="feishu-secret-1")
    slack = robots("slack")
    teams = robots("teams")
    hook = robots("webhook")  # a plain webhook: the §10 payload, any 2xx
    secret_file = tmp_path / "feishu.secret"
    secret_file.write_text("feishu-secret-1\n", encoding="utf-8")
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor-wecom"
kind = "wecom"
url = "{wecom.url}"
language = "zh-Hans"

[[channel]]
name = "floor-dingtalk"
kind = "dingtalk"
url = "{ding.url}"
secret = "SECdingtalk-secret-1"
language = "zh-Hans"

[[channel]]
name = "floor-feishu"
kind = "feishu"
url = "{lark.url}"
secret_file = "{secret_file}"
language = "zh-Hans"

[[channel]]
name = "ops-slack"
kind = "slack"
url = "{slack.url}"

[[channel]]
name = "ops-teams"
kind = "teams"
url = "{teams.url}"
language = "en"

[[channel]]
name = "alerts-hook"
kind = "webhook"
url = "{hook.url}"
""")
    workflows = {aisle: pause(quiet, 30, aisle_no=aisle) for aisle in (1, 2, 3)}  # 90, one group per aisle
    keys = [f"paused:RECOVERY_JOB_MISSING:A0{i}" for i in (1, 2, 3)]
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0  # (the wait is tested in test_groups.py) real time here:
    assert sorted(evaluate_notifications().opened) == keys  # the robots count by their own clocks
    report = deliver_pending()
    # Slack takes one message a second: its other two wait for their second, in order (a run that
    # crosses into the next second sends one more; the spacing of its arrivals is asserted below).
    assert report.failed == 0 and 1 <= len(slack.accepted) < 3
    assert report.sent == 5 * 3 + len(slack.accepted)  # every other channel's three groups at once
    deadline = time.monotonic() + 10
    while len(slack.accepted) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
        assert deliver_pending().failed == 0
    assert deliver_pending().sent == 0
    arrivals = [d.at for d in slack.accepted]
    assert len(arrivals) == 3 and all(b - a >= 1 for a, b in itertools.pairwise(arrivals))
    assert [d.body["text"] for d in slack.accepted] == [  # in the order they were written
        f"30 workflows paused in aisle A0{i}: RECOVERY_JOB_MISSING" for i in (1, 2, 3)]

    for robot in (wecom, ding, lark, slack, teams, hook):  # each group once
        assert len(robot.accepted) == 3 and robot.refused == []
    for robot in (wecom, ding, lark):
        for i, text in enumerate(sorted(robot.texts(), key=lambda t: t[t.index("A0"):])):
            aisle = f"A0{i + 1}"
            assert f"巷道 {aisle} 中 30 个工作流已暂停：RECOVERY_JOB_MISSING" in text
            assert "原因：RECOVERY_JOB_MISSING" in text and f"巷道：{aisle}" in text
            assert f"https://console.warehouse.example/paused/?reason=RECOVERY_JOB_MISSING&aisle={aisle}" in text
            assert all(str(w) in text for w in workflows[i + 1])
    titles = sorted(d.body["markdown"]["title"] for d in ding.accepted)
    assert titles == [f"巷道 A0{i} 中 30 个工作流已暂停：RECOVERY_JOB_MISSING" for i in (1, 2, 3)]
    assert all("sign=" in d.path and "timestamp=" in d.path for d in ding.accepted)
    assert all({"timestamp", "sign"} <= set(d.body) for d in lark.accepted)
    text = next(t for t in slack.texts() if "A01" in t)
    assert "*30 workflows paused in aisle A01: RECOVERY_JOB_MISSING*" in text
    link = "https://console.warehouse.example/paused/?reason=RECOVERY_JOB_MISSING&aisle=A01"
    assert f"<{link}|Open in the console>" in text
    assert sorted(d.body["text"] for d in slack.accepted) == [
        f"30 workflows paused in aisle A0{i}: RECOVERY_JOB_MISSING" for i in (1, 2, 3)]
    assert all("Workflows: 30" in t and "Reason: RECOVERY_JOB_MISSING" in t for t in teams.texts())
    payloads = sorted((d.body["group_key"], d.body["count"], d.body["workflow_id"]) for d in hook.accepted)
    assert payloads == [(k, 30, None) for k in keys]

    # Journaled like every outbound request, without the robots' tokens or signatures.
    journal = list(OutboundHttpRequest.objects.filter(purpose="notification-channel").values_list("url", "status"))
    assert sorted(journal) == sorted([(f"http://127.0.0.1:{r.port}/…", 202 if r.kind == "teams" else 200)
                                      for r in (wecom, ding, lark, slack, teams, hook) for _ in range(3)])
    deliveries = NotificationDelivery.objects.filter(channel="chat")
    assert sorted(deliveries.values_list("channel_name", "state")) == sorted(
        (n, "sent") for n in ("floor-wecom", "floor-dingtalk", "floor-feishu", "ops-slack", "ops-teams", "alerts-hook")
        for _ in range(3))


def test_a_robot_refusing_with_http_200_is_a_failed_delivery_retried_counted_and_shown(
        quiet, robots, settings, tmp_path, client):
    from tests.console_personas import make_user

    settings.NOTIFY_GROUP_WAIT_SECONDS = 0
    settings.NOTIFY_RETRY_BASE_SECONDS = 30
    ding = robots("dingtalk", secret="SECthe-right-one")
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor-dingtalk"
kind = "dingtalk"
url = "{ding.url}"
secret = "SECa-wrong-one"
""")
    pause(quiet, 1)
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    report = deliver_pending(now=t0)
    assert (report.sent, report.failed) == (0, 1)
    assert ding.accepted == [] and ding.refused == [(200, {"errcode": 310000,
                                                           "errmsg": "sign not match, more: [sign not match]"})]
    (d,) = NotificationDelivery.objects.filter(channel="chat")
    assert (d.state, d.attempts, d.next_attempt_at) == ("pending", 1, t0 + timedelta(seconds=30))
    (attempt,) = NotificationDeliveryAttempt.objects.all()
    assert (attempt.ok, attempt.vendor_code) == (False, "310000")
    assert "sign not match" in attempt.error and "access_token" not in attempt.error
    assert deliver_pending(now=t0 + timedelta(seconds=29)).failed == 0  # backoff
    assert deliver_pending(now=t0 + timedelta(seconds=30)).failed == 1  # retried
    assert NotificationDeliveryAttempt.objects.count() == 2
    state = ChannelState.objects.get(name="floor-dingtalk")
    assert (state.last_success_at, state.last_failure_code) == (None, "310000")

    lead = make_user("lead", "shift lead")
    client.force_login(lead)
    metrics = client.get("/metrics").content.decode()
    assert 'tidy_notification_deliveries_total{channel="floor-dingtalk",outcome="failed"} 2.0' in metrics
    assert 'tidy_notification_deliveries_total{channel="floor-dingtalk",outcome="sent"} 0.0' in metrics
    html = client.get("/notifications/channels/").content.decode()
    assert "310000" in html and "sign not match" in html and "1</td>" in html
    assert ding.token not in html and "SECa-wrong-one" not in html and f"127.0.0.1:{ding.port}" in html

    # Once the secret is right, the next retry goes through and the page says so.
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor-dingtalk"
kind = "dingtalk"
url = "{ding.url}"
secret = "SECthe-right-one"
""")
    assert deliver_pending(now=t0 + timedelta(seconds=90)).sent == 1
    assert len(ding.accepted) == 1
    assert ChannelState.objects.get(name="floor-dingtalk").last_success_at == t0 + timedelta(seconds=90)


def test_an_unknown_robot_key_is_refused_and_recorded(quiet, robots, settings, tmp_path):
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0
    wecom = robots("wecom")
    lark = robots("feishu")
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "wecom-old"
kind = "wecom"
url = "{wecom.url_with('revoked-key')}"

[[channel]]
name = "feishu-old"
kind = "feishu"
url = "{lark.url_with('revoked-hook')}"
""")
    pause(quiet, 1)
    evaluate_notifications()
    assert deliver_pending().failed == 2
    codes = dict(NotificationDeliveryAttempt.objects.values_list("delivery__channel_name", "vendor_code"))
    assert codes == {"wecom-old": "93000", "feishu-old": "19001"}


@pytest.mark.parametrize("kind", ["wecom", "slack"])
def test_a_message_over_the_vendors_limit_is_cut_and_keeps_its_link(quiet, robots, settings, tmp_path, kind):
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0
    robot = robots(kind)
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "floor"
kind = "{kind}"
url = "{robot.url}"
""")
    pause(quiet, 30)
    evaluate_notifications()
    # The group grew to 1,200 members before its message went out (as if more joined it).
    n = Notification.objects.get()
    n.details = {**n.details, "workflow_ids": list(range(1, 1201))}
    n.details["message_context"]["count"] = 1200
    n.save(update_fields=["details"])
    assert deliver_pending().sent == 1
    (text,) = robot.texts()
    limit = 4096 if kind == "wecom" else 3000
    assert len(text.encode()) <= limit
    assert "1200" in text and "\n…\n" in text
    assert text.rstrip().endswith("(https://console.warehouse.example/notifications/)" if kind == "wecom"
                                  else "<https://console.warehouse.example/notifications/|Acknowledge>")
    assert "https://console.warehouse.example/paused/?reason=" in text


def test_an_escalation_mentions_the_configured_people(quiet, robots, settings, tmp_path):
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0
    settings.ESCALATE_AFTER_MINUTES = 30
    ding = robots("dingtalk")
    wecom = robots("wecom")
    configure_channels(settings, tmp_path, f"""
[[channel]]
name = "leads-dingtalk"
kind = "dingtalk"
url = "{ding.url}"
escalation_only = true
mention = ["13800000000", "13900000000"]

[[channel]]
name = "floor-wecom"
kind = "wecom"
url = "{wecom.url}"
min_severity = "critical"
mention = ["13800000000"]
""")
    pause(quiet, 1)
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    assert deliver_pending(now=t0).sent == 0  # a warning: neither channel takes it
    evaluate_notifications(now=t0 + timedelta(minutes=31))  # escalated: critical
    assert deliver_pending(now=t0 + timedelta(minutes=31)).sent == 2
    body = ding.accepted[0].body
    assert body["at"] == {"atMobiles": ["13800000000", "13900000000"], "isAtAll": False}
    assert "@13800000000 @13900000000" in body["markdown"]["text"]
    assert body["markdown"]["title"].startswith("Escalated: ")
    assert wecom.accepted[0].body["markdown"]["mentioned_mobile_list"] == ["13800000000"]


def test_the_signatures_are_the_vendors_recipes():
    # DingTalk: quote_plus(b64(HMAC-SHA256(key=secret, msg="timestamp\nsecret"))); Feishu:
    # b64(HMAC-SHA256(key="timestamp\nsecret", msg=b"")): checked against the receivers' own code.
    import base64
    import hashlib
    import hmac
    from urllib.parse import quote_plus

    ts = 1_700_000_000_000
    expected = quote_plus(base64.b64encode(hmac.new(b"SECx", f"{ts}\nSECx".encode(), hashlib.sha256).digest()).decode())
    assert dingtalk.sign("SECx", ts) == expected
    assert feishu.sign("s", 1_700_000_000) == base64.b64encode(
        hmac.new(b"1700000000\ns", b"", hashlib.sha256).digest()).decode()
    assert json.loads(json.dumps({"a": 1})) == {"a": 1}
