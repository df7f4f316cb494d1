"""Notifications and sign-in in Simplified Chinese: the pages speak the reader's language, and what
leaves the building (e-mail through a real SMTP server, the webhook through a real HTTP receiver)
speaks NOTIFY_LANGUAGE, with codes, keys and ids unchanged."""

from datetime import timedelta
from email.header import decode_header, make_header

import pytest
from django.template import Context, Template
from django.utils import timezone, translation
from django.utils.html import escape

from console.models import Notification, NotificationThreshold
from console.notifications.delivery import WEBHOOK_FIELDS, deliver_pending
from console.notifications.evaluate import evaluate_notifications
from console.notifications.messages import with_texts
from recovery.engine.decisions import PAUSE_REASONS
from tests.console.notifications.test_events import SCENARIOS
from tests.console_personas import *  # noqa: F403  (fixtures: personas)
from tests.console_personas import make_user
from tests.notification_support import recovery_is_fresh
from tests.ops.test_configuration import _manage
from tests.visible_text import WORD, english_left

ZH = {"Accept-Language": "zh-Hans"}
URL = "/notifications/"
THRESHOLDS = "/notifications/thresholds/"
LOGIN = "/accounts/login/"
# The header (base.html) names who is signed in and their console role: data from the database.
WHO = {"supervisor": {"supervisor"}, "operator": {"operator"}, "shiftlead": {"shiftlead", "shift", "lead"}}

# Chinese subject of each event, as the list page must show it (codes and numbers aside).
SUBJECT_WORDS = {
    "paused": "已暂停：RECOVERY_JOB_MISSING",
    "paused_too_long": "暂停已超过 30 分钟：RECOVERY_JOB_MISSING",
    "stalled": "停滞：作业 TDY-",
    "recovery_stale": "恢复已过期：超过",
    "proposal_waiting": "的取消提议等待第二位班组长已超过 10 分钟",
    "backlog_not_draining": "整理作业积压未消化：",
}


def format_filter_words() -> set[str]:
    """English words the shared time filters print in zh-Hans (ages, units, month names). They are
    translated with the per-user formatting of the console's tags; once they are, this is empty and
    the tests below allow nothing of the kind."""
    now = timezone.now()
    samples = Template("{% load console_tags %}{{ a|when }} {{ b|when }} {{ c|when }} {{ none|when }} "
                       "{{ s|duration }} {{ m|duration }} {{ h|duration }} {{ d|duration }}")
    with translation.override("zh-hans"):
        html = samples.render(Context({"a": now - timedelta(seconds=5), "b": now - timedelta(days=2),
                                       "c": now - timedelta(days=40), "none": None, "s": 5, "m": 300,
                                       "h": 7200, "d": 200000}))
    return {word for part in english_left(html) for word in WORD.findall(part)}


def zh(client, path, *, method="get", data=None, **kw):
    response = getattr(client, method)(path, data or {}, headers=ZH, **kw)
    return response, response.content.decode()


def login(client, personas, name):
    client.force_login(personas[name])
    return client


# --- the notifications list -----------------------------------------------------------------


def test_the_empty_list_speaks_chinese(client, personas, notify_db):
    response, html = zh(login(client, personas, "supervisor"), URL)
    assert response.status_code == 200 and '<html lang="zh-hans">' in html
    assert english_left(html, allow=WHO["supervisor"]) == []
    for chinese in ("<h1>通知</h1>", "没有符合条件的通知。", "按原因码设置阈值", "未处理 0 · 已确认 0 · 已解决 0",
                    "任意状态", "任意事件", "工作流已暂停<"):
        assert chinese in html


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_each_event_is_listed_in_the_readers_language(client, personas, notify_db, scenario):
    expected, _ = scenario(notify_db)
    evaluate_notifications()
    (n,) = Notification.objects.filter(event=scenario.__name__)
    english = n.subject
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in english), "the stored subject is the English record"

    response, html = zh(login(client, personas, "supervisor"), URL)
    assert response.status_code == 200
    assert english_left(html, allow=WHO["supervisor"] | format_filter_words()) == []
    with translation.override("zh-hans"):
        chinese = escape(with_texts([n])[0].display_subject)
    assert chinese != escape(english) and chinese in html and english not in html
    # Hand-checked words of the first six events (a new event is covered by the lines above).
    assert SUBJECT_WORDS.get(n.event, chinese) in html
    assert f'<span class="chip-code" translate="no">{n.event}</span>' in html  # the code stays
    assert f'<span translate="no">{n.dedup_key}</span>' in html
    assert "确认" in html and {"warning": "警告", "error": "错误"}[n.severity] in html

    # The same rows in English show the stored subject, as before.
    html = client.get(URL).content.decode()
    assert english in html and SUBJECT_WORDS.get(n.event, chinese) not in html


def test_acknowledged_escalated_and_resolved_rows_speak_chinese(client, personas, notify_db, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    notify_db.build("paused")
    t0 = timezone.now()
    recovery_is_fresh(t0)
    evaluate_notifications(now=t0)
    recovery_is_fresh(t0 + timedelta(minutes=31))
    assert evaluate_notifications(now=t0 + timedelta(minutes=31)).escalated == ["paused:RECOVERY_JOB_MISSING:A01"]
    n = Notification.objects.get()
    client = login(client, personas, "supervisor")

    response = client.post(f"{URL}{n.pk}/acknowledge", headers={**ZH, "HX-Request": "true"})
    row = response.content.decode()
    assert response.status_code == 200 and "由 supervisor 确认" in row and "已升级给班组长" in row
    assert english_left(row, allow={"supervisor"} | format_filter_words()) == []

    Notification.objects.filter(pk=n.pk).update(state="resolved", resolved_at=timezone.now())
    response, html = zh(client, URL)
    assert "原因消除于" in html and "始于" in html and "严重" in html and "已解决" in html
    assert english_left(html, allow={"supervisor"} | format_filter_words()) == []


def test_a_refused_acknowledgement_speaks_chinese(client, personas, notify_db):
    now = timezone.now()
    n = Notification.objects.create(event="recovery_stale", dedup_key="recovery_stale", state="resolved",
                                    subject="Recovery is stale: no successful cycle yet", url_path="/recovery/",
                                    opened_at=now, last_seen_at=now, resolved_at=now)
    client = login(client, personas, "operator")
    response, html = zh(client, f"{URL}{n.pk}/acknowledge", method="post")
    assert response.status_code == 409
    assert english_left(html, allow=WHO["operator"]) == []
    assert f"通知 {n.pk} 的状态是“已解决”；只有未处理的通知可以确认。" in html and "<h1>未确认</h1>" in html
    response, html = zh(client, f"{URL}99999/acknowledge", method="post")
    assert response.status_code == 404
    # The English refusal is unchanged.
    html = client.post(f"{URL}{n.pk}/acknowledge").content.decode()
    assert f"Notification {n.pk} is resolved; only open ones are acknowledged." in html


def test_a_bad_filter_is_refused_in_chinese_naming_the_field(client, personas, notify_db):
    response, html = zh(login(client, personas, "operator"), URL, data={"state": "bogus"})
    assert response.status_code == 400
    # The field's name and the bad value are what the request typed.
    assert english_left(html, allow=WHO["operator"] | {"state", "bogus"}) == []
    assert "state: " in html and "bogus" in html


# --- the thresholds page --------------------------------------------------------------------

CODES = [r.value for r in PAUSE_REASONS]  # the form has one field per pause reason


def form(**changes) -> dict:
    return {**dict.fromkeys(CODES, "30"), **changes}


def test_the_thresholds_form_speaks_chinese_when_shown_saved_and_refused(client, personas, notify_db):
    name = "shiftlead"
    client = login(client, personas, name)
    response, html = zh(client, THRESHOLDS)
    assert response.status_code == 200 and english_left(html, allow=WHO[name]) == []
    assert "<h1>通知阈值</h1>" in html and "保存阈值" in html and "分钟，1 至 10080" in html

    response, html = zh(client, THRESHOLDS, method="post", data=form(RECOVERY_JOB_MISSING="90"))
    assert response.status_code == 200 and english_left(html, allow=WHO[name]) == []
    assert "已保存：RECOVERY_JOB_MISSING。" in html
    response, html = zh(client, THRESHOLDS, method="post", data=form(RECOVERY_JOB_MISSING="90"))
    assert "没有改动。" in html and english_left(html, allow=WHO[name]) == []

    response, html = zh(client, THRESHOLDS, method="post", data=form(RECOVERY_JOB_MISMATCH="abc"))
    assert response.status_code == 400 and english_left(html, allow=WHO[name]) == []
    assert "未做任何更改。" in html and "RECOVERY_JOB_MISMATCH: " in html
    assert list(NotificationThreshold.objects.values_list("reason_code", "paused_too_long_minutes")) == [
        ("RECOVERY_JOB_MISSING", 90)]


def test_the_read_only_thresholds_speak_chinese(client, personas, notify_db):
    name = "supervisor"
    client = login(client, personas, name)
    response, html = zh(client, THRESHOLDS)
    assert response.status_code == 200 and english_left(html, allow=WHO[name]) == []
    assert "只有班组长可以修改。" in html and "（默认）" in html and "原因码" in html
    assert zh(client, THRESHOLDS, method="post", data=form())[0].status_code == 403


# --- what leaves the building ----------------------------------------------------------------


KEY = "paused:RECOVERY_JOB_MISSING:A01"
LIST = "http://127.0.0.1:8000/paused/?reason=RECOVERY_JOB_MISSING&aisle=A01"


@pytest.fixture
def one_pause(notify_db, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0  # a group's message due at once (test_groups.py: the wait)
    recovery_is_fresh()
    return notify_db.build("paused")


def subject_of(mail) -> str:
    return str(make_header(decode_header(mail.subject)))


def body_of(mail) -> str:
    return mail.message.get_payload(decode=True).decode(mail.message.get_content_charset())


def test_the_email_is_written_in_notify_language_with_its_codes_intact(one_pause, smtp_server, settings):
    settings.NOTIFY_LANGUAGE = "zh-hans"
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    wid = one_pause.workflow_id
    # Whatever language the evaluation runs in, the stored record is English.
    with translation.override("zh-hans"):
        evaluate_notifications()
    assert Notification.objects.get().subject == f"Workflow {wid} paused: RECOVERY_JOB_MISSING"
    assert deliver_pending().sent == 1

    (mail,) = smtp_server.messages
    assert subject_of(mail) == f"工作流 {wid} 已暂停：RECOVERY_JOB_MISSING"
    assert mail.message["X-Tidy-Dedup-Key"] == KEY and mail.message["X-Tidy-Severity"] == "warning"
    body = body_of(mail)
    assert f"恢复程序以原因 RECOVERY_JOB_MISSING 暂停了工作流 {wid}" in body
    assert f"打开：{LIST}" in body and f"工作流（1 个）：{wid}" in body
    assert "一并复核：http://127.0.0.1:8000/repair/batch/?reason=RECOVERY_JOB_MISSING&aisle=A01" in body
    assert "确认：http://127.0.0.1:8000/notifications/" in body and f"键：{KEY}" in body
    assert english_left(body) == []


def test_the_escalation_email_is_written_in_notify_language(one_pause, smtp_server, settings):
    settings.NOTIFY_LANGUAGE = "zh-hans"
    settings.NOTIFY_ESCALATE_EMAIL_TO = ["duty-manager@warehouse.example"]
    wid = one_pause.workflow_id
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    recovery_is_fresh(t0 + timedelta(minutes=31))
    evaluate_notifications(now=t0 + timedelta(minutes=31))
    deliver_pending(now=t0 + timedelta(minutes=31))
    (mail,) = smtp_server.messages
    assert subject_of(mail) == f"已升级：工作流 {wid} 已暂停：RECOVERY_JOB_MISSING"
    assert mail.message["X-Tidy-Severity"] == "critical"
    body = body_of(mail)
    assert body.startswith("尚无人确认此通知；已升级给班组长。") and "时长：" in body
    assert english_left(body) == []


def test_by_default_the_email_stays_english(one_pause, smtp_server, settings):
    assert settings.NOTIFY_LANGUAGE == settings.LANGUAGE_CODE == "en"
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    wid = one_pause.workflow_id
    with translation.override("zh-hans"):  # a language active in the worker does not leak into the mail
        evaluate_notifications()
        deliver_pending()
    (mail,) = smtp_server.messages
    assert subject_of(mail) == f"Workflow {wid} paused: RECOVERY_JOB_MISSING"
    body = body_of(mail)
    assert f"Recovery paused workflow {wid} with reason RECOVERY_JOB_MISSING." in body
    assert f"Open: {LIST}" in body and f"Key: {KEY}" in body
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in body)


def test_the_webhook_subject_is_written_in_notify_language_and_nothing_else_changes(one_pause, webhook_receiver,
                                                                                     settings):
    settings.NOTIFY_LANGUAGE = "zh-hans"
    wid = one_pause.workflow_id
    evaluate_notifications()
    assert deliver_pending().sent == 1
    (req,) = webhook_receiver.requests
    payload = req.json()
    assert list(payload) == list(WEBHOOK_FIELDS)
    assert {k: payload[k] for k in ("event", "severity", "subject", "workflow_id", "reason", "url", "dedup_key")} == {
        "event": "paused", "severity": "warning", "subject": f"工作流 {wid} 已暂停：RECOVERY_JOB_MISSING",
        "workflow_id": wid, "reason": "RECOVERY_JOB_MISSING", "url": LIST, "dedup_key": KEY}


def test_by_default_the_webhook_stays_english(one_pause, webhook_receiver, settings):
    wid = one_pause.workflow_id
    with translation.override("zh-hans"):
        evaluate_notifications()
        deliver_pending()
    (req,) = webhook_receiver.requests
    assert req.json()["subject"] == f"Workflow {wid} paused: RECOVERY_JOB_MISSING"


def test_the_log_channel_stays_english_whatever_notify_language(one_pause, settings, caplog):
    settings.NOTIFY_LANGUAGE = "zh-hans"
    evaluate_notifications()
    with caplog.at_level("WARNING", logger="console.notifications.delivery"):
        assert deliver_pending().sent == 1
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("NOTIFICATION")]
    assert f"paused: Workflow {one_pause.workflow_id} paused: RECOVERY_JOB_MISSING" in line


def test_a_notification_kept_without_its_values_shows_its_stored_text(notify_db):
    now = timezone.now()
    n = Notification.objects.create(event="paused", dedup_key="paused:7", subject="Workflow 7 paused: X",
                                    body="kept", url_path="/", opened_at=now, last_seen_at=now,
                                    details={"message_context": {"workflow_id": 7}})  # "reason" is missing
    with translation.override("zh-hans"):
        (shown,) = with_texts([n])
        assert (shown.display_subject, shown.display_explanation) == ("Workflow 7 paused: X", "kept")
        n.details = {"message_context": {"workflow_id": 7, "reason": "X"}}
        assert with_texts([n])[0].display_subject == "工作流 7 已暂停：X"


# --- the setting ----------------------------------------------------------------------------

ENV = {"SECRET_KEY": "x", "DATABASE_URL": "postgresql://localhost/tidy", "WCS_CALLBACK_TOKEN": "t" * 24,
       "METRICS_TOKEN": "m" * 24}
PRINT = "from django.conf import settings; print(settings.LANGUAGE_CODE, settings.NOTIFY_LANGUAGE)"


def test_notify_language_follows_language_code_unless_set():
    assert _manage("shell", "-c", PRINT, **ENV, LANGUAGE_CODE="zh-hans").stdout.split()[-2:] == ["zh-hans", "zh-hans"]
    assert _manage("shell", "-c", PRINT, **ENV, NOTIFY_LANGUAGE="ZH-Hans").stdout.split()[-2:] == ["en", "zh-hans"]


def test_a_bad_notify_language_stops_the_program_naming_it():
    result = _manage("check", **ENV, NOTIFY_LANGUAGE="zh")
    assert result.returncode != 0 and "ImproperlyConfigured" in result.stderr
    assert "NOTIFY_LANGUAGE must be one of en, zh-hans, got 'zh'" in result.stderr


# --- signing in -----------------------------------------------------------------------------


def test_the_sign_in_page_and_its_error_speak_chinese(client, db):
    make_user("olga", password="right-password-for-tests")
    response, html = zh(client, LOGIN)
    assert response.status_code == 200 and english_left(html) == []
    assert "<h1>登录</h1>" in html and "用户名" in html and "密码" in html
    response, html = zh(client, LOGIN, method="post", data={"username": "olga", "password": "wrong", "next": "/"})
    assert response.status_code == 200 and english_left(html) == []
    assert "用户名与密码不匹配。请重试。" in html


def test_the_locked_out_page_speaks_chinese(client, db):
    make_user("olga", password="right-password-for-tests")
    for attempt in range(5):
        response, html = zh(client, LOGIN, method="post", data={"username": "olga", "password": f"wrong-{attempt}"})
    assert response.status_code == 429
    assert english_left(html, allow={"olga"} | format_filter_words()) == []
    assert "<h1>登录已锁定</h1>" in html and "<strong>olga</strong>" in html and "返回登录" in html
