"""The delivery worker: sends due outbox rows by e-mail, webhook, chat channel or to the log.

Each due delivery is claimed with FOR UPDATE SKIP LOCKED in its own small transaction (two
workers never send the same row), sent, and its attempt recorded. A failure keeps the row
pending and moves `next_attempt_at` by an exponential backoff (NOTIFY_RETRY_BASE_SECONDS,
doubling, at most NOTIFY_RETRY_MAX_SECONDS): nothing is dropped because a receiver was down.
The webhook goes through recovery.engine.wcs.http_request, which journals it in OutboundHttpRequest.
E-mails and the webhook's subject are written in NOTIFY_LANGUAGE; the log line stays English.
Chat channels (NOTIFY_CHANNELS_FILE) go through console.notifications.channels.send, in each
channel's language: before sending, the channel's rate limit gives the row a slot or a later due
time (not an attempt: nothing failed); a vendor's refusal is a failed attempt with its code.

One delivery never blocks the others (docs/architecture.md §12): whatever a sender raises is
that delivery's failed attempt, recorded with its backoff, and the run goes on. Subjects and
headers carry WMS text (a pause reason can hold anything, CR/LF included), so their control
characters are replaced before any channel sees them.
"""

import json
import logging
import re
import smtplib
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation

from console.models import NotificationDelivery, NotificationDeliveryAttempt
from console.notifications import groups, messages
from console.notifications.channels import send as chat
from recovery.engine.wcs import HttpFailure, http_request
from recovery.errors import Unavailable
from recovery.logs.line_breaks import escape_line_breaks

log = logging.getLogger(__name__)

WEBHOOK_PURPOSE = "notification-webhook"
WEBHOOK_FIELDS = ("event", "severity", "subject", "workflow_id", "reason", "age_seconds", "url", "dedup_key",
                  "sent_at", "group_key", "count", "workflow_ids")


class DeliveryFailed(Unavailable):
    def __init__(self, message: str, *, code: str = ""):
        super().__init__(message)
        self.code = code  # a chat vendor's error code, when it gave one


@dataclass
class DeliveryReport:
    sent: int = 0
    failed: int = 0


def backoff(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt: base, 2 x base, 4 x base ... capped."""
    base, cap = settings.NOTIFY_RETRY_BASE_SECONDS, settings.NOTIFY_RETRY_MAX_SECONDS
    return timedelta(seconds=min(cap, base * 2 ** min(max(attempts - 1, 0), 30)))


# C0 and C1 control characters, DEL and the Unicode line and paragraph separators: anything a
# mail header, a chat receiver or a text log could take for the end of a line.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str) -> str:
    """Text for a subject or a header: every run of control characters becomes one space."""
    return _CONTROL.sub(" ", text).strip()


def _subject_text(delivery: NotificationDelivery) -> str:
    """The subject in the active language (made again from the notification's kept values), as
    the WMS text in it has it."""
    subject = messages.notification_subject(delivery.notification)
    if delivery.kind == NotificationDelivery.Kind.ESCALATED:
        subject = messages.escalated_subject(subject)
    return subject


def _subject(delivery: NotificationDelivery) -> str:
    """The subject for a mail header: on one line whatever the WMS text in it holds."""
    return one_line(_subject_text(delivery))


def _age_seconds(delivery: NotificationDelivery, now: datetime) -> int | None:
    since = delivery.notification.cause_since
    return max(0, int((now - since).total_seconds())) if since else None


def _links(n) -> dict[str, str]:
    links = n.details.get("links") if isinstance(n.details, dict) else None
    return {k: v for k, v in links.items() if isinstance(v, str)} if isinstance(links, dict) else {}


def webhook_payload(delivery: NotificationDelivery, now: datetime, *, language: str | None = None) -> dict:
    """The contract fields; only `subject` is text for people (in NOTIFY_LANGUAGE, or a webhook
    channel's `language`), the rest are codes, ids and numbers, the same in every language."""
    n = delivery.notification
    with translation.override(language or settings.NOTIFY_LANGUAGE):
        # A chat receiver shows it as a message: its WMS text's line breaks are shown escaped.
        subject = escape_line_breaks(_subject_text(delivery))
    members = groups.members(n)
    grouped = groups.is_group(n)
    return {
        "event": n.event,
        "severity": delivery.severity,
        "subject": subject,
        "workflow_id": n.workflow_id,
        "reason": n.reason,
        "age_seconds": _age_seconds(delivery, now),
        "url": settings.CONSOLE_BASE_URL + n.url_path,
        "dedup_key": n.dedup_key,
        "sent_at": now.isoformat(),
        # A group (paused, paused too long, stalled per reason and aisle) names its members;
        # `workflow_id` is null once it has more than one.
        "group_key": n.dedup_key if grouped else None,
        "count": len(members) if grouped else 1,
        "workflow_ids": members[:groups.WEBHOOK_MEMBERS] if grouped else (
            [n.workflow_id] if n.workflow_id is not None else []),
    }


def _send_email(delivery: NotificationDelivery, now: datetime) -> None:
    n = delivery.notification
    with translation.override(settings.NOTIFY_LANGUAGE):
        subject = _subject(delivery)
        # In the body, the subject's WMS text keeps its line breaks, shown escaped.
        body = messages.email_body(
            subject=_subject_text(delivery), body=messages.notification_explanation(n),
            url=settings.CONSOLE_BASE_URL + n.url_path,
            notifications_url=settings.CONSOLE_BASE_URL + reverse("notifications"),
            escalated=delivery.kind == NotificationDelivery.Kind.ESCALATED,
            age_seconds=_age_seconds(delivery, now), dedup_key=n.dedup_key,
            workflow_ids=groups.members(n) if groups.is_group(n) else None,
            links={name: settings.CONSOLE_BASE_URL + path for name, path in _links(n).items()})
    message = EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL,
                           to=list(delivery.recipients))
    message.extra_headers["X-Tidy-Dedup-Key"] = one_line(n.dedup_key)
    message.extra_headers["X-Tidy-Severity"] = one_line(delivery.severity)
    try:
        get_connection(fail_silently=False).send_messages([message])
    except (smtplib.SMTPException, OSError) as exc:
        raise DeliveryFailed(f"e-mail to {', '.join(delivery.recipients)}: {type(exc).__name__}: {exc}") from exc


def _send_webhook(delivery: NotificationDelivery, now: datetime) -> None:
    url = delivery.recipients[0]
    body = json.dumps(webhook_payload(delivery, now)).encode()
    try:
        answer = http_request("POST", url, purpose=WEBHOOK_PURPOSE, timeout_ms=settings.NOTIFY_WEBHOOK_TIMEOUT_MS,
                              body=body, headers={"Content-Type": "application/json"})
    except HttpFailure as exc:
        raise DeliveryFailed(str(exc)) from exc
    if not 200 <= answer.status < 300:
        raise DeliveryFailed(f"POST {url} answered HTTP {answer.status}")


def _send_log(delivery: NotificationDelivery, now: datetime) -> None:
    n = delivery.notification
    with translation.override("en"):  # logs stay English; the formatter escapes its line breaks
        subject = _subject_text(delivery)
    log.warning("NOTIFICATION [%s] %s: %s (%s) -- no channel configured, set NOTIFY_EMAIL_TO or NOTIFY_WEBHOOK_URL",
                delivery.severity, n.event, subject, settings.CONSOLE_BASE_URL + n.url_path,
                extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id,
                       "dedup_key": n.dedup_key})


def _send_chat(delivery: NotificationDelivery, now: datetime) -> None:
    try:
        chat.send_delivery(delivery, now, webhook_payload=webhook_payload)
    except chat.ChannelFailed as exc:
        raise DeliveryFailed(str(exc), code=exc.code) from exc


SENDERS = {
    NotificationDelivery.Channel.EMAIL: _send_email,
    NotificationDelivery.Channel.WEBHOOK: _send_webhook,
    NotificationDelivery.Channel.LOG: _send_log,
    NotificationDelivery.Channel.CHAT: _send_chat,
}


def _attempt_failed(delivery: NotificationDelivery, at: datetime, error: str) -> None:
    delivery.last_error = error
    delivery.next_attempt_at = at + backoff(delivery.attempts)


def _send(delivery: NotificationDelivery, at: datetime) -> tuple[str, str]:
    """Send one delivery; the error of a failed attempt and the vendor's code, ("", "") when it
    was sent. Any exception is a failed attempt of this delivery alone (a header Django refuses,
    a malformed row, a bug in a text): it must never abort the run and leave the row first in the
    queue. (A database error here spoils the claiming transaction; `deliver_pending` then records the attempt in a
    transaction of its own. No savepoint: the webhook's journal row of a failed request stays.)"""
    try:
        SENDERS[delivery.channel](delivery, at)
    except DeliveryFailed as exc:
        return _error_text(str(exc)) or "DeliveryFailed", exc.code[:64]
    except Exception as exc:  # whatever it is (see the docstring)
        log.exception("notification delivery %s by %s raised", delivery.pk, delivery.channel,
                      extra={"notification_id": delivery.notification_id, "channel": delivery.channel})
        return _error_text(f"{type(exc).__name__}: {exc}"), ""
    return "", ""


def _error_text(text: str) -> str:
    """An attempt's error as stored: one line (a NUL from a receiver's answer could not even be
    stored in PostgreSQL), at most 2,000 characters."""
    return one_line(text)[:2000]


def _deliver_one(delivery_id: int, now: datetime | None) -> bool | None:
    """Send one due delivery; None when another worker holds it or it is no longer due."""
    with transaction.atomic():
        delivery = (NotificationDelivery.objects.select_for_update(skip_locked=True, of=("self",))
                    .select_related("notification")
                    .filter(pk=delivery_id, state=NotificationDelivery.State.PENDING,
                            notification__silenced_by__isnull=True).first())
        if delivery is None:
            return None
        at = now or timezone.now()
        channel = chat.channel_named(delivery.channel_name) if delivery.channel_name else None
        if delivery.channel == NotificationDelivery.Channel.CHAT and channel is not None:
            # The channel's rate limit: its state row stays locked until this transaction ends.
            granted = chat.slot(channel, now=at, delivery=delivery)
            if not granted.granted:
                if granted.retry_at is not None:
                    delivery.next_attempt_at = granted.retry_at
                    delivery.save(update_fields=["next_attempt_at"])
                return None
        t0 = time.perf_counter()
        error, code = _send(delivery, at)
        if channel is not None:
            chat.sent(channel, now=at)
        ok = not error
        NotificationDeliveryAttempt.objects.create(delivery=delivery, at=at, ok=ok, error=error, vendor_code=code,
                                                   duration_ms=round((time.perf_counter() - t0) * 1000, 3))
        if delivery.channel == NotificationDelivery.Channel.CHAT:
            chat.record_outcome(delivery.channel_name, at=at, ok=ok, code=code, error=error)
        delivery.attempts += 1
        if ok:
            delivery.state = NotificationDelivery.State.SENT
            delivery.sent_at = at
            delivery.last_error = ""
        else:
            _attempt_failed(delivery, at, error)
        delivery.save(update_fields=["attempts", "state", "sent_at", "last_error", "next_attempt_at"])
    n = delivery.notification
    extra = {"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id,
             "channel": delivery.channel_name or delivery.channel}
    if ok:
        log.info("notification delivered by %s: %s", delivery.channel, one_line(n.subject), extra=extra)
    else:
        log.warning("notification delivery by %s failed (attempt %s, next at %s): %s", delivery.channel,
                    delivery.attempts, delivery.next_attempt_at.isoformat(), error, extra=extra)
    return ok


def _record_crash(delivery_id: int, now: datetime | None, exc: Exception) -> None:
    """What `_deliver_one` could not record itself (its transaction failed, e.g. the attempt row
    would not insert): a failed attempt with backoff, in a transaction of its own, so the row
    moves back in the queue instead of staying first. If even this fails, the row is tried again
    at the next run; the others are delivered meanwhile."""
    error = _error_text(f"{type(exc).__name__}: {exc}")
    try:
        with transaction.atomic():
            delivery = (NotificationDelivery.objects.select_for_update(skip_locked=True)
                        .filter(pk=delivery_id, state=NotificationDelivery.State.PENDING).first())
            if delivery is None:
                return
            at = now or timezone.now()
            NotificationDeliveryAttempt.objects.create(delivery=delivery, at=at, ok=False, error=error, duration_ms=0)
            delivery.attempts += 1
            _attempt_failed(delivery, at, error)
            delivery.save(update_fields=["attempts", "last_error", "next_attempt_at"])
    except Exception:  # the run goes on; the next run tries the row again
        log.exception("could not record the failed delivery %s", delivery_id)


def deliver_pending(*, now: datetime | None = None, limit: int = 200, budget_seconds: float = 45.0) -> DeliveryReport:
    """Send the due deliveries, oldest first, until none is left, `limit` were tried or the
    time budget (which keeps a scheduled run below the cluster's timeout) is spent."""
    report = DeliveryReport()
    deadline = time.monotonic() + budget_seconds
    chat.deliver_test_messages(now=now)  # a shift lead's "send a test message", once each
    due_at = now or timezone.now()
    # A silenced notification's deliveries wait for its silence to end (docs/architecture.md §12).
    due = NotificationDelivery.objects.filter(state=NotificationDelivery.State.PENDING, next_attempt_at__lte=due_at,
                                              notification__silenced_by__isnull=True)
    ids = list(due.order_by("next_attempt_at", "id").values_list("id", flat=True)[:limit])
    for delivery_id in ids:
        if time.monotonic() > deadline:
            break
        try:
            ok = _deliver_one(delivery_id, now)
        except Exception as exc:  # one delivery never stops the run
            log.exception("notification delivery %s failed outside its sender", delivery_id)
            _record_crash(delivery_id, now, exc)
            ok = False
        if ok is True:
            report.sent += 1
        elif ok is False:
            report.failed += 1
    return report
