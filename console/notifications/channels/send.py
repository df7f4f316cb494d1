"""The one delivery interface of the chat channels (see __init__.py).

`slot` decides, inside the caller's transaction, whether a channel may take one more message now:
it locks the channel's ChannelState row (FOR UPDATE), so every qcluster process asks one at a
time, counts the channel's messages of the vendor's windows (ChannelSend rows) and either records
this one or says when to try again; a burst therefore waits for the next window and goes out in
order, and nothing is dropped. The lock is held until the caller commits, after the send.
`send_delivery` renders a notification's message in the channel's language, cut to the vendor's
limit with its links kept, posts it through the journaled `http_request` (the journal shows the
host, never the token) and reads the vendor's answer with its success rule.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import ModuleType

from django.conf import settings
from django.db import connection, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from console.models import ChannelState, ChannelTestMessage, NotificationDelivery
from console.notifications import groups, messages
from console.notifications.channels import dingtalk, feishu, slack, teams, webhook, wecom
from console.notifications.channels import sql as channels_sql
from console.notifications.channels.base import ChatMessage, VendorAnswer, cut, one_line
from console.notifications.channels.config import Channel
from recovery.engine.wcs import HttpFailure, http_request

log = logging.getLogger(__name__)

PURPOSE = "notification-channel"
CLIENTS: dict[str, ModuleType] = {"wecom": wecom, "dingtalk": dingtalk, "feishu": feishu, "slack": slack,
                                  "teams": teams, "webhook": webhook}
MESSAGE_MEMBERS = 1000  # a group's message names at most this many (the cut may keep fewer; the list has all)


class ChannelFailed(Exception):
    """A refused or failed send: the vendor's code (or the HTTP status) and its message."""

    def __init__(self, message: str, *, code: str = ""):
        super().__init__(message)
        self.code = code


def channels() -> tuple[Channel, ...]:
    return tuple(settings.NOTIFY_CHANNELS)


def channel_named(name: str) -> Channel | None:
    return next((c for c in channels() if c.name == name), None)


# --- the rate limit --------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    granted: bool
    retry_at: datetime | None = None  # not granted: when the window has room again (None: later, in order)


def windows(client: ModuleType) -> list[tuple[int, timedelta]]:
    """The client's limits as (messages, window), a vendor minute lasting NOTIFY_CHANNEL_MINUTE_SECONDS."""
    scale = settings.NOTIFY_CHANNEL_MINUTE_SECONDS / 60
    return [(count, timedelta(seconds=seconds * scale)) for count, seconds in client.LIMITS]


def _clock(now: datetime) -> datetime:
    """The time a limit counts: the real clock once the lock is held (a wait for the lock must not
    make a message look older than it is), or `now` when a caller runs ahead of it (tests)."""
    return max(now, timezone.now())


def slot(channel: Channel, *, now: datetime, delivery: NotificationDelivery | None = None) -> Slot:
    """In the caller's transaction: may one more message go to `channel` now? The channel's row
    stays locked until the caller commits, so the caller sends, then calls `sent`. A delivery
    waits while an older one of the same channel is due (it goes first)."""
    client = CLIENTS[channel.kind]
    with connection.cursor() as cursor:
        cursor.execute(channels_sql.ENSURE_CHANNEL_STATE, {"name": channel.name})
        cursor.execute(channels_sql.LOCK_CHANNEL_STATE, {"name": channel.name})
        if delivery is not None:
            cursor.execute(channels_sql.EARLIER_DUE, {"now": now, "name": channel.name, "id": delivery.pk})
            if cursor.fetchone()[0]:
                return Slot(False)
        at = _clock(now)
        retry_at = None
        for count, window in windows(client):
            cursor.execute(channels_sql.RECENT_SENDS, {"name": channel.name, "since": at - window, "count": count})
            recent = [row[0] for row in cursor.fetchall()]
            if len(recent) >= count:
                # The oldest of the last `count` must leave the window (a thirtieth more for the
                # vendor's clock).
                free_at = recent[-1] + window + window / 30
                retry_at = max(retry_at or free_at, free_at)
    return Slot(retry_at is None, retry_at)


def sent(channel: Channel, *, now: datetime) -> None:
    """Count one message the vendor has answered (taken or refused: both count at the vendor), at
    the time its answer came, the latest it can have arrived; forget what no window counts any more."""
    longest = max((window for _, window in windows(CLIENTS[channel.kind])), default=None)
    if longest is None:
        return
    at = _clock(now)
    with connection.cursor() as cursor:
        cursor.execute(channels_sql.FORGET_SENDS, {"name": channel.name, "before": at - 2 * longest})
        cursor.execute(channels_sql.RECORD_SEND, {"name": channel.name, "at": at})


def record_outcome(name: str, *, at: datetime, ok: bool, code: str = "", error: str = "") -> None:
    """The channel's last success or failure, for its page (in the caller's transaction)."""
    if ok:
        ChannelState.objects.filter(name=name).update(last_success_at=at)
    else:
        ChannelState.objects.filter(name=name).update(last_failure_at=at, last_failure_code=code[:64],
                                                      last_failure_error=error[:2000])


# --- the message -----------------------------------------------------------------------------


def _age_seconds(n, now: datetime) -> int | None:
    return max(0, int((now - n.cause_since).total_seconds())) if n.cause_since else None


def _context(client: ModuleType, **values) -> dict:
    return {"style": client.STYLE, "title_in_text": client.TITLE_IN_TEXT, **values}


def _text(client: ModuleType, body_template: str, context: dict) -> str:
    body = render_to_string(body_template, context).strip()
    links = render_to_string("notifications/channels/links.txt", context).strip()
    return cut(body, links, client.TEXT_LIMIT)


def delivery_message(delivery: NotificationDelivery, channel: Channel, now: datetime, *,
                     webhook_payload: Callable[..., dict]) -> ChatMessage:
    """The message of one delivery for `channel`, in the channel's language; `webhook_payload`
    makes the contract fields of the webhook kind (console.notifications.delivery's, passed in:
    delivery uses this package, never the other way round)."""
    client = CLIENTS[channel.kind]
    n = delivery.notification
    escalated = delivery.kind == NotificationDelivery.Kind.ESCALATED
    with translation.override(channel.language):
        subject = messages.notification_subject(n)
        if escalated:
            subject = messages.escalated_subject(subject)
        members = groups.members(n) if groups.is_group(n) else []
        base = settings.CONSOLE_BASE_URL
        links = n.details.get("links") if isinstance(n.details, dict) else None
        batch = links.get("batch") if isinstance(links, dict) else None
        context = _context(
            client, title=client.escape(one_line(subject)),
            explanation=client.escape(one_line(messages.notification_explanation(n))), escalated=escalated,
            grouped=bool(members), count=len(members), reason=client.escape(one_line(n.reason)),
            aisle=client.escape(one_line(n.aisle)), age=_age_seconds(n, now),
            workflow_ids=", ".join(str(i) for i in members[:MESSAGE_MEMBERS]),
            more_members=max(0, len(members) - MESSAGE_MEMBERS), severity=delivery.severity,
            open_url=base + n.url_path, batch_url=base + batch if isinstance(batch, str) else "",
            notifications_url=base + reverse("notifications"))
        text = _text(client, "notifications/channels/message.txt", context)
        payload = webhook_payload(delivery, now, language=channel.language) if channel.kind == "webhook" else {}
    return ChatMessage(title=one_line(subject)[:200], text=text,
                       mentions=channel.mention if escalated else (), payload=payload)


def test_message(test: ChannelTestMessage, channel: Channel, now: datetime) -> ChatMessage:
    client = CLIENTS[channel.kind]
    with translation.override(channel.language):
        from django.utils.translation import gettext

        title = gettext("Test message from the Tidy Recovery Console")
        context = _context(client, title=title, channel=channel.name, username=client.escape(test.username),
                           open_url=settings.CONSOLE_BASE_URL + reverse("notification-channels"), test=True)
        text = _text(client, "notifications/channels/test_message.txt", context)
        payload = {"event": "test", "severity": "info", "subject": title, "channel": channel.name,
                   "requested_by": test.username, "url": context["open_url"], "sent_at": now.isoformat()}
    return ChatMessage(title=title, text=text, payload=payload)


# --- sending ---------------------------------------------------------------------------------


def post(channel: Channel, message: ChatMessage, *, now: datetime) -> VendorAnswer:
    """POST one message; raises ChannelFailed unless the vendor accepted it."""
    client = CLIENTS[channel.kind]
    req = client.request(channel, message, now.timestamp())
    try:
        answer = http_request("POST", req.url, purpose=PURPOSE, timeout_ms=settings.NOTIFY_WEBHOOK_TIMEOUT_MS,
                              body=req.body, headers=req.headers, shown_url=channel.shown_url)
    except HttpFailure as exc:
        raise ChannelFailed(f"{channel.name}: {exc}", code="") from exc
    verdict = client.answer(answer.status, answer.body)
    if not verdict.ok:
        raise ChannelFailed(f"{channel.name} ({channel.kind}) refused: code {verdict.code}: {verdict.message}",
                            code=verdict.code)
    return verdict


def send_delivery(delivery: NotificationDelivery, now: datetime, *, webhook_payload: Callable[..., dict]) -> None:
    """The sender of outbox rows of channel `chat` (console.notifications.delivery.SENDERS)."""
    channel = channel_named(delivery.channel_name)
    if channel is None:
        raise ChannelFailed(f"channel {delivery.channel_name!r} is not in NOTIFY_CHANNELS_FILE any more")
    post(channel, delivery_message(delivery, channel, now, webhook_payload=webhook_payload), now=now)


def deliver_test_messages(*, now: datetime | None = None, limit: int = 20) -> int:
    """Send the waiting test messages once each (never retried: the page shows the outcome);
    returns how many were tried. One that the channel's limit holds back waits for its window."""
    due_at = now or timezone.now()
    ids = list(ChannelTestMessage.objects.filter(state=ChannelTestMessage.State.PENDING, next_attempt_at__lte=due_at)
               .order_by("next_attempt_at", "id").values_list("id", flat=True)[:limit])
    tried = 0
    for test_id in ids:
        with transaction.atomic():
            test = (ChannelTestMessage.objects.select_for_update(skip_locked=True)
                    .filter(pk=test_id, state=ChannelTestMessage.State.PENDING).first())
            if test is None:
                continue
            at = now or timezone.now()
            channel = channel_named(test.channel)
            if channel is not None:
                granted = slot(channel, now=at)
                if not granted.granted:
                    test.next_attempt_at = granted.retry_at or at
                    test.save(update_fields=["next_attempt_at"])
                    continue
            t0 = time.perf_counter()
            try:
                if channel is None:
                    raise ChannelFailed(f"channel {test.channel!r} is not in NOTIFY_CHANNELS_FILE any more")
                try:
                    post(channel, test_message(test, channel, at), now=at)
                finally:
                    sent(channel, now=at)
            except ChannelFailed as exc:
                test.state = ChannelTestMessage.State.FAILED
                test.vendor_code, test.error = exc.code[:64], str(exc)[:2000]
            else:
                test.state = ChannelTestMessage.State.SENT
            test.finished_at = at
            test.save(update_fields=["state", "vendor_code", "error", "finished_at"])
            record_outcome(test.channel, at=at, ok=test.state == ChannelTestMessage.State.SENT, code=test.vendor_code,
                           error=test.error)
            tried += 1
        log.info("test message to channel %s requested by %s: %s (%.0f ms)", test.channel, test.username, test.state,
                 (time.perf_counter() - t0) * 1000, extra={"channel": test.channel})
    return tried
