"""Delivery through real receivers: an SMTP server on localhost and an HTTP receiver. Retries
with backoff when a receiver is down, the webhook journaled, escalation to shift leads."""

import logging
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from console.models import Notification, NotificationDelivery
from console.notifications.delivery import WEBHOOK_FIELDS, WEBHOOK_PURPOSE, deliver_pending
from console.notifications.evaluate import evaluate_notifications
from console.notifications.tasks import run_notifications
from console.roles import SHIFT_LEAD
from recovery.models import OutboundHttpRequest
from tests.console_personas import make_user
from tests.notification_support import WebhookReceiver, free_port, recovery_is_fresh

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


@pytest.fixture(autouse=True)
def no_group_wait(settings):
    """These tests are about delivery: a group's first message is due at once here
    (tests/console/notifications/test_groups.py tests the wait)."""
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0


@pytest.fixture
def one_pause(notify_db, settings):
    """One paused workflow and a fresh recovery: exactly one notification opens."""
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    recovery_is_fresh()
    return notify_db.build("paused")


def test_it_mails_the_notification_to_the_configured_recipients(one_pause, smtp_server, settings):
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example", "ops@warehouse.example"]
    settings.DEFAULT_FROM_EMAIL = "console@warehouse.example"
    wid = one_pause.workflow_id
    evaluate_notifications()
    report = deliver_pending()
    assert (report.sent, report.failed) == (1, 0)

    (mail,) = smtp_server.messages
    assert mail.subject == f"Workflow {wid} paused: RECOVERY_JOB_MISSING"
    assert mail.rcpt_tos == ["floor@warehouse.example", "ops@warehouse.example"]
    assert mail.mail_from == "console@warehouse.example"
    assert mail.message["X-Tidy-Dedup-Key"] == "paused:RECOVERY_JOB_MISSING:A01"
    text = mail.message.get_payload()
    query = "?reason=RECOVERY_JOB_MISSING&aisle=A01"
    assert f"Open: http://127.0.0.1:8000/paused/{query}" in text and "/notifications/" in text
    assert f"Re-check them together: http://127.0.0.1:8000/repair/batch/{query}" in text
    assert f"Workflows (1): {wid}" in text

    (d,) = NotificationDelivery.objects.all()
    assert (d.channel, d.state, d.attempts) == ("email", "sent", 1)
    assert [(a.ok, a.error) for a in d.attempt_rows.all()] == [(True, "")]
    assert deliver_pending().sent == 0 and len(smtp_server.messages) == 1  # sent once


def test_the_webhook_gets_exactly_the_contract_fields_and_is_journaled(one_pause, webhook_receiver, settings):
    settings.CONSOLE_BASE_URL = "https://console.warehouse.example"
    wid = one_pause.workflow_id
    evaluate_notifications()
    before = timezone.now()
    assert deliver_pending().sent == 1

    (req,) = webhook_receiver.requests
    assert req.path == "/hooks/tidy" and req.headers["Content-Type"] == "application/json"
    payload = req.json()
    assert list(payload) == list(WEBHOOK_FIELDS)
    assert set(payload) == {"event", "severity", "subject", "workflow_id", "reason", "age_seconds", "url",
                            "dedup_key", "sent_at", "group_key", "count", "workflow_ids"}
    key = "paused:RECOVERY_JOB_MISSING:A01"
    assert {k: payload[k] for k in ("event", "severity", "subject", "workflow_id", "reason", "url", "dedup_key",
                                    "group_key", "count", "workflow_ids")} == {
        "event": "paused", "severity": "warning", "subject": f"Workflow {wid} paused: RECOVERY_JOB_MISSING",
        "workflow_id": wid, "reason": "RECOVERY_JOB_MISSING",
        "url": "https://console.warehouse.example/paused/?reason=RECOVERY_JOB_MISSING&aisle=A01",
        "dedup_key": key, "group_key": key, "count": 1, "workflow_ids": [wid]}
    assert isinstance(payload["age_seconds"], int) and payload["age_seconds"] >= 0
    assert timezone.datetime.fromisoformat(payload["sent_at"]) >= before

    (journal,) = OutboundHttpRequest.objects.all()
    assert (journal.purpose, journal.method, journal.url, journal.status, journal.error) == (
        WEBHOOK_PURPOSE, "POST", webhook_receiver.url, 200, "")


def test_a_receiver_that_is_down_gets_retries_with_backoff_and_nothing_is_lost(one_pause, settings):
    port = free_port()
    settings.NOTIFY_WEBHOOK_URL = f"http://127.0.0.1:{port}/hooks/tidy"
    settings.NOTIFY_RETRY_BASE_SECONDS = 30
    evaluate_notifications()
    t0 = timezone.now()
    (d,) = NotificationDelivery.objects.all()

    assert (deliver_pending(now=t0).failed) == 1
    d.refresh_from_db()
    assert (d.state, d.attempts, d.next_attempt_at) == ("pending", 1, t0 + timedelta(seconds=30))
    assert "unreachable" in d.last_error
    assert deliver_pending(now=t0 + timedelta(seconds=29)).failed == 0  # not due yet: not tried

    assert deliver_pending(now=t0 + timedelta(seconds=30)).failed == 1
    d.refresh_from_db()
    assert (d.attempts, d.next_attempt_at) == (2, t0 + timedelta(seconds=90))  # then 60 s

    receiver = WebhookReceiver(port=port)
    try:
        receiver.status = 503  # up, but refusing: still a failure
        assert deliver_pending(now=t0 + timedelta(seconds=90)).failed == 1
        d.refresh_from_db()
        assert (d.attempts, d.next_attempt_at, d.last_error) == (
            3, t0 + timedelta(seconds=210), f"POST {settings.NOTIFY_WEBHOOK_URL} answered HTTP 503")
        receiver.status = 200
        assert deliver_pending(now=t0 + timedelta(seconds=210)).sent == 1
    finally:
        receiver.stop()
    d.refresh_from_db()
    assert (d.state, d.attempts, d.sent_at) == ("sent", 4, t0 + timedelta(seconds=210))
    assert [a.ok for a in d.attempt_rows.all()] == [False, False, False, True]
    assert len(receiver.requests) == 2
    assert receiver.requests[-1].json()["workflow_ids"] == [one_pause.workflow_id]
    # Every attempt is in the outbound journal, the failed ones with their error.
    assert list(OutboundHttpRequest.objects.order_by("id").values_list("status", flat=True)) == [None, None, 503, 200]


def test_the_backoff_doubles_up_to_its_cap(settings):
    from console.notifications.delivery import backoff

    settings.NOTIFY_RETRY_BASE_SECONDS, settings.NOTIFY_RETRY_MAX_SECONDS = 30, 300
    assert [backoff(n).total_seconds() for n in range(1, 7)] == [30, 60, 120, 240, 300, 300]


def test_without_a_channel_the_notification_goes_to_the_log(one_pause, caplog):
    evaluate_notifications()
    with caplog.at_level(logging.WARNING, logger="console.notifications.delivery"):
        assert deliver_pending().sent == 1
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("NOTIFICATION")]
    assert f"paused: Workflow {one_pause.workflow_id} paused: RECOVERY_JOB_MISSING" in line
    assert "no channel configured" in line
    assert NotificationDelivery.objects.get().channel == "log"


def test_an_unacknowledged_notification_escalates_once_to_shift_leads(one_pause, smtp_server, webhook_receiver,
                                                                       settings):
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    settings.NOTIFY_ESCALATE_EMAIL_TO = ["duty-manager@warehouse.example"]
    settings.ESCALATE_AFTER_MINUTES = 30
    Group.objects.get_or_create(name=SHIFT_LEAD)
    for name, email in (("lena", "lena@warehouse.example"), ("lars", ""), ("otto", "otto@warehouse.example")):
        user = make_user(name, SHIFT_LEAD if name != "otto" else "operator")
        user.email = email
        user.save()
    key = "paused:RECOVERY_JOB_MISSING:A01"
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    deliver_pending(now=t0)
    assert [m.rcpt_tos for m in smtp_server.messages] == [["floor@warehouse.example"]]

    recovery_is_fresh(t0 + timedelta(minutes=29))
    assert key not in evaluate_notifications(now=t0 + timedelta(minutes=29)).escalated
    recovery_is_fresh(t0 + timedelta(minutes=31))
    assert evaluate_notifications(now=t0 + timedelta(minutes=31)).escalated == [key]
    n = Notification.objects.get(dedup_key=key)
    assert (n.severity, n.escalated_at, n.state) == ("critical", t0 + timedelta(minutes=31), "open")
    deliver_pending(now=t0 + timedelta(minutes=31))
    escalated = [m for m in smtp_server.messages if m.subject.startswith("Escalated: ")]
    assert [(m.subject, m.rcpt_tos) for m in escalated] == [(
        f"Escalated: Workflow {one_pause.workflow_id} paused: RECOVERY_JOB_MISSING",
        ["lena@warehouse.example", "duty-manager@warehouse.example"])]
    assert escalated[0].message["X-Tidy-Severity"] == "critical"
    hooks = [r.json() for r in webhook_receiver.requests]
    assert [(h["severity"], h["subject"].startswith("Escalated: ")) for h in hooks] == [
        ("warning", False), ("critical", True)]

    recovery_is_fresh(t0 + timedelta(minutes=45))
    assert evaluate_notifications(now=t0 + timedelta(minutes=45)).escalated == []  # once
    assert n.deliveries.filter(kind="escalated").count() == 2  # e-mail and webhook


def test_an_acknowledged_notification_does_not_escalate(one_pause, settings):
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    lead = make_user("lena", SHIFT_LEAD)
    from console.notifications.services import notification_acknowledge

    notification_acknowledge(notification_id=Notification.objects.get(event="paused").pk, user=lead)
    recovery_is_fresh(t0 + timedelta(minutes=40))
    assert evaluate_notifications(now=t0 + timedelta(minutes=40)).escalated == []


def test_the_scheduled_task_evaluates_then_delivers(one_pause, caplog):
    with caplog.at_level(logging.WARNING, logger="console.notifications.delivery"):
        result = run_notifications()
    assert result == {"skipped": False, "opened": 1, "resolved": 0, "escalated": 0, "sent": 1, "failed": 0}
    assert run_notifications() == {"skipped": False, "opened": 0, "resolved": 0, "escalated": 0, "sent": 0,
                                   "failed": 0}


def test_the_schedule_is_declared_once_every_minute(transactional_db):
    from django_q.models import Schedule

    from console.notifications.schedule import SCHEDULE_NAME, TASK_FUNC, ensure_notification_schedule

    Schedule.objects.create(name=SCHEDULE_NAME, func="elsewhere.task", schedule_type=Schedule.HOURLY)
    Schedule.objects.create(name=SCHEDULE_NAME, func="elsewhere.task", schedule_type=Schedule.HOURLY)
    ensure_notification_schedule()
    ensure_notification_schedule()
    (row,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert (row.func, row.schedule_type, row.minutes, row.repeats) == (TASK_FUNC, Schedule.MINUTES, 1, -1)


# --- one bad delivery never blocks the others ---------------------------------------------------

POISON = "RECOVERY_JOB_MISSING\r\nBcc: attacker@evil.example"


def _deliveries_of(workflow_id: int) -> list[NotificationDelivery]:
    return list(NotificationDelivery.objects.filter(notification__workflow_id=workflow_id).order_by("channel"))


def test_a_pause_reason_with_cr_lf_goes_out_on_one_line_and_what_follows_is_delivered(
        notify_db, smtp_server, webhook_receiver, settings):
    """The WMS can hold anything (design §3): a pause reason with CR/LF would make the e-mail subject
    a header Django refuses. It is sent on one line, with nothing injected, and the notification of a
    clean workflow paused afterwards still reaches the SMTP server and the webhook receiver."""
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    recovery_is_fresh()
    poisoned = notify_db.build("paused", reason=POISON)
    evaluate_notifications()
    assert deliver_pending().sent == 2
    clean = notify_db.build("paused")  # pauses after the poisoned one, as in the field
    evaluate_notifications()
    assert (deliver_pending().sent, deliver_pending().sent) == (2, 0)

    subjects = [m.subject for m in smtp_server.messages]
    assert subjects == [f"Workflow {poisoned.workflow_id} paused: RECOVERY_JOB_MISSING Bcc: attacker@evil.example",
                        f"Workflow {clean.workflow_id} paused: RECOVERY_JOB_MISSING"]
    for mail in smtp_server.messages:
        assert mail.rcpt_tos == ["floor@warehouse.example"]  # nobody added by the WMS text
        assert mail.message["Bcc"] is None and "\r" not in mail.subject and "\n" not in mail.subject
    hooks = [r.json() for r in webhook_receiver.requests]
    assert [(h["workflow_id"], h["subject"]) for h in hooks] == [  # a chat message: the break shown escaped
        (poisoned.workflow_id,
         f"Workflow {poisoned.workflow_id} paused: RECOVERY_JOB_MISSING\\r\\nBcc: attacker@evil.example"),
        (clean.workflow_id, subjects[1])]
    assert hooks[0]["reason"] == POISON  # the data itself, JSON-escaped, stays what the WMS holds
    assert {(d.channel, d.state, d.attempts) for w in (poisoned, clean) for d in _deliveries_of(w.workflow_id)} == {
        ("email", "sent", 1), ("webhook", "sent", 1)}


def test_a_delivery_that_raises_is_a_failed_attempt_with_backoff_and_the_run_goes_on(
        notify_db, smtp_server, webhook_receiver, settings, client):
    """Whatever a sender raises (here Django refusing a recipient with CR/LF in it, a ValueError
    that is neither an SMTP nor a network error) is that delivery's failed attempt: recorded,
    retried with backoff, counted, and the deliveries queued after it are sent in the same run."""
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_RETRY_BASE_SECONDS = 30
    recovery_is_fresh()
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example\r\nBcc: attacker@evil.example"]
    first = notify_db.build("paused")
    evaluate_notifications()
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    second = notify_db.build("paused", reason="RECOVERY_JOB_MISMATCH")  # its own group
    evaluate_notifications()
    t0 = timezone.now()

    report = deliver_pending(now=t0)
    assert (report.sent, report.failed) == (3, 1)
    bad, first_hook = _deliveries_of(first.workflow_id)
    assert (bad.channel, bad.state, bad.attempts, bad.next_attempt_at) == ("email", "pending", 1,
                                                                           t0 + timedelta(seconds=30))
    assert bad.last_error.startswith(("BadHeaderError: ", "ValueError: ")), bad.last_error
    assert [(a.ok, a.error) for a in bad.attempt_rows.all()] == [(False, bad.last_error)]
    assert first_hook.state == "sent"
    assert [m.rcpt_tos for m in smtp_server.messages] == [["floor@warehouse.example"]]
    assert smtp_server.messages[0].subject == f"Workflow {second.workflow_id} paused: RECOVERY_JOB_MISMATCH"
    assert [r.json()["workflow_id"] for r in webhook_receiver.requests] == [first.workflow_id, second.workflow_id]

    assert deliver_pending(now=t0 + timedelta(seconds=29)).failed == 0  # not due yet
    assert deliver_pending(now=t0 + timedelta(seconds=30)).failed == 1
    bad.refresh_from_db()
    assert (bad.attempts, bad.next_attempt_at) == (2, t0 + timedelta(seconds=90))

    from tests.console.operations.test_metrics import scrape, value

    samples = scrape(client)
    assert value(samples, "tidy_notification_deliveries_total", channel="email", outcome="failed") == 2
    assert value(samples, "tidy_notification_deliveries_total", channel="email", outcome="sent") == 1
    assert value(samples, "tidy_notification_deliveries_total", channel="webhook", outcome="sent") == 2
    assert value(samples, "tidy_notification_deliveries_total", channel="webhook", outcome="failed") == 0


def test_a_delivery_whose_database_connection_dies_is_recorded_as_failed_and_the_run_goes_on(
        notify_db, settings):
    """A failure outside the sender (here the delivering connection is terminated while the webhook
    is answered, so its attempt cannot be written): the attempt is recorded as failed with backoff on
    a new connection, and the next delivery is sent in the same run."""
    from django.db import connection

    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_RETRY_BASE_SECONDS = 30
    recovery_is_fresh()
    receiver = WebhookReceiver()
    settings.NOTIFY_WEBHOOK_URL = receiver.url
    try:
        first, second = notify_db.build("paused"), notify_db.build("paused", reason="RECOVERY_JOB_MISMATCH")
        evaluate_notifications()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            (pid,) = cursor.fetchone()

        def terminate_once(received):
            if len(receiver.requests) == 1:
                from recovery.runtime.lease import connect_direct

                other = connect_direct("tidy-test-terminator")
                try:
                    other.execute("SELECT pg_terminate_backend(%s)", [pid])
                finally:
                    other.close()

        receiver.on_request = terminate_once
        t0 = timezone.now()
        report = deliver_pending(now=t0)
    finally:
        receiver.stop()
    assert (report.sent, report.failed) == (1, 1)
    (lost,) = _deliveries_of(first.workflow_id)
    assert (lost.state, lost.attempts, lost.next_attempt_at) == ("pending", 1, t0 + timedelta(seconds=30))
    assert lost.last_error.startswith(("OperationalError: ", "InterfaceError: ")), lost.last_error
    (sent,) = _deliveries_of(second.workflow_id)
    assert (sent.state, sent.attempts) == ("sent", 1)
    assert [r.json()["workflow_id"] for r in receiver.requests] == [first.workflow_id, second.workflow_id]
