"""The periodic evaluator: open, update, resolve and escalate notifications from current state.

One call is one evaluation (a plain function a test can call). It runs in one transaction
under an advisory lock: it reads what is wrong now (`current_causes`), opens a notification
for each new dedup key together with its pending deliveries (the outbox), updates the
unresolved ones whose cause persists, resolves those whose cause is gone, and escalates those
left unacknowledged for ESCALATE_AFTER_MINUTES. It never sends anything itself.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone, translation

from console import console_sql
from console.models import (
    CancelProposal,
    Event,
    Notification,
    NotificationDelivery,
    NotificationThreshold,
    Severity,
)
from console.notifications import messages
from console.readers.flow import FlowHealth, flow_health
from console.readers.recovery import recovery_health
from console.readers.stalled import stalled_workflows
from console.roles import SHIFT_LEAD
from recovery.models import TidyWorkflow

log = logging.getLogger(__name__)

# An arbitrary but fixed advisory lock key (recovery's leases use 0x7D1_0001 and _0002).
EVALUATOR_LOCK_KEY = 0x7D1_0101

EVENT_SEVERITY = {
    Event.PAUSED: Severity.WARNING,
    Event.PAUSED_TOO_LONG: Severity.WARNING,
    Event.STALLED: Severity.WARNING,
    Event.RECOVERY_STALE: Severity.ERROR,
    Event.PROPOSAL_WAITING: Severity.WARNING,
    Event.BACKLOG_NOT_DRAINING: Severity.WARNING,
}


@dataclass(frozen=True)
class Cause:
    """Something wrong now, as one notification would describe it."""

    event: str
    dedup_key: str
    subject: str
    body: str
    url_path: str
    workflow_id: int | None = None
    reason: str = ""
    cause_since: datetime | None = None
    details: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)  # the values its texts are made from (JSON)

    @property
    def severity(self) -> str:
        return EVENT_SEVERITY[self.event]


@dataclass
class EvaluationReport:
    skipped: bool = False
    opened: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)


def _cause(event: str, key: str, context: dict, **kw) -> Cause:
    # The stored subject and body are the English record (logs stay English); pages, e-mails and
    # webhooks make them again in their reader's language from `context`.
    with translation.override("en"):
        return Cause(event=event, dedup_key=key, subject=messages.subject_for(event, context),
                     body=messages.body_for(event, context), context=context, **kw)


def paused_thresholds() -> dict[str, int]:
    """Minutes per pause reason code that shift leads set; others use the default."""
    return dict(NotificationThreshold.objects.values_list("reason_code", "paused_too_long_minutes"))


def default_paused_threshold() -> int:
    return settings.NOTIFY_PAUSED_TOO_LONG_MINUTES


REASON_MAX_LENGTH = Notification._meta.get_field("reason").max_length


def _paused_causes(now: datetime) -> list[Cause]:
    thresholds = paused_thresholds()
    causes = []
    # tidy_workflow_status_idx (status, updated_at); updated_at is when it paused.
    for wid, reason, since in (TidyWorkflow.objects.filter(status=TidyWorkflow.Status.PAUSED_RECOVERY)
                               .order_by("workflow_id").values_list("workflow_id", "pause_reason", "updated_at")):
        # WMS text of any length: cut to what a notification keeps, or one long reason would
        # make every evaluation fail (docs/architecture.md §12).
        reason = (reason or "")[:REASON_MAX_LENGTH]
        path = reverse("workflow-detail", args=[wid])
        ctx = {"workflow_id": wid, "reason": reason or "-"}
        causes.append(_cause(Event.PAUSED, f"paused:{wid}", ctx, url_path=path, workflow_id=wid, reason=reason,
                             cause_since=since))
        minutes = thresholds.get(reason, default_paused_threshold())
        if now - since >= timedelta(minutes=minutes):
            causes.append(_cause(Event.PAUSED_TOO_LONG, f"paused_too_long:{wid}", {**ctx, "minutes": minutes},
                                 url_path=path, workflow_id=wid, reason=reason, cause_since=since,
                                 details={"threshold_minutes": minutes}))
    return causes


def _stalled_causes(now: datetime) -> list[Cause]:
    minutes = settings.STALLED_AFTER_MINUTES
    causes = []
    for s in stalled_workflows(now=now):
        ctx = {"workflow_id": s.workflow_id, "job_id": s.job_id, "job_status": s.job_status, "minutes": minutes,
               "step_no": s.step_no, "tray_code": s.tray_code, "source": s.cargo_space_id,
               "target": s.target_cargo_space_id}
        causes.append(_cause(Event.STALLED, f"stalled:{s.workflow_id}", ctx,
                             url_path=reverse("workflow-detail", args=[s.workflow_id]), workflow_id=s.workflow_id,
                             reason=f"job status {s.job_status}", cause_since=s.job_updated_at,
                             details={"job_id": s.job_id, "job_status": s.job_status, "step_no": s.step_no}))
    return causes


def _recovery_causes(now: datetime) -> list[Cause]:
    health = recovery_health()
    last = health.last_success.finished_at if health.last_success else None
    if last is not None and now - last <= health.stale_after:
        return []
    stale_after = int(health.stale_after.total_seconds())
    ctx = {"seconds": stale_after, "stale_after": stale_after, "last_success_at": last.isoformat() if last else None}
    return [_cause(Event.RECOVERY_STALE, "recovery_stale", ctx, url_path=reverse("recovery-health"),
                   cause_since=last, details={"last_success_at": last.isoformat() if last else None})]


def _proposal_causes(now: datetime) -> list[Cause]:
    minutes = settings.NOTIFY_PROPOSAL_WAITING_MINUTES
    causes = []
    for p in (CancelProposal.objects.filter(status=CancelProposal.Status.PENDING,
                                            proposed_at__lte=now - timedelta(minutes=minutes))
              .select_related("proposed_by").order_by("proposed_at", "pk")):
        ctx = {"workflow_id": p.workflow_id, "minutes": minutes, "proposed_by": p.proposed_by.get_username()}
        causes.append(_cause(Event.PROPOSAL_WAITING, f"proposal_waiting:{p.pk}", ctx,
                             url_path=reverse("repair-proposal", args=[p.pk]), workflow_id=p.workflow_id,
                             reason=p.reason_code, cause_since=p.proposed_at, details={"proposal_id": p.pk}))
    return causes


def backlog_not_draining(flow: FlowHealth) -> bool:
    """The backlog is not draining when tidy jobs have been waiting for the whole window and no
    more of them finished than arrived in it: the backlog now is at least what it was then."""
    return (flow.backlog > 0 and flow.oldest_age is not None and flow.oldest_age >= flow.window
            and flow.completions <= flow.arrivals)


def _backlog_causes(now: datetime) -> list[Cause]:
    minutes = settings.NOTIFY_BACKLOG_WINDOW_MINUTES
    flow = flow_health(window=timedelta(minutes=minutes))
    if not backlog_not_draining(flow):
        return []
    ctx = {"backlog": flow.backlog, "arrivals": flow.arrivals, "completions": flow.completions,
           "minutes": minutes, "oldest": timezone.localtime(flow.oldest_created_at).strftime("%H:%M")}
    return [_cause(Event.BACKLOG_NOT_DRAINING, "backlog_not_draining", ctx, url_path=reverse("flow-health"),
                   cause_since=flow.oldest_created_at,
                   details={"backlog": flow.backlog, "arrivals": flow.arrivals, "completions": flow.completions,
                            "window_minutes": minutes})]


def current_causes(*, now: datetime | None = None) -> list[Cause]:
    """Every cause of a notification that holds now, in a stable order."""
    now = now or timezone.now()
    return [*_paused_causes(now), *_stalled_causes(now), *_recovery_causes(now), *_proposal_causes(now),
            *_backlog_causes(now)]


# --- recipients and the outbox ---------------------------------------------------------------


def shift_lead_emails() -> list[str]:
    """E-mail addresses of active users in the shift lead group, then NOTIFY_ESCALATE_EMAIL_TO."""
    users = (get_user_model().objects.filter(groups__name=SHIFT_LEAD, is_active=True).exclude(email="")
             .order_by("email").values_list("email", flat=True))
    return list(dict.fromkeys([*users, *settings.NOTIFY_ESCALATE_EMAIL_TO]))


def _queue_deliveries(notification: Notification, *, kind: str, now: datetime) -> list[NotificationDelivery]:
    """The outbox rows of one message, written in the caller's transaction. Without any channel
    configured the message goes to the log, so it is never silently dropped."""
    emails = settings.NOTIFY_EMAIL_TO if kind == NotificationDelivery.Kind.OPENED else shift_lead_emails()
    rows = []
    if emails:
        rows.append((NotificationDelivery.Channel.EMAIL, list(emails)))
    if settings.NOTIFY_WEBHOOK_URL:
        rows.append((NotificationDelivery.Channel.WEBHOOK, [settings.NOTIFY_WEBHOOK_URL]))
    if not rows:
        rows.append((NotificationDelivery.Channel.LOG, []))
    return NotificationDelivery.objects.bulk_create(
        NotificationDelivery(notification=notification, channel=channel, kind=kind, severity=notification.severity,
                             recipients=recipients, next_attempt_at=now)
        for channel, recipients in rows)


def _open(cause: Cause, now: datetime) -> Notification:
    notification = Notification.objects.create(
        event=cause.event, dedup_key=cause.dedup_key, severity=cause.severity, subject=cause.subject,
        body=cause.body, workflow_id=cause.workflow_id, reason=cause.reason, url_path=cause.url_path,
        cause_since=cause.cause_since, details={**cause.details, messages.CONTEXT_KEY: cause.context},
        opened_at=now, last_seen_at=now)
    _queue_deliveries(notification, kind=NotificationDelivery.Kind.OPENED, now=now)
    return notification


def evaluate_notifications(*, now: datetime | None = None) -> EvaluationReport:
    """One evaluation (see the module docstring). Returns what it opened, updated, resolved and
    escalated, by dedup key; `skipped` when another evaluation held the lock."""
    now = now or timezone.now()
    report = EvaluationReport()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(console_sql.TRY_EVALUATOR_LOCK, {"key": EVALUATOR_LOCK_KEY})
            if not cursor.fetchone()[0]:
                log.info("notifications: another evaluation is running; skipping")
                report.skipped = True
                return report
        causes = {c.dedup_key: c for c in current_causes(now=now)}
        live = {n.dedup_key: n for n in Notification.objects.select_for_update().filter(resolved_at__isnull=True)}
        for key, cause in causes.items():
            n = live.get(key)
            if n is None:
                live[key] = n = _open(cause, now)
                report.opened.append(key)
                log.info("notification opened: %s", n.subject,
                         extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
                continue
            n.last_seen_at = now
            n.evaluations += 1
            # The texts' values stay those of the opening, like the stored subject.
            kept = {k: v for k, v in n.details.items() if k == messages.CONTEXT_KEY}
            n.details = {**cause.details, **kept}
            n.reason = cause.reason
            n.save(update_fields=["last_seen_at", "evaluations", "details", "reason"])
            report.updated.append(key)
        for key, n in live.items():
            if key in causes:
                continue
            n.state = Notification.State.RESOLVED
            n.resolved_at = now
            n.save(update_fields=["state", "resolved_at"])
            report.resolved.append(key)
            log.info("notification resolved (cause gone): %s", n.subject,
                     extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
        due = now - timedelta(minutes=settings.ESCALATE_AFTER_MINUTES)
        for key, n in live.items():
            if (key in causes and n.state == Notification.State.OPEN and n.escalated_at is None
                    and n.opened_at <= due):
                n.severity = Severity.CRITICAL
                n.escalated_at = now
                n.save(update_fields=["severity", "escalated_at"])
                _queue_deliveries(n, kind=NotificationDelivery.Kind.ESCALATED, now=now)
                report.escalated.append(key)
                log.warning("notification escalated to shift leads: %s", n.subject,
                            extra={"notification_id": n.pk, "event": n.event, "workflow_id": n.workflow_id})
    return report
