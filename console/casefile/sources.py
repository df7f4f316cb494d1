"""The journals a workflow's case file is read from, one small function per source and per kind
(docs/architecture.md §16).

Each source reads one journal for one workflow and turns its rows into CaseEvents in that
journal's own order (its ids), each event with its position in the source; console.casefile.selectors
merges the sources by time, a source's own order kept. A source reads a bounded chunk: at most
`limit` rows after a position (LIMIT in SQL, keyset on the journal's order), or its last `limit`
rows (the tail the printable page ends with), so a page of the case file costs the same whatever
the workflow's history. A kind that another part of the console adds later slots in here: a new
callback outcome is one entry of CALLBACK_RESULTS, a grouped notification's members are found by
`notifications_about`, a new journal is one more Source in SOURCES.

Summaries are messages with values (recovery.messages, §15), rendered in the reader's language;
`details` hold codes, ids, numbers and stored texts as they are, never translated.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

from django.db.models import Q
from django.utils.html import strip_tags
from django.utils.translation import gettext_noop

from console.input_checks import BIGINT_MAX
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


# A position in one source: its journal's order key (an id, or a time in microseconds and an id),
# and the event's place among the events of that row. Positions of one source only ever increase.
Position = tuple[int, ...]


@dataclass(frozen=True)
class Placed:
    pos: Position
    event: CaseEvent


@dataclass(frozen=True)
class Chunk:
    events: list[Placed]
    more: bool  # rows beyond this chunk remain in the source


@dataclass
class CaseContext:
    """What the sources share, read once: the workflow and its steps (a workflow's steps are few)."""

    workflow: TidyWorkflow
    steps: list[TidyStep]

    def step_no(self, step_id: int | None) -> int | None:
        return next((s.step_no for s in self.steps if s.step_id == step_id), None)

    @cached_property
    def closing_repair_id(self) -> int | None:
        """The applied repair that left the workflow in its final state (COMPLETED or CANCELLED),
        if one did: the ending is told right after it, since its audit row is written a moment
        after the workflow changed in the same transaction. The newest such row, read through
        (workflow_id, -id) (console_rep_workflo_cbe146_idx)."""
        final = self.workflow.status
        if final not in (TidyWorkflow.Status.COMPLETED, TidyWorkflow.Status.CANCELLED):
            return None
        return (RepairAudit.objects.filter(workflow_id=self.workflow.workflow_id, stage=RepairAudit.Stage.APPLY,
                                           evidence_after__workflow_status=final)
                .exclude(outcome__startswith="REFUSED").order_by("-id").values_list("id", flat=True).first())


@dataclass(frozen=True)
class Source:
    """One journal: `read(ctx, after, limit)` gives the events after position `after` (None: from
    the start) from at most `limit` rows; `tail(ctx, limit)` the events of its last `limit` rows."""

    key: str  # its letter in a cursor
    read: Callable[[CaseContext, Position | None, int], Chunk]
    tail: Callable[[CaseContext, int], Chunk]
    arity: int = 2  # the numbers of a position


def _rows_chunk(rows, *, limit: int, after: Position | None, expand, key=lambda row: (row.pk,)) -> Chunk:
    """Rows read forward (at most limit + 1, from the row of `after` on) as placed events after `after`."""
    rows = list(rows)
    more = len(rows) > limit
    placed = [Placed((*key(row), i), e) for row in rows[:limit] for i, e in enumerate(expand(row))]
    if after is not None:
        placed = [p for p in placed if p.pos > after]
    return Chunk(placed, more)


def _tail_chunk(rows, *, expand, key=lambda row: (row.pk,)) -> Chunk:
    """Rows read backwards (the last ones first) as placed events in the source's order."""
    return Chunk([Placed((*key(row), i), e) for row in reversed(list(rows)) for i, e in enumerate(expand(row))],
                 False)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def micros(at: datetime) -> int:
    return (at - EPOCH) // MICROSECOND


def from_micros(value: int) -> datetime:
    """Raises OverflowError beyond what a datetime holds."""
    return EPOCH + value * MICROSECOND


def _single(key: str, make: Callable[[CaseContext], list[CaseEvent]]) -> Source:
    """A source of a fixed few events read from the workflow row itself (created, the ending)."""
    def read(ctx, after, limit):
        return Chunk([] if after is not None else [Placed((0, i), e) for i, e in enumerate(make(ctx))], False)

    def tail(ctx, limit):
        return read(ctx, None, limit)

    return Source(key, read, tail)


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


def _created(ctx: CaseContext) -> list[CaseEvent]:
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


def _receipt_events(r: CallbackReceipt) -> list[CaseEvent]:
    return [RECEIPT_KINDS.get(r.endpoint, _callback_event)(r)]


def _receipts(ctx: CaseContext):
    return CallbackReceipt.objects.filter(workflow_id=ctx.workflow.workflow_id)


def receipts_read(ctx: CaseContext, after: Position | None, limit: int) -> Chunk:
    rows = _receipts(ctx)
    if after is not None:
        rows = rows.filter(id__gte=after[0])
    # callback_receipt_wf_id_idx (workflow_id, id): the chunk's rows and no others.
    return _rows_chunk(rows.order_by("id")[:limit + 1], limit=limit, after=after, expand=_receipt_events)


def receipts_tail(ctx: CaseContext, limit: int) -> Chunk:
    # callback_receipt_wf_id_idx, backwards
    return _tail_chunk(_receipts(ctx).order_by("-id")[:limit], expand=_receipt_events)


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


# After every decision: the pause the WMS holds when no applied decision of the journal made it.
OUTSIDE_POSITION = (BIGINT_MAX, 9)


def _paused_outside(ctx: CaseContext) -> list[Placed]:
    w = ctx.workflow
    if w.status != TidyWorkflow.Status.PAUSED_RECOVERY:
        return []
    # recovery_decision_wf_id_idx (workflow_id, id)
    if RecoveryDecision.objects.filter(workflow_id=w.workflow_id, action="PAUSE", observed=False).exists():
        return []
    return [Placed(OUTSIDE_POSITION, CaseEvent(w.updated_at, "paused", "wms",
                                               message(PAUSED_OUTSIDE, reason=w.pause_reason or ""),
                                               {"reason": w.pause_reason, "journaled": False}))]


def decisions_read(ctx: CaseContext, after: Position | None, limit: int) -> Chunk:
    rows = RecoveryDecision.objects.filter(workflow_id=ctx.workflow.workflow_id)
    if after is not None:
        rows = rows.filter(id__gte=after[0])
    # recovery_decision_wf_id_idx (workflow_id, id)
    chunk = _rows_chunk(rows.order_by("id")[:limit + 1], limit=limit, after=after,
                        expand=lambda d: _decision_events(d, ctx))
    if chunk.more or (after is not None and after >= OUTSIDE_POSITION):
        return chunk
    return Chunk(chunk.events + _paused_outside(ctx), False)


def decisions_tail(ctx: CaseContext, limit: int) -> Chunk:
    rows = RecoveryDecision.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("-id")[:limit]
    chunk = _tail_chunk(rows, expand=lambda d: _decision_events(d, ctx))  # recovery_decision_wf_id_idx
    return Chunk(chunk.events + _paused_outside(ctx), False)


# --- the steps' events (alg.tidy_callback_event, the WMS's own record of each finish and operator stage) --


def _step_actor(e: TidyCallbackEvent) -> str:
    if e.stage == "RECOVERY_FINISHED":
        return "recovery"
    if e.stage.startswith("OPERATOR_"):
        user = e.payload.get("user") if isinstance(e.payload, dict) else None
        return str(user) if user else "operator"
    return "wcs"


def _step_events(e: TidyCallbackEvent, ctx: CaseContext) -> list[CaseEvent]:
    return [CaseEvent(e.received_at, "step_event", _step_actor(e),
                      message(STEP_EVENT, step_no=ctx.step_no(e.step_id), stage=e.stage),
                      {"event_id": e.event_id, "step_id": e.step_id, "step_no": ctx.step_no(e.step_id),
                       "job_id": e.job_id, "stage": e.stage, "payload": e.payload})]


# A workflow's step events are few: one per step, job and stage (tidy_callback_event_identity_key,
# which leads on workflow_id and serves this read).
def step_events_read(ctx: CaseContext, after: Position | None, limit: int) -> Chunk:
    rows = TidyCallbackEvent.objects.filter(workflow_id=ctx.workflow.workflow_id)
    if after is not None:
        rows = rows.filter(event_id__gte=after[0])
    return _rows_chunk(rows.order_by("event_id")[:limit + 1], limit=limit, after=after,
                       expand=lambda e: _step_events(e, ctx), key=lambda e: (e.event_id,))


def step_events_tail(ctx: CaseContext, limit: int) -> Chunk:
    rows = TidyCallbackEvent.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("-event_id")[:limit]
    return _tail_chunk(rows, expand=lambda e: _step_events(e, ctx), key=lambda e: (e.event_id,))


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
    if a.pk == ctx.closing_repair_id:
        events += _ending_events(ctx, at=a.at, actor=a.username)
    return events


def repairs_read(ctx: CaseContext, after: Position | None, limit: int) -> Chunk:
    rows = RepairAudit.objects.filter(workflow_id=ctx.workflow.workflow_id)
    if after is not None:
        rows = rows.filter(id__gte=after[0])
    # console_rep_workflo_cbe146_idx (workflow_id, -id), read backwards
    return _rows_chunk(rows.order_by("id")[:limit + 1], limit=limit, after=after,
                       expand=lambda a: _repair_events(a, ctx))


def repairs_tail(ctx: CaseContext, limit: int) -> Chunk:
    rows = RepairAudit.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("-id")[:limit]
    return _tail_chunk(rows, expand=lambda a: _repair_events(a, ctx))  # console_rep_workflo_cbe146_idx


# --- the ending ---------------------------------------------------------------------------------------------


def _ending_events(ctx: CaseContext, *, at: datetime, actor: str) -> list[CaseEvent]:
    w = ctx.workflow
    kind, text = ("completed", COMPLETED) if w.status == TidyWorkflow.Status.COMPLETED else ("cancelled", CANCELLED)
    return [CaseEvent(at, kind, actor, message(text), {"status": w.status, "completed_at": _iso(w.completed_at)}),
            CaseEvent(at, "locks_released", actor, message(LOCKS_RELEASED), {"status": w.status})]


def _ending(ctx: CaseContext) -> list[CaseEvent]:
    """completed or cancelled, and locks_released, when the workflow ended (by a repair: told by
    `repairs`, right after it)."""
    w = ctx.workflow
    if w.status not in (TidyWorkflow.Status.COMPLETED, TidyWorkflow.Status.CANCELLED) or ctx.closing_repair_id:
        return []
    at = w.completed_at if w.status == TidyWorkflow.Status.COMPLETED and w.completed_at else w.updated_at
    return _ending_events(ctx, at=at, actor="wms")


# --- notifications and acknowledgements ----------------------------------------------------------------------


def notifications_about(workflow_id: int):
    """The notifications about the workflow: its own, and a grouped notification's whose members
    (details.workflow_ids, design §12) include it. Read through two indexes, ORed in a bitmap:
    notification_workflow_idx (workflow_id, opened_at) and notification_members_idx (GIN on
    details->'workflow_ids', which serves the containment test)."""
    return Notification.objects.filter(Q(workflow_id=workflow_id) | Q(details__workflow_ids__contains=[workflow_id]))


def _notification_base(n: Notification) -> dict:
    base = {"notification_id": n.pk, "event": n.event, "dedup_key": n.dedup_key, "severity": n.severity,
            "state": n.state}
    members = n.details.get("workflow_ids") if isinstance(n.details, dict) else None
    if isinstance(members, list):
        base["group_members"] = members
    return base


def _opened(n: Notification) -> list[CaseEvent]:
    return [CaseEvent(n.opened_at, "notification", "console",
                      message(NOTIFICATION_OPENED, event=n.event, subject=notification_subject(n)),
                      {**_notification_base(n), "change": "opened", "reason": n.reason})]


def _escalated(n: Notification) -> list[CaseEvent]:
    return [CaseEvent(n.escalated_at, "notification", "console", message(NOTIFICATION_ESCALATED, event=n.event),
                      {**_notification_base(n), "change": "escalated"})]


def _resolved(n: Notification) -> list[CaseEvent]:
    return [CaseEvent(n.resolved_at, "notification", "console", message(NOTIFICATION_RESOLVED, event=n.event),
                      {**_notification_base(n), "change": "resolved"})]


def _notification_source(key: str, column: str, expand) -> Source:
    """One change of the notifications (opened, escalated, resolved), in the order of its time
    (then id): a notification's changes happen at different times, so each is a source of its own."""
    def order_key(n):
        return (micros(getattr(n, column)), n.pk)

    def rows(ctx):
        return notifications_about(ctx.workflow.workflow_id).filter(**{f"{column}__isnull": False})

    def read(ctx, after, limit):
        found = rows(ctx)
        if after is not None:
            at = from_micros(after[0])
            found = found.filter(Q(**{f"{column}__gt": at}) | Q(**{column: at, "id__gte": after[1]}))
        return _rows_chunk(found.order_by(column, "id")[:limit + 1], limit=limit, after=after, expand=expand,
                           key=order_key)

    def tail(ctx, limit):
        return _tail_chunk(rows(ctx).order_by(f"-{column}", "-id")[:limit], expand=expand, key=order_key)

    return Source(key, read, tail, arity=3)


def _acknowledgement_events(a: NotificationAcknowledgement) -> list[CaseEvent]:
    event = a.notification.event
    return [CaseEvent(a.at, "acknowledged", a.username, message(ACKNOWLEDGED, user=a.username, event=event),
                      {"notification_id": a.notification_id, "event": event})]


def _acknowledgements(ctx: CaseContext):
    # Its unique notification_id, for the notifications about the workflow (notifications_about).
    about = notifications_about(ctx.workflow.workflow_id).values("id")
    return NotificationAcknowledgement.objects.filter(notification_id__in=about).select_related("notification")


def acknowledgements_read(ctx: CaseContext, after: Position | None, limit: int) -> Chunk:
    rows = _acknowledgements(ctx)
    if after is not None:
        rows = rows.filter(id__gte=after[0])
    return _rows_chunk(rows.order_by("id")[:limit + 1], limit=limit, after=after, expand=_acknowledgement_events)


def acknowledgements_tail(ctx: CaseContext, limit: int) -> Chunk:
    return _tail_chunk(_acknowledgements(ctx).order_by("-id")[:limit], expand=_acknowledgement_events)


# --- notes ---------------------------------------------------------------------------------------------------


def _note_events(n: WorkflowNote) -> list[CaseEvent]:
    return [CaseEvent(n.at, "note", n.username, message(NOTE, user=n.username), {"note_id": n.pk, "text": n.text})]


def notes_read(ctx: CaseContext, after: Position | None, limit: int) -> Chunk:
    rows = WorkflowNote.objects.filter(workflow_id=ctx.workflow.workflow_id)  # workflow_note_wf_idx
    if after is not None:
        rows = rows.filter(id__gte=after[0])
    return _rows_chunk(rows.order_by("id")[:limit + 1], limit=limit, after=after, expand=_note_events)


def notes_tail(ctx: CaseContext, limit: int) -> Chunk:
    rows = WorkflowNote.objects.filter(workflow_id=ctx.workflow.workflow_id).order_by("-id")[:limit]
    return _tail_chunk(rows, expand=_note_events)  # workflow_note_wf_idx


# In this order: events of one moment (one transaction) are told in this order of their sources.
# The keys name each source's position in a cursor (console.casefile.selectors).
SOURCES: tuple[Source, ...] = (
    _single("c", _created),
    Source("r", receipts_read, receipts_tail),
    Source("d", decisions_read, decisions_tail),
    Source("s", step_events_read, step_events_tail),
    Source("p", repairs_read, repairs_tail),
    _single("e", _ending),
    _notification_source("o", "opened_at", _opened),
    _notification_source("x", "escalated_at", _escalated),
    _notification_source("v", "resolved_at", _resolved),
    Source("a", acknowledgements_read, acknowledgements_tail),
    Source("n", notes_read, notes_tail),
)
