"""The notification events, each declared once (docs/architecture.md §12, §14).

An `EventSpec` is everything about one event: its code, label and severity, its subject and
body (message ids with `%(name)s` values, marked with `gettext_noop`, rendered in the reader's
language from the values a notification keeps), the reader of its causes (a function of `now`
returning `Cause`s with a stable dedup key), the setting of its threshold if it has one, whether
its notifications group, and the two cells of the user guide's event table. The evaluator, the
texts, the event filter, the metrics' `event` labels, the thresholds page and the user guide's table
all read `SPECS`; `tests/console/notifications/test_notification_registry.py` says what an incomplete spec lacks.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from console.models import CancelProposal, Notification, NotificationThreshold, Severity
from console.notifications import sql as notifications_sql
from console.readers import fetch_dicts
from console.readers.flow import FlowHealth, flow_health
from console.readers.places import aisle_of
from console.readers.recovery import recovery_health
from console.readers.stalled import stalled_workflows


@dataclass(frozen=True)
class Cause:
    """Something wrong now, as one notification would describe it."""

    event: str
    dedup_key: str
    url_path: str
    context: dict = field(default_factory=dict)  # the values its texts are made from (JSON)
    workflow_id: int | None = None
    reason: str = ""
    cause_since: datetime | None = None
    details: dict = field(default_factory=dict)
    aisle: str = ""  # of the workflow's current step's source: what its group is (§12)

    @property
    def spec(self) -> "EventSpec":
        return EVENTS[self.event]

    @property
    def severity(self) -> str:
        return self.spec.severity


@dataclass(frozen=True)
class EventSpec:
    event: str
    label: str  # message id
    severity: str
    subject: str  # message id with values
    body: str  # message id with values
    causes: Callable[[datetime], list[Cause]]
    opens_when: str  # the user guide's table's cells (English, Markdown)
    resolves_when: str
    threshold_setting: str | None = None
    # Grouping events are one notification per event, reason and aisle while it is open (§12);
    # their group texts are used once the group has more than one member (`count` in the values).
    groups: bool = False
    group_subject: str = ""
    group_body: str = ""
    # (reason, aisle) -> the console paths a group's message links to: "list" (its `url`), and
    # "batch" (the batch re-check of the same workflows) where there is one.
    group_links: Callable[[str, str], dict[str, str]] | None = None
    # (value, message id): the subject used instead when that value of the context is empty.
    subject_without: tuple[str, str] | None = None

    def message_ids(self) -> list[str]:
        ids = [self.label, self.subject, self.body]
        if self.subject_without:
            ids.append(self.subject_without[1])
        if self.groups:
            ids += [self.group_subject, self.group_body]
        return ids

    def _grouped(self, context: dict) -> bool:
        return self.groups and isinstance(context.get("count"), int) and context["count"] > 1

    def subject_id(self, context: dict) -> str:
        if self._grouped(context):
            return self.group_subject
        if self.subject_without and not context.get(self.subject_without[0]):
            return self.subject_without[1]
        return self.subject

    def render_subject(self, context: dict) -> str:
        """In the active language; raises KeyError, TypeError or ValueError on values these texts cannot use."""
        return (gettext(self.subject_id(context)) % context)[:300]

    def render_body(self, context: dict) -> str:
        return gettext(self.group_body if self._grouped(context) else self.body) % context

    def threshold(self) -> int | None:
        return getattr(settings, self.threshold_setting) if self.threshold_setting else None

    def guide_row(self) -> str:
        return f"| `{self.event}` | {self.opens_when} | {self.resolves_when} | {self.severity} |"


# --- the readers of causes -----------------------------------------------------------------------

REASON_MAX_LENGTH = Notification._meta.get_field("reason").max_length


def paused_thresholds() -> dict[str, int]:
    """Minutes per pause reason code that shift leads set; others use the default."""
    return dict(NotificationThreshold.objects.values_list("reason_code", "paused_too_long_minutes"))


def default_paused_threshold() -> int:
    return EVENTS[PAUSED_TOO_LONG].threshold()


def _paused(now: datetime, *, too_long: bool) -> list[Cause]:
    thresholds = paused_thresholds() if too_long else {}
    causes = []
    for row in fetch_dicts(notifications_sql.NOTIFY_PAUSED_WORKFLOWS, {}):
        wid, reason, since, aisle = row["workflow_id"], row["pause_reason"], row["updated_at"], aisle_of(row["source"])
        # WMS text of any length: cut to what a notification keeps, or one long reason would
        # make every evaluation fail (docs/architecture.md §12).
        reason = (reason or "")[:REASON_MAX_LENGTH]
        path = reverse("workflow-detail", args=[wid])
        ctx = {"workflow_id": wid, "reason": reason or "-"}
        if not too_long:
            causes.append(Cause(PAUSED, f"paused:{wid}", path, ctx, workflow_id=wid, reason=reason,
                                cause_since=since, aisle=aisle))
            continue
        minutes = thresholds.get(reason, default_paused_threshold())
        if now - since >= timedelta(minutes=minutes):
            causes.append(Cause(PAUSED_TOO_LONG, f"paused_too_long:{wid}", path, {**ctx, "minutes": minutes},
                                workflow_id=wid, reason=reason, cause_since=since, aisle=aisle,
                                details={"threshold_minutes": minutes}))
    return causes


def paused_causes(now: datetime) -> list[Cause]:
    return _paused(now, too_long=False)


def paused_too_long_causes(now: datetime) -> list[Cause]:
    return _paused(now, too_long=True)


def stalled_causes(now: datetime) -> list[Cause]:
    minutes = settings.STALLED_AFTER_MINUTES
    causes = []
    for s in stalled_workflows(now=now):
        ctx = {"workflow_id": s.workflow_id, "job_id": s.job_id, "job_status": s.job_status, "minutes": minutes,
               "step_no": s.step_no, "tray_code": s.tray_code, "source": s.cargo_space_id,
               "target": s.target_cargo_space_id}
        causes.append(Cause(STALLED, f"stalled:{s.workflow_id}", reverse("workflow-detail", args=[s.workflow_id]),
                            ctx, workflow_id=s.workflow_id, reason=f"job status {s.job_status}",
                            cause_since=s.job_updated_at, aisle=aisle_of(s.cargo_space_id),
                            details={"job_id": s.job_id, "job_status": s.job_status, "step_no": s.step_no}))
    return causes


def recovery_stale_causes(now: datetime) -> list[Cause]:
    health = recovery_health()
    last = health.last_success.finished_at if health.last_success else None
    if last is not None and now - last <= health.stale_after:
        return []
    stale_after = int(health.stale_after.total_seconds())
    ctx = {"seconds": stale_after, "stale_after": stale_after, "last_success_at": last.isoformat() if last else None}
    return [Cause(RECOVERY_STALE, "recovery_stale", reverse("recovery-health"), ctx, cause_since=last,
                  details={"last_success_at": last.isoformat() if last else None})]


def proposal_waiting_causes(now: datetime) -> list[Cause]:
    minutes = settings.NOTIFY_PROPOSAL_WAITING_MINUTES
    causes = []
    for p in (CancelProposal.objects.filter(status=CancelProposal.Status.PENDING,
                                            proposed_at__lte=now - timedelta(minutes=minutes))
              .select_related("proposed_by").order_by("proposed_at", "pk")):
        ctx = {"workflow_id": p.workflow_id, "minutes": minutes, "proposed_by": p.proposed_by.get_username()}
        causes.append(Cause(PROPOSAL_WAITING, f"proposal_waiting:{p.pk}", reverse("repair-proposal", args=[p.pk]),
                            ctx, workflow_id=p.workflow_id, reason=p.reason_code, cause_since=p.proposed_at,
                            details={"proposal_id": p.pk}))
    return causes


def backlog_not_draining(flow: FlowHealth) -> bool:
    """The backlog is not draining when tidy jobs have been waiting for the whole window and no
    more of them finished than arrived in it: the backlog now is at least what it was then."""
    return (flow.backlog > 0 and flow.oldest_age is not None and flow.oldest_age >= flow.window
            and flow.completions <= flow.arrivals)


def backlog_causes(now: datetime) -> list[Cause]:
    minutes = settings.NOTIFY_BACKLOG_WINDOW_MINUTES
    flow = flow_health(window=timedelta(minutes=minutes))
    if not backlog_not_draining(flow):
        return []
    ctx = {"backlog": flow.backlog, "arrivals": flow.arrivals, "completions": flow.completions,
           "minutes": minutes, "oldest": timezone.localtime(flow.oldest_created_at).strftime("%H:%M")}
    return [Cause(BACKLOG_NOT_DRAINING, "backlog_not_draining", reverse("flow-health"), ctx,
                  cause_since=flow.oldest_created_at,
                  details={"backlog": flow.backlog, "arrivals": flow.arrivals, "completions": flow.completions,
                           "window_minutes": minutes})]


def paused_group_links(reason: str, aisle: str) -> dict[str, str]:
    """The paused list filtered to the group's reason and aisle, and the batch re-check of it."""
    query = urlencode({"reason": reason, "aisle": aisle})
    return {"list": f"{reverse('paused-workflows')}?{query}", "batch": f"{reverse('repair-batch')}?{query}"}


def stalled_group_links(reason: str, aisle: str) -> dict[str, str]:
    return {"list": f"{reverse('active-workflows')}?stalled=on"}


# --- the registry --------------------------------------------------------------------------------

PAUSED, PAUSED_TOO_LONG, STALLED = "paused", "paused_too_long", "stalled"
RECOVERY_STALE, PROPOSAL_WAITING, BACKLOG_NOT_DRAINING = "recovery_stale", "proposal_waiting", "backlog_not_draining"

SPECS: tuple[EventSpec, ...] = (
    EventSpec(
        PAUSED, gettext_noop("Workflow paused"), Severity.WARNING,
        subject=gettext_noop("Workflow %(workflow_id)s paused: %(reason)s"),
        body=gettext_noop("Recovery paused workflow %(workflow_id)s with reason %(reason)s. It keeps its locks "
                          "until someone repairs it in the console."),
        causes=paused_causes, groups=True, group_links=paused_group_links,
        group_subject=gettext_noop("%(count)s workflows paused in aisle %(aisle)s: %(reason)s"),
        group_body=gettext_noop("Recovery paused %(count)s workflows in aisle %(aisle)s with reason %(reason)s. "
                                "They keep their locks until someone repairs them in the console; the batch "
                                "re-check takes them together."),
        opens_when="workflows are `PAUSED_RECOVERY` (one notification per reason code and aisle)",
        resolves_when="none of them is paused any more"),
    EventSpec(
        PAUSED_TOO_LONG, gettext_noop("Paused too long"), Severity.WARNING,
        subject=gettext_noop("Workflow %(workflow_id)s paused for over %(minutes)s min: %(reason)s"),
        body=gettext_noop("Workflow %(workflow_id)s has been paused (%(reason)s) longer than the "
                          "%(minutes)s min a shift lead set for this reason code."),
        causes=paused_too_long_causes, threshold_setting="NOTIFY_PAUSED_TOO_LONG_MINUTES", groups=True,
        group_links=paused_group_links,
        group_subject=gettext_noop("%(count)s workflows in aisle %(aisle)s paused for over %(minutes)s min: "
                                   "%(reason)s"),
        group_body=gettext_noop("%(count)s workflows in aisle %(aisle)s have been paused (%(reason)s) longer than "
                                "the %(minutes)s min a shift lead set for this reason code."),
        opens_when="they have been paused longer than their reason code's threshold (default 30 min)",
        resolves_when="none of them is paused any more"),
    EventSpec(
        STALLED, gettext_noop("Workflow stalled"), Severity.WARNING,
        subject=gettext_noop("Workflow %(workflow_id)s stalled: job %(job_id)s unchanged at status %(job_status)s "
                             "for over %(minutes)s min"),
        body=gettext_noop("Workflow %(workflow_id)s is active, but the job of its step %(step_no)s "
                          "(tray %(tray_code)s, %(source)s to %(target)s) has not changed for over %(minutes)s "
                          "min. Recovery leaves it alone; check the vehicle and the WCS."),
        causes=stalled_causes, threshold_setting="STALLED_AFTER_MINUTES", groups=True,
        group_links=stalled_group_links,
        group_subject=gettext_noop("%(count)s workflows stalled in aisle %(aisle)s: jobs unchanged at status "
                                   "%(job_status)s for over %(minutes)s min"),
        group_body=gettext_noop("%(count)s active workflows in aisle %(aisle)s have jobs at status %(job_status)s "
                                "that have not changed for over %(minutes)s min. Recovery leaves them alone; check "
                                "the vehicles and the WCS."),
        opens_when="`ACTIVE` workflows' current jobs (status 1, 2 or 3) have not changed (`mydo_job.updated_at`) "
                   "for `STALLED_AFTER_MINUTES` (15) (one notification per job status and aisle)",
        resolves_when="none of the jobs is still unchanged in an `ACTIVE` workflow"),
    EventSpec(
        RECOVERY_STALE, gettext_noop("Recovery stale"), Severity.ERROR,
        subject=gettext_noop("Recovery is stale: no successful cycle for over %(seconds)s s"),
        subject_without=("last_success_at", gettext_noop("Recovery is stale: no successful cycle yet")),
        body=gettext_noop("The periodic recovery has not finished a cycle successfully within "
                          "%(stale_after)s s. Check that the qcluster runs and reaches the database."),
        causes=recovery_stale_causes,
        opens_when="the last successful recovery cycle is older than "
                   "`RECOVERY_STALE_AFTER_INTERVALS × RECOVERY_INTERVAL_SECONDS`",
        resolves_when="a cycle succeeds"),
    EventSpec(
        PROPOSAL_WAITING, gettext_noop("Cancel proposal waiting"), Severity.WARNING,
        subject=gettext_noop("Cancel proposal for workflow %(workflow_id)s waiting for a second shift lead "
                             "for over %(minutes)s min"),
        body=gettext_noop("A shift lead (%(proposed_by)s) proposed to cancel workflow %(workflow_id)s "
                          "and release its locks; a different shift lead must approve or reject it."),
        causes=proposal_waiting_causes, threshold_setting="NOTIFY_PROPOSAL_WAITING_MINUTES",
        opens_when="a cancel proposal has waited for a second shift lead longer than "
                   "`NOTIFY_PROPOSAL_WAITING_MINUTES` (10)",
        resolves_when="it is approved, rejected or stale"),
    EventSpec(
        BACKLOG_NOT_DRAINING, gettext_noop("Backlog not draining"), Severity.WARNING,
        subject=gettext_noop("Tidy job backlog not draining: %(backlog)s jobs, %(arrivals)s arrived and "
                             "%(completions)s finished in the last %(minutes)s min"),
        body=gettext_noop("The tidy job backlog did not shrink over the last %(minutes)s min "
                          "(oldest job waiting since %(oldest)s)."),
        causes=backlog_causes, threshold_setting="NOTIFY_BACKLOG_WINDOW_MINUTES",
        opens_when="tidy jobs have waited the whole `NOTIFY_BACKLOG_WINDOW_MINUTES` window (15) and no more "
                   "finished than arrived in it",
        resolves_when="the backlog drains"),
)

EVENTS: dict[str, EventSpec] = {spec.event: spec for spec in SPECS}


# The events as choices (the list's filter, the metrics' labels), labels translated when shown.
Event = models.TextChoices("Event", [(spec.event.upper(), (spec.event, gettext_lazy(spec.label))) for spec in SPECS])
