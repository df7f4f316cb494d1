"""The journals a workflow's case file is read from, one small function per source and per kind
(docs/architecture.md §16).

Each source reads one journal for one workflow and turns its rows into CaseEvents in that
journal's own order (its ids); console.casefile.selectors merges the sources by time, a source's
own order kept. A kind that another part of the console adds later slots in here: a new callback
outcome is one entry of CALLBACK_RESULTS, a grouped notification's members are found by
`notification_rows`, a new journal is one more function in SOURCES.

Summaries are messages with values (recovery.messages, §15), rendered in the reader's language;
`details` hold codes, ids, numbers and stored texts as they are, never translated.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from django.db.models import Q
from django.utils.html import strip_tags
from django.utils.translation import gettext_noop

from console.models import Notification, NotificationAcknowledgement, RepairAudit, WorkflowNote
from console.notifications.messages import notification_subject
from console.repair import texts as repair_texts
from recovery.messages import Message, message
from recovery.models import CallbackReceipt, RecoveryDecision, TidyCallbackEvent, TidyStep, TidyWorkflow


@dataclass(frozen=True)
class CaseEvent:
    at: datetime
    kind: str
    actor: str
    summary: Message
    details: dict = field(default_factory=dict)


@dataclass
class CaseContext:
    """What the sources share, read once: the workflow, its steps, its repair audit and its
    notifications (the ending and the acknowledgements depend on them)."""

    workflow: TidyWorkflow
    steps: list[TidyStep]
    repairs: list[RepairAudit]
    notifications: list[Notification]

    def step_no(self, step_id: int | None) -> int | None:
        return next((s.step_no for s in self.steps if s.step_id == step_id), None)

    @cached_property
    def closing_repair(self) -> RepairAudit | None:
        """The applied repair that left the workflow in its final state (COMPLETED or CANCELLED),
        if one did: the ending is told right after it, since its audit row is written a moment
        after the workflow changed in the same transaction."""
        final = self.workflow.status
        if final not in (TidyWorkflow.Status.COMPLETED, TidyWorkflow.Status.CANCELLED):
            return None
        return next((a for a in reversed(self.repairs)
                     if a.applied and a.stage == RepairAudit.Stage.APPLY
                     and isinstance(a.evidence_after, dict) and a.evidence_after.get("workflow_status") == final),
                    None)


CREATED = gettext_noop("Workflow created (%(origin)s) with %(steps)s step(s).")
JOB_STATUS = gettext_noop("The WCS reported job %(job_id)s at status %(status)s: %(outcome)s (HTTP %(http_status)s).")
CALLBACK = gettext_noop("The WCS reported %(stage)s for job %(job_id)s: %(outcome)s (HTTP %(http_status)s).")
CALLBACK_NO_STAGE = gettext_noop("A WCS finish report for job %(job_id)s: %(outcome)s (HTTP %(http_status)s).")
STEP_EVENT = gettext_noop("Step %(step_no)s: stage %(stage)s recorded in the WMS.")
DECIDED = gettext_noop("%(source)s decided %(action)s by rule %(rule)s.")
DECIDED_REASON = gettext_noop("%(source)s decided %(action)s %(reason)s by rule %(rule)s.")
OBSERVED = gettext_noop("Recovery observed that it would decide %(action)s by rule %(rule)s; nothing was applied.")
OBSERVED_REASON = gettext_noop("Recovery observed that it would decide %(action)s %(reason)s by rule %(rule)s; "
                               "nothing was applied.")
PAUSED = gettext_noop("The workflow and its step were paused with %(reason)s; every lock is kept.")
PAUSED_OUTSIDE = gettext_noop("The workflow is paused with %(reason)s, outside the recovery journal.")
NOTIFICATION_OPENED = gettext_noop("Notification %(event)s opened: %(subject)s")
NOTIFICATION_ESCALATED = gettext_noop("Notification %(event)s escalated to the shift leads.")
NOTIFICATION_RESOLVED = gettext_noop("Notification %(event)s resolved: its cause is gone.")
ACKNOWLEDGED = gettext_noop("%(user)s acknowledged notification %(event)s.")
REPAIR = gettext_noop("%(user)s: %(action)s, %(outcome)s.")
PROPOSED = gettext_noop("%(user)s proposed to cancel the workflow and release its locks (four eyes: step 1 of 2).")
APPROVED = gettext_noop("%(user)s approved the cancel proposal (four eyes: step 2 of 2).")
REJECTED = gettext_noop("%(user)s rejected the cancel proposal.")
REPAIR_REFUSED = gettext_noop("%(user)s: %(action)s was refused (%(why)s); nothing changed.")
NOTE = gettext_noop("%(user)s wrote a note.")
COMPLETED = gettext_noop("The workflow completed.")
CANCELLED = gettext_noop("The workflow was cancelled.")
LOCKS_RELEASED = gettext_noop("Its space locks were released.")


def _iso(value) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


# --- created ----------------------------------------------------------------------------------------


def created(ctx: CaseContext) -> list[CaseEvent]:
    w = ctx.workflow
    return [CaseEvent(w.created_at, "created", "wms", message(CREATED, origin=w.origin, steps=len(ctx.steps)), {
        "origin": w.origin,
        "steps": [{"step_id": s.step_id, "step_no": s.step_no, "tray_code": s.tray_code,
                   "cargo_space_id": s.cargo_space_id, "target_cargo_space_id": s.target_cargo_space_id}
                  for s in ctx.steps],
    })]


# --- what the WCS reported (callback receipts) ---------------------------------------------------------

# A receipt's outcome as the case file names it. An outcome not listed (one a newer release adds)
# is named by its own code in lower case.
CALLBACK_RESULTS = {
    CallbackReceipt.Outcome.ACCEPTED: "accepted",
    CallbackReceipt.Outcome.DUPLICATE: "duplicate",
    "REPORT_MISMATCH": "mismatch",  # the WCS's tray or delivery point differs from the step (design §11)
    "STALE_REPORT": "stale",  # a status report older than one already recorded (design §11)
    CallbackReceipt.Outcome.REFUSED_PAUSED: "refused",
    CallbackReceipt.Outcome.REFUSED_CONFLICT: "refused",
    CallbackReceipt.Outcome.UNKNOWN_JOB: "refused",
    CallbackReceipt.Outcome.BAD_REQUEST: "refused",
    CallbackReceipt.Outcome.UNAVAILABLE: "refused",
}


def callback_result(outcome: str) -> str:
    return CALLBACK_RESULTS.get(outcome, outcome.lower())


def _receipt_details(r: CallbackReceipt) -> dict:
    return {"receipt_id": r.pk, "result": callback_result(r.outcome), "outcome": r.outcome,
            "http_status": r.http_status, "job_id": r.job_id, "step_id": r.step_id, "stage": r.stage,
            "job_status": r.job_status, "wcs_event_id": r.wcs_event_id, "answer": r.message,
            "payload": r.payload, "duration_ms": r.duration_ms}


def _job_status_event(r: CallbackReceipt) -> CaseEvent:
    return CaseEvent(r.received_at, "job_status", "wcs", message(
        JOB_STATUS, job_id=r.job_id, status=r.job_status, outcome=r.outcome, http_status=r.http_status),
        _receipt_details(r))


def _callback_event(r: CallbackReceipt) -> CaseEvent:
    summary = (message(CALLBACK, stage=r.stage, job_id=r.job_id, outcome=r.outcome, http_status=r.http_status)
               if r.stage else message(CALLBACK_NO_STAGE, job_id=r.job_id, outcome=r.outcome,
                                       http_status=r.http_status))
    return CaseEvent(r.received_at, "callback", "wcs", summary, _receipt_details(r))


RECEIPT_KINDS: dict[str, Callable[[CallbackReceipt], CaseEvent]] = {
    CallbackReceipt.Endpoint.JOB_STATUS: _job_status_event,
    CallbackReceipt.Endpoint.JOB_FINISH: _callback_event,
}


def receipts(ctx: CaseContext) -> list[CaseEvent]:
    # callback_receipt_wf_idx
    rows = CallbackReceipt.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("id")
    return [RECEIPT_KINDS.get(r.endpoint, _callback_event)(r) for r in rows]


# --- decisions (the recovery journal) -------------------------------------------------------------------


def _decision_events(d: RecoveryDecision, ctx: CaseContext) -> list[CaseEvent]:
    values = {"action": d.action, "rule": d.rule, "reason": d.reason}
    if d.observed:
        summary = message(OBSERVED_REASON if d.reason else OBSERVED, **values)
    else:
        summary = message(DECIDED_REASON if d.reason else DECIDED, source=d.source, **values)
    actor = "recovery" if d.source == RecoveryDecision.Source.RECOVERY else d.source.lower()
    details = {"decision_id": d.pk, "action": d.action, "reason": d.reason, "rule": d.rule, "source": d.source,
               "observed": d.observed, "cycle_id": d.cycle_id, "step_id": d.step_id,
               "step_no": ctx.step_no(d.step_id), "fingerprint": d.fingerprint, "evidence": d.evidence}
    events = [CaseEvent(d.decided_at, "decision", actor, summary, details)]
    if d.action == "PAUSE" and not d.observed:
        events.append(CaseEvent(d.decided_at, "paused", actor, message(PAUSED, reason=d.reason),
                                {"reason": d.reason, "step_id": d.step_id, "step_no": ctx.step_no(d.step_id),
                                 "decision_id": d.pk}))
    return events


def decisions(ctx: CaseContext) -> list[CaseEvent]:
    w = ctx.workflow
    rows = list(RecoveryDecision.objects.filter(workflow_id=w.workflow_id).order_by("id"))  # (workflow_id, -decided_at)
    events = [e for d in rows for e in _decision_events(d, ctx)]
    if w.status == TidyWorkflow.Status.PAUSED_RECOVERY and not any(e.kind == "paused" for e in events):
        events.append(CaseEvent(w.updated_at, "paused", "wms", message(PAUSED_OUTSIDE, reason=w.pause_reason or ""),
                                {"reason": w.pause_reason, "journaled": False}))
    return events


# --- the steps' events (alg.tidy_callback_event, the WMS's own record of each finish and operator stage) --


def _step_actor(e: TidyCallbackEvent) -> str:
    if e.stage == "RECOVERY_FINISHED":
        return "recovery"
    if e.stage.startswith("OPERATOR_"):
        user = e.payload.get("user") if isinstance(e.payload, dict) else None
        return str(user) if user else "operator"
    return "wcs"


def step_events(ctx: CaseContext) -> list[CaseEvent]:
    rows = TidyCallbackEvent.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("event_id")
    return [CaseEvent(e.received_at, "step_event", _step_actor(e),
                      message(STEP_EVENT, step_no=ctx.step_no(e.step_id), stage=e.stage),
                      {"event_id": e.event_id, "step_id": e.step_id, "step_no": ctx.step_no(e.step_id),
                       "job_id": e.job_id, "stage": e.stage, "payload": e.payload})
            for e in rows]


# --- repairs, four eyes included (the repair audit) -------------------------------------------------------

FOUR_EYES = {"CANCEL_PROPOSE": ("proposed", PROPOSED), "CANCEL_APPROVE": ("approved", APPROVED),
             "CANCEL_REJECT": ("rejected", REJECTED)}


def _repair_text(stored: str) -> str:
    """A stored repair text in the reader's language, as plain text (console.repair.texts reads it)."""
    return strip_tags(str(repair_texts.shown(stored) or ""))


def _repair_events(a: RepairAudit, ctx: CaseContext) -> list[CaseEvent]:
    step, template = FOUR_EYES.get(a.action, (None, None))
    if not a.applied:
        summary = message(REPAIR_REFUSED, user=a.username, action=a.action, why=a.refusal)
    elif template is not None:
        summary = message(template, user=a.username)
    else:
        summary = message(REPAIR, user=a.username, action=a.action, outcome=a.outcome)
    details = {"audit_id": a.pk, "action": a.action, "stage": a.stage, "outcome": a.outcome,
               "reason_code": a.reason_code, "reason_text": a.reason_text, "pause_reason": a.pause_reason,
               "message": _repair_text(a.message), "decision_after": _repair_text(a.decision_after),
               "fingerprint_before": a.fingerprint_before, "fingerprint_after": a.fingerprint_after,
               "changes": a.changes, "proposal_id": a.proposal_id, "batch_id": a.batch_id}
    if step is not None:
        details["four_eyes"] = step
    events = [CaseEvent(a.at, "repair", a.username, summary, details)]
    if ctx.closing_repair is not None and a.pk == ctx.closing_repair.pk:
        events += _ending_events(ctx, at=a.at, actor=a.username)
    return events


def repair_rows(workflow_id: int) -> list[RepairAudit]:
    return list(RepairAudit.objects.filter(workflow_id=workflow_id).order_by("id"))  # (workflow_id, -id)


def repairs(ctx: CaseContext) -> list[CaseEvent]:
    return [e for a in ctx.repairs for e in _repair_events(a, ctx)]


# --- the ending ---------------------------------------------------------------------------------------------


def _ending_events(ctx: CaseContext, *, at: datetime, actor: str) -> list[CaseEvent]:
    w = ctx.workflow
    kind, text = ("completed", COMPLETED) if w.status == TidyWorkflow.Status.COMPLETED else ("cancelled", CANCELLED)
    return [CaseEvent(at, kind, actor, message(text), {"status": w.status, "completed_at": _iso(w.completed_at)}),
            CaseEvent(at, "locks_released", actor, message(LOCKS_RELEASED), {"status": w.status})]


def ending(ctx: CaseContext) -> list[CaseEvent]:
    """completed or cancelled, and locks_released, when the workflow ended (by a repair: told by
    `repairs`, right after it)."""
    w = ctx.workflow
    if w.status not in (TidyWorkflow.Status.COMPLETED, TidyWorkflow.Status.CANCELLED) or ctx.closing_repair:
        return []
    at = w.completed_at if w.status == TidyWorkflow.Status.COMPLETED and w.completed_at else w.updated_at
    return _ending_events(ctx, at=at, actor="wms")


# --- notifications and acknowledgements ----------------------------------------------------------------------


def notification_rows(workflow_id: int) -> list[Notification]:
    """The notifications about the workflow: its own, and a grouped notification's whose members
    (details.workflow_ids, design §12) include it."""
    about = Q(workflow_id=workflow_id) | Q(details__workflow_ids__contains=[workflow_id])
    return list(Notification.objects.filter(about).order_by("id"))


def _notification_events(n: Notification) -> list[CaseEvent]:
    base = {"notification_id": n.pk, "event": n.event, "dedup_key": n.dedup_key, "severity": n.severity,
            "state": n.state}
    members = n.details.get("workflow_ids") if isinstance(n.details, dict) else None
    if isinstance(members, list):
        base["group_members"] = members
    events = [CaseEvent(n.opened_at, "notification", "console",
                        message(NOTIFICATION_OPENED, event=n.event, subject=notification_subject(n)),
                        {**base, "change": "opened", "reason": n.reason})]
    if n.escalated_at:
        events.append(CaseEvent(n.escalated_at, "notification", "console",
                                message(NOTIFICATION_ESCALATED, event=n.event), {**base, "change": "escalated"}))
    if n.resolved_at:
        events.append(CaseEvent(n.resolved_at, "notification", "console",
                                message(NOTIFICATION_RESOLVED, event=n.event), {**base, "change": "resolved"}))
    return events


def notifications(ctx: CaseContext) -> list[CaseEvent]:
    # A notification's changes happen at different times: this source is in time order, then id.
    events = [e for n in ctx.notifications for e in _notification_events(n)]
    return sorted(events, key=lambda e: (e.at, e.details["notification_id"]))


def acknowledgements(ctx: CaseContext) -> list[CaseEvent]:
    by_id = {n.pk: n for n in ctx.notifications}
    rows = NotificationAcknowledgement.objects.filter(notification_id__in=list(by_id)).order_by("id")
    return [CaseEvent(a.at, "acknowledged", a.username,
                      message(ACKNOWLEDGED, user=a.username, event=by_id[a.notification_id].event),
                      {"notification_id": a.notification_id, "event": by_id[a.notification_id].event})
            for a in rows]


# --- notes ---------------------------------------------------------------------------------------------------


def notes(ctx: CaseContext) -> list[CaseEvent]:
    rows = WorkflowNote.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("id")  # workflow_note_wf_idx
    return [CaseEvent(n.at, "note", n.username, message(NOTE, user=n.username), {"note_id": n.pk, "text": n.text})
            for n in rows]


# In this order: events of one moment (one transaction) are told in this order of their sources.
SOURCES: tuple[Callable[[CaseContext], list[CaseEvent]], ...] = (
    created, receipts, decisions, step_events, repairs, ending, notifications, acknowledgements, notes,
)
