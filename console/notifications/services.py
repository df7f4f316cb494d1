"""Writes of people in the console: acknowledge a notification, set thresholds."""

import logging
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from console.models import Notification, NotificationAcknowledgement, NotificationThreshold
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
