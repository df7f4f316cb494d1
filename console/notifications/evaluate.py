"""The periodic evaluator: open, update, resolve and escalate notifications from current state.

One call is one evaluation (a plain function a test can call). It runs in one transaction
under an advisory lock: it reads what is wrong now (`current_causes`: every event spec's
reader, grouping events merged per reason and aisle by groups.py), opens a notification for
each new dedup key together with its pending deliveries (the outbox; a group's due after
NOTIFY_GROUP_WAIT_SECONDS), updates the unresolved ones whose cause persists (a group takes its
new members), holds back or releases those a silence matches (silences.py), resolves those whose
cause is gone, and escalates those left unacknowledged for ESCALATE_AFTER_MINUTES after their
messages were released. It never sends anything itself (docs/architecture.md §12).
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone, translation

from console.models import Notification, NotificationDelivery, Severity, Silence
from console.notifications import groups, messages, silences
from console.notifications import sql as notifications_sql
from console.notifications.events import (  # noqa: F401 (re-exported: the readers' names of before)
    SPECS,
    Cause,
    backlog_not_draining,
    default_paused_threshold,
    paused_thresholds,
)
from console.roles import SHIFT_LEAD

log = logging.getLogger(__name__)

# An arbitrary but fixed advisory lock key (recovery's leases use 0x7D1_0001 and _0002).
EVALUATOR_LOCK_KEY = 0x7D1_0101


@dataclass
class EvaluationReport:
    skipped: bool = False
    opened: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)
    silenced: list[str] = field(default_factory=list)  # held back by a silence from this run on
    released: list[str] = field(default_factory=list)  # its silence ended while it is open: sent now


def current_causes(*, now: datetime | None = None) -> list[Cause]:
    """Every cause of a notification that holds now, in the registry's order, those of grouping
    events merged per event, reason and aisle (groups.py)."""
    now = now or timezone.now()
    return groups.grouped([cause for spec in SPECS for cause in spec.causes(now)])


# --- recipients and the outbox ---------------------------------------------------------------


def shift_lead_emails() -> list[str]:
    """E-mail addresses of active users in the shift lead group, then NOTIFY_ESCALATE_EMAIL_TO."""
    users = (get_user_model().objects.filter(groups__name=SHIFT_LEAD, is_active=True).exclude(email="")
             .order_by("email").values_list("email", flat=True))
    return list(dict.fromkeys([*users, *settings.NOTIFY_ESCALATE_EMAIL_TO]))


def _queue_deliveries(notification: Notification, *, kind: str, now: datetime,
                      wait: timedelta = timedelta(0)) -> list[NotificationDelivery]:
    """The outbox rows of one message, written in the caller's transaction, due `wait` from now.
    Without any channel configured the message goes to the log, so it is never silently dropped
    (with chat channels configured, one whose filters take none of them is left unsent on purpose)."""
    emails = settings.NOTIFY_EMAIL_TO if kind == NotificationDelivery.Kind.OPENED else shift_lead_emails()
    rows = []
    if emails:
        rows.append((NotificationDelivery.Channel.EMAIL, list(emails), ""))
    if settings.NOTIFY_WEBHOOK_URL:
        rows.append((NotificationDelivery.Channel.WEBHOOK, [settings.NOTIFY_WEBHOOK_URL], ""))
    # Each chat channel whose filters take it (events, minimum severity, escalations only); its
    # URL stays in the settings, the row names the channel.
    escalated = kind == NotificationDelivery.Kind.ESCALATED
    rows += [(NotificationDelivery.Channel.CHAT, [], c.name) for c in settings.NOTIFY_CHANNELS
             if c.takes(event=notification.event, severity=notification.severity, escalated=escalated)]
    if not rows and not settings.NOTIFY_CHANNELS:
        rows.append((NotificationDelivery.Channel.LOG, [], ""))
    return NotificationDelivery.objects.bulk_create(
        NotificationDelivery(notification=notification, channel=channel, kind=kind, severity=notification.severity,
                             recipients=recipients, channel_name=name, next_attempt_at=now + wait)
        for channel, recipients, name in rows)


def _english(cause_or_spec, context: dict) -> tuple[str, str]:
    # The stored subject and body are the English record (logs stay English); pages, e-mails and
    # webhooks make them again in their reader's language from the kept values.
    spec = getattr(cause_or_spec, "spec", cause_or_spec)
    with translation.override("en"):
        return spec.render_subject(context), spec.render_body(context)


def _open(cause: Cause, now: datetime, active: list[Silence]) -> Notification:
    subject, body = _english(cause, cause.context)
    notification = Notification(
        event=cause.event, dedup_key=cause.dedup_key, severity=cause.severity, subject=subject,
        body=body, workflow_id=cause.workflow_id, reason=cause.reason, url_path=cause.url_path,
        cause_since=cause.cause_since, details={**cause.details, messages.CONTEXT_KEY: cause.context},
        opened_at=now, last_seen_at=now, aisle=cause.aisle)
    # Under a silence it is recorded, its messages queued but held (delivery skips it).
    notification.silenced_by = silences.holding(active, notification)
    notification.announced_at = None if notification.silenced_by else now
    notification.save(force_insert=True)
    # A group's first message waits for the rest of a burst to join it (groups.py).
    wait = timedelta(seconds=settings.NOTIFY_GROUP_WAIT_SECONDS) if cause.spec.groups else timedelta(0)
    _queue_deliveries(notification, kind=NotificationDelivery.Kind.OPENED, now=now, wait=wait)
    return notification


def _update(n: Notification, cause: Cause, now: datetime) -> list[str]:
    """A notification whose cause persists: seen again; a group takes its new members. Returns
    the fields changed."""
    n.last_seen_at = now
    n.evaluations += 1
    n.reason = cause.reason
    # The texts' values stay those of the opening, like the stored subject ...
    kept = dict(n.details.get(messages.CONTEXT_KEY) or {}) if isinstance(n.details, dict) else {}
    fields = ["last_seen_at", "evaluations", "details", "reason"]
    if not cause.spec.groups or not groups.is_group(n):
        n.details = {**cause.details, messages.CONTEXT_KEY: kept}
        return fields
    # ... but a group's count, which grows as members join (its stored texts follow).
    members = groups.joined(groups.members(n), cause)
    n.details = {**cause.details, groups.MEMBERS: members, messages.CONTEXT_KEY: {**kept, "count": len(members)}}
    n.workflow_id = members[0] if len(members) == 1 else None
    if cause.cause_since is not None and (n.cause_since is None or cause.cause_since < n.cause_since):
        n.cause_since = cause.cause_since
    fields += ["workflow_id", "cause_since"]
    if kept.get("count") != len(members):
        try:
            n.subject, n.body = _english(cause, {**kept, "count": len(members)})
            fields += ["subject", "body"]
        except (KeyError, TypeError, ValueError):  # kept values this version's texts cannot use
            pass
    return fields


def _withhold(n: Notification) -> None:
    """Its messages never go out: it resolved, or was acknowledged, while silenced."""
    n.deliveries.filter(state=NotificationDelivery.State.PENDING).update(state=NotificationDelivery.State.WITHHELD)


def _apply_silence(n: Notification, silence: Silence | None, now: datetime, report: EvaluationReport) -> None:
    """Hold an unresolved notification back while a silence matches it; when none does any more,
    release it: still open, its messages are due now (escalation counts from now); acknowledged
    meanwhile, they are withheld."""
    if silence is not None:
        if n.silenced_by_id != silence.pk:
            n.silenced_by = silence
            n.save(update_fields=["silenced_by"])
            report.silenced.append(n.dedup_key)
        return
    if n.silenced_by_id is None:
        return
    n.silenced_by = None
    fields = ["silenced_by"]
    if n.announced_at is None:
        if n.state == Notification.State.OPEN:
            n.announced_at = now
            fields.append("announced_at")
            report.released.append(n.dedup_key)
            log.info("notification released (its silence ended): %s", n.subject,
                     extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
        else:
            _withhold(n)
    n.save(update_fields=fields)


def evaluate_notifications(*, now: datetime | None = None) -> EvaluationReport:
    """One evaluation (see the module docstring). Returns what it opened, updated, resolved and
    escalated, by dedup key; `skipped` when another evaluation held the lock."""
    now = now or timezone.now()
    report = EvaluationReport()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(notifications_sql.TRY_EVALUATOR_LOCK, {"key": EVALUATOR_LOCK_KEY})
            if not cursor.fetchone()[0]:
                log.info("notifications: another evaluation is running; skipping")
                report.skipped = True
                return report
        causes = {c.dedup_key: c for c in current_causes(now=now)}
        live = {n.dedup_key: n for n in Notification.objects.select_for_update().filter(resolved_at__isnull=True)}
        active = silences.active_silences(now=now)
        for key, cause in causes.items():
            n = live.get(key)
            if n is None:
                live[key] = n = _open(cause, now, active)
                if n.silenced_by_id:
                    report.silenced.append(key)
                report.opened.append(key)
                log.info("notification opened: %s", n.subject,
                         extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
                continue
            n.save(update_fields=_update(n, cause, now))
            report.updated.append(key)
            _apply_silence(n, silences.holding(active, n), now, report)
        for key, n in live.items():
            if key in causes:
                continue
            n.state = Notification.State.RESOLVED
            n.resolved_at = now
            n.save(update_fields=["state", "resolved_at"])
            if n.silenced_by_id is not None:
                _withhold(n)
            report.resolved.append(key)
            log.info("notification resolved (cause gone): %s", n.subject,
                     extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
        due = now - timedelta(minutes=settings.ESCALATE_AFTER_MINUTES)
        for key, n in live.items():
            # A silenced notification does not escalate; a released one counts from its release.
            if (key in causes and n.state == Notification.State.OPEN and n.escalated_at is None
                    and n.silenced_by_id is None and n.announced_at is not None and n.announced_at <= due):
                n.severity = Severity.CRITICAL
                n.escalated_at = now
                n.save(update_fields=["severity", "escalated_at"])
                _queue_deliveries(n, kind=NotificationDelivery.Kind.ESCALATED, now=now)
                report.escalated.append(key)
                log.warning("notification escalated to shift leads: %s", n.subject,
                            extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
    return report
