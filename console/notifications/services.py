"""Writes of people in the console: acknowledge a notification, set thresholds, create and end silences."""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from console.models import (
    ChannelTestMessage,
    Notification,
    NotificationAcknowledgement,
    NotificationThreshold,
    Silence,
    SilenceEnding,
)
from console.rate_limits import RATE_WINDOW, rate_limit_check
from recovery.errors import Refused

log = logging.getLogger(__name__)


class NotificationError(Refused):
    """A refused change; the message says why, for the person who asked."""


@dataclass(frozen=True)
class Acknowledged:
    acknowledgement: NotificationAcknowledgement
    created: bool  # False: it was already acknowledged (a double submit, or someone else first)


def notification_acknowledge(*, notification_id: int, user) -> Acknowledged:
    """Record who acknowledged an open notification, once. The acknowledgement row is
    append-only; the notification's state moves from open to acknowledged by compare-and-set."""
    with transaction.atomic():
        n = Notification.objects.select_for_update().filter(pk=notification_id).first()
        if n is None:
            raise NotificationError(_("Notification %(id)s does not exist.") % {"id": notification_id})
        existing = NotificationAcknowledgement.objects.filter(notification=n).select_related("user").first()
        if existing is not None:
            return Acknowledged(existing, created=False)
        if n.state != Notification.State.OPEN:
            raise NotificationError(_("Notification %(id)s is %(state)s; only open ones are acknowledged.")
                                    % {"id": notification_id, "state": n.get_state_display()})
        try:
            with transaction.atomic():
                ack = NotificationAcknowledgement.objects.create(notification=n, user=user,
                                                                 username=user.get_username())
        except IntegrityError:
            return Acknowledged(NotificationAcknowledgement.objects.get(notification=n), created=False)
        Notification.objects.filter(pk=n.pk, state=Notification.State.OPEN).update(
            state=Notification.State.ACKNOWLEDGED)
    log.info("notification acknowledged by %s: %s", ack.username, n.subject,
             extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
    return Acknowledged(ack, created=True)


def thresholds_update(*, values: dict[str, int], user, default: int) -> list[str]:
    """Set the paused-too-long minutes of the given reason codes; returns the codes changed. A
    code left at the default gets no row, so it keeps following NOTIFY_PAUSED_TOO_LONG_MINUTES."""
    changed = []
    with transaction.atomic():
        current = {t.reason_code: t for t in NotificationThreshold.objects.select_for_update()
                   .filter(reason_code__in=list(values))}
        for code, minutes in values.items():
            row = current.get(code)
            if row is None and minutes == default:
                continue
            if row is None:
                NotificationThreshold.objects.create(reason_code=code, paused_too_long_minutes=minutes,
                                                     updated_by=user)
                changed.append(code)
            elif row.paused_too_long_minutes != minutes:
                row.paused_too_long_minutes = minutes
                row.updated_by = user
                row.save(update_fields=["paused_too_long_minutes", "updated_by", "updated_at"])
                changed.append(code)
    if changed:
        log.info("paused-too-long thresholds changed by %s: %s", user.get_username(),
                 ", ".join(f"{c}={values[c]} min" for c in changed))
    return changed


# --- silences ------------------------------------------------------------------------------------

MAX_SILENCE = timedelta(days=7)


@dataclass(frozen=True)
class SilenceEnded:
    ending: SilenceEnding
    created: bool  # False: it was already ended (a double submit, or another shift lead first)


# The first key of the silence post's advisory lock ("SILE" in ASCII; notes use "NOTE").
SILENCE_RATE_LOCK_NAMESPACE = 0x53494C45


def silence_create(*, user, event: str, reason: str, aisle: str, starts_at: datetime, ends_at: datetime,
                   comment: str, now: datetime | None = None) -> Silence:
    """Record a silence (append-only). The next evaluation holds back what it matches. RateLimited
    (nothing stored) when the person created SILENCES_PER_USER_PER_HOUR in the last hour."""
    if not comment.strip():
        raise NotificationError(_("A silence needs a comment."))
    if not (starts_at < ends_at and ends_at - starts_at <= MAX_SILENCE):  # (no date arithmetic near year 9999)
        raise NotificationError(_("A silence ends after its start and at most 7 days later."))
    now = now or timezone.now()
    with transaction.atomic():
        # One person's silences of the last hour: a handful of rows (console.rate_limits, as notes).
        rate_limit_check(namespace=SILENCE_RATE_LOCK_NAMESPACE, user=user, limit=settings.SILENCES_PER_USER_PER_HOUR,
                         now=now, recent_times=Silence.objects.filter(created_by=user, created_at__gt=now - RATE_WINDOW)
                         .order_by("-created_at").values_list("created_at", flat=True))
        silence = Silence.objects.create(event=event, reason=reason, aisle=aisle, starts_at=starts_at,
                                         ends_at=ends_at, comment=comment.strip(), created_by=user,
                                         username=user.get_username())
    log.info("silence %s created by %s: event=%s reason=%s aisle=%s from %s to %s", silence.pk, silence.username,
             event or "*", reason or "*", aisle or "*", starts_at.isoformat(), ends_at.isoformat(),
             extra={"silence_id": silence.pk})
    return silence


def silence_end(*, silence_id: int, user, now: datetime | None = None) -> SilenceEnded:
    """End a silence now (before its `ends_at`), once: who and when, append-only. What it held
    back and is still open goes out after the next evaluation. The silence's times are compared
    in the database, never loaded, so a silence whose times cannot be read (out of range) can
    still be ended."""
    now = now or timezone.now()
    with transaction.atomic():
        found = (Silence.objects.select_for_update().filter(pk=silence_id)
                 .annotate(over=ExpressionWrapper(Q(ends_at__lte=now), output_field=BooleanField()))
                 .values_list("over", flat=True).first())
        if found is None:
            raise NotificationError(_("Silence %(id)s does not exist.") % {"id": silence_id})
        existing = SilenceEnding.objects.filter(silence_id=silence_id).first()
        if existing is not None:
            return SilenceEnded(existing, created=False)
        if found:
            raise NotificationError(_("Silence %(id)s is already over.") % {"id": silence_id})
        ending = SilenceEnding.objects.create(silence_id=silence_id, at=now, user=user,
                                              username=user.get_username())
    log.info("silence %s ended by %s", silence_id, ending.username, extra={"silence_id": silence_id})
    return SilenceEnded(ending, created=True)


# --- chat channels -------------------------------------------------------------------------------

# The first key of the test-message button's advisory lock ("CHAN" in ASCII).
CHANNEL_TEST_RATE_LOCK_NAMESPACE = 0x4348414E


def channel_test_request(*, channel_name: str, user, now: datetime | None = None) -> ChannelTestMessage:
    """Queue one test message to a configured chat channel: the row is the audit (who, when, which
    channel) and the delivery worker sends it once. RateLimited (nothing stored) past
    CHANNEL_TESTS_PER_USER_PER_HOUR; NotificationError for a channel that is not configured."""
    from console.notifications.channels.send import channel_named

    if channel_named(channel_name) is None:
        raise NotificationError(_("There is no chat channel named %(name)s.") % {"name": channel_name})
    now = now or timezone.now()
    with transaction.atomic():
        rate_limit_check(namespace=CHANNEL_TEST_RATE_LOCK_NAMESPACE, user=user,
                         limit=settings.CHANNEL_TESTS_PER_USER_PER_HOUR, now=now,
                         recent_times=ChannelTestMessage.objects.filter(requested_by=user,
                                                                        requested_at__gt=now - RATE_WINDOW)
                         .order_by("-requested_at").values_list("requested_at", flat=True))
        test = ChannelTestMessage.objects.create(channel=channel_name, requested_at=now, requested_by=user,
                                                 username=user.get_username(), next_attempt_at=now)
    log.info("test message to channel %s requested by %s", channel_name, test.username,
             extra={"channel": channel_name, "channel_test_id": test.pk})
    return test
