"""Reads of the workflow pages (dashboard, paused list, locks, the workflow page): plain functions
with keyword-only arguments, results as dataclasses. Every list read runs a fixed number of
queries whatever the row count."""


import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property

from django.db import connection
from django.db.models import Count, JSONField, Min, OuterRef, Q, Subquery
from django.utils import timezone

from console.input_checks import BIGINT_MAX, is_ascii_int
from console.readers import EPOCH, Cursor
from console.readers.recovery import retained_lock_count
from console.replica import read_connection
from console.workflows import sql as workflows_sql
from recovery.engine.evidence import TidyRecoveryEvidence, evidence_for_workflow, evidence_from_json
from recovery.engine.prepared import run_prepared
from recovery.models import (
    BasCargoSpace,
    CallbackReceipt,
    MydoJob,
    MydoJobFinish,
    RecoveryDecision,
    TidyCallbackEvent,
    TidySpaceLock,
    TidyStep,
    TidyWorkflow,
)

PAUSED = TidyWorkflow.Status.PAUSED_RECOVERY
ACTIVE = TidyWorkflow.Status.ACTIVE


# --- dashboard -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DashboardCounts:
    active: int
    paused: int
    paused_by_reason: dict[str, int]
    completed_today: int
    oldest_paused_since: datetime | None
    retained_locks: int


def start_of_today() -> datetime:
    """Midnight in the warehouse's time zone (settings.TIME_ZONE)."""
    local = timezone.localtime()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def dashboard_counts() -> DashboardCounts:
    # tidy_workflow_status_idx (status, updated_at) serves every count here.
    by_reason = {}
    oldest = None
    for row in (TidyWorkflow.objects.filter(status=PAUSED).values("pause_reason")
                .annotate(n=Count("pk"), oldest=Min("updated_at")).order_by()):
        by_reason[row["pause_reason"] or "(none)"] = row["n"]
        oldest = row["oldest"] if oldest is None else min(oldest, row["oldest"])
    today = start_of_today()
    counts = TidyWorkflow.objects.filter(
        Q(status=ACTIVE) | Q(status=TidyWorkflow.Status.COMPLETED, updated_at__gte=today)
    ).aggregate(
        active=Count("pk", filter=Q(status=ACTIVE)),
        completed_today=Count("pk", filter=Q(status=TidyWorkflow.Status.COMPLETED, completed_at__gte=today)),
    )
    return DashboardCounts(
        active=counts["active"],
        paused=sum(by_reason.values()),
        paused_by_reason=dict(sorted(by_reason.items())),
        completed_today=counts["completed_today"],
        oldest_paused_since=oldest,
        retained_locks=retained_lock_count(),
    )


# --- locks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockedStep:
    workflow_id: int
    workflow_status: str
    step_id: int
    step_no: int
    status: str
    tray_code: str
    cargo_space_id: str
    target_cargo_space_id: str

    def role_of(self, space: str) -> str:
        return "source" if self.cargo_space_id == space else "target"


@dataclass(frozen=True)
class LockRow:
    lock_id: int
    cargo_space_id: str
    workflow_id: int
    workflow_status: str
    pause_reason: str | None
    origin: str
    locked_at: datetime
    space_tray_code: str | None
    blocks: tuple[BlockedStep, ...]


def blocked_steps(*, spaces: list[str]) -> dict[str, list[BlockedStep]]:
    """Unfinished steps of ACTIVE or PAUSED workflows that need one of `spaces` (one query).

    The caller drops the steps of the lock holder itself."""
    if not spaces:
        return {}
    wanted = set(spaces)
    with read_connection().cursor() as cursor:
        cursor.execute(workflows_sql.OPEN_STEPS_USING_SPACES, {"spaces": list(wanted)})
        return _by_space([BlockedStep(*row) for row in cursor.fetchall()], wanted)


def _by_space(steps: list[BlockedStep], wanted: set[str]) -> dict[str, list[BlockedStep]]:
    out: dict[str, list[BlockedStep]] = defaultdict(list)
    for step in steps:
        for space in {step.cargo_space_id, step.target_cargo_space_id} & wanted:
            out[space].append(step)
    return out


def _lock_rows(locks: list[dict], blocked: dict[str, list[BlockedStep]] | None = None) -> list[LockRow]:
    """LockRows of `locks` (_lock_values rows), with what each locked space blocks (one query,
    unless `blocked` already says)."""
    if blocked is None:
        blocked = blocked_steps(spaces=[lk["cargo_space_id"] for lk in locks])
    return [
        LockRow(lk["lock_id"], lk["cargo_space_id"], lk["workflow_id"], lk["workflow__status"],
                lk["workflow__pause_reason"], lk["workflow__origin"], lk["locked_at"], lk["space_tray_code"],
                tuple(b for b in blocked.get(lk["cargo_space_id"], []) if b.workflow_id != lk["workflow_id"]))
        for lk in locks
    ]


LOCK_FIELDS = ("lock_id", "cargo_space_id", "workflow_id", "workflow__status", "workflow__pause_reason",
               "workflow__origin", "locked_at", "space_tray_code")


def _lock_values(locks):
    """The lock rows with the tray their space holds, read in the same statement (bas_cargo_space_pkey)."""
    holds = BasCargoSpace.objects.filter(cargo_space_id=OuterRef("cargo_space_id")).values("tray_code")[:1]
    return locks.annotate(space_tray_code=Subquery(holds)).values(*LOCK_FIELDS)


@dataclass(frozen=True)
class LockCursor:
    locked_at: datetime
    lock_id: int

    def encode(self) -> str:
        return f"{(self.locked_at - EPOCH) // timedelta(microseconds=1)}-{self.lock_id}"

    @classmethod
    def decode(cls, text: str) -> "LockCursor":
        c = Cursor.decode(text)
        return cls(c.paused_since, c.workflow_id)


@dataclass
class LocksPage:
    rows: list[LockRow]
    total: int
    q: str
    next_cursor: LockCursor | None = None
    has_prev: bool = False


def paused_locks_page(*, q: str = "", after: LockCursor | None = None, page_size: int = 100) -> LocksPage:
    """Every lock held by a paused workflow, oldest first, keyset-paginated; three queries."""
    qs = TidySpaceLock.objects.filter(workflow__status=PAUSED)
    if q:
        cond = Q(cargo_space_id=q)
        if is_ascii_int(q):
            cond |= Q(workflow_id=int(q))
        qs = qs.filter(cond)
    total = qs.count()
    if after is not None:
        qs = qs.filter(Q(locked_at__gt=after.locked_at) | Q(locked_at=after.locked_at, lock_id__gt=after.lock_id))
    locks = list(_lock_values(qs.order_by("locked_at", "lock_id"))[:page_size + 1])
    more = len(locks) > page_size
    locks = locks[:page_size]
    rows = _lock_rows(locks)
    page = LocksPage(rows=rows, total=total, q=q, has_prev=after is not None)
    if more and rows:
        page.next_cursor = LockCursor(rows[-1].locked_at, rows[-1].lock_id)
    return page


# --- workflow detail -------------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineStep:
    step: TidyStep
    job_id: str
    active_job: MydoJob | None
    finished_jobs: tuple[MydoJobFinish, ...]
    events: tuple[TidyCallbackEvent, ...]
    first_incomplete: bool


_LOCKED_AT = TidySpaceLock._meta.get_field("locked_at")


def _json_value(value):
    """A json/jsonb column as the driver hands it over: decoded, or still text."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _json_rows(model, rows: list[dict]) -> list:
    """Model rows from a JSON array of whole table rows (json_agg of the rows): each column
    converted as the ORM would read it (timestamps back to aware datetimes; a JSON column is
    already decoded)."""
    fields = model._meta.concrete_fields
    names = [f.attname for f in fields]
    return [model.from_db(connection.alias, names,
                          [row[f.column] if isinstance(f, JSONField) else f.to_python(row[f.column]) for f in fields])
            for row in rows]


@dataclass
class WorkflowDetail:
    """A workflow page. The live fragment (refreshed every few seconds) shows the status and the
    evidence; the timeline, lock blockers, callbacks and receipts belong to the history fragment
    and are read when a template first uses them, so the live refresh does not pay for them
    (docs/architecture.md, "Console pages")."""

    workflow: TidyWorkflow
    decisions: list[RecoveryDecision]
    pause_decision: RecoveryDecision | None
    evidence_now: TidyRecoveryEvidence | None
    evidence_then: TidyRecoveryEvidence | None

    @property
    def paused(self) -> bool:
        return self.workflow.status == PAUSED

    @cached_property
    def _history(self) -> dict:
        """The history fragment's reads, in one statement (workflows_sql.WORKFLOW_HISTORY)."""
        # Prepared with a generic plan (recovery.engine.prepared): planning it cost twice its execution.
        names, rows = run_prepared(workflows_sql.WORKFLOW_HISTORY, {"workflow_id": self.workflow.workflow_id})
        return {name: _json_value(v) for name, v in zip(names, rows[0], strict=True)}

    @cached_property
    def _steps_and_events(self) -> tuple[list[TimelineStep], list[TidyCallbackEvent]]:
        steps = _json_rows(TidyStep, self._history["steps"])
        active = {j.job_id: j for j in _json_rows(MydoJob, self._history["jobs"])}
        finished = defaultdict(list)
        for j in _json_rows(MydoJobFinish, self._history["finishes"]):
            finished[j.job_id].append(j)
        events = _json_rows(TidyCallbackEvent, self._history["events"])
        by_step = defaultdict(list)
        for e in events:
            by_step[e.step_id].append(e)
        first_incomplete = next((s.step_id for s in steps if s.status != TidyStep.Status.COMPLETED), None)
        timeline = [TimelineStep(s, s.job_id, active.get(s.job_id), tuple(finished.get(s.job_id, ())),
                                 tuple(by_step.get(s.step_id, ())), s.step_id == first_incomplete) for s in steps]
        return timeline, events

    @property
    def timeline(self) -> list[TimelineStep]:
        return self._steps_and_events[0]

    @property
    def events(self) -> list[TidyCallbackEvent]:
        return self._steps_and_events[1]

    @property
    def lock_count(self) -> int:
        """Spaces the workflow locks, as the evidence counted them: the live fragment shows the
        count and reads no lock rows."""
        return self.evidence_now.lock_count if self.evidence_now is not None else len(self.locks)

    @cached_property
    def locks(self) -> list[LockRow]:
        w = self.workflow
        locks = [{"lock_id": lk["lock_id"], "cargo_space_id": lk["cargo_space_id"], "workflow_id": w.workflow_id,
                  "workflow__status": w.status, "workflow__pause_reason": w.pause_reason,
                  "workflow__origin": w.origin, "locked_at": _LOCKED_AT.to_python(lk["locked_at"]),
                  "space_tray_code": lk["space_tray_code"]} for lk in self._history["locks"]]
        blocked = _by_space([BlockedStep(**b) for b in self._history["blockers"]],
                            {lk["cargo_space_id"] for lk in locks})
        return _lock_rows(locks, blocked)

    @cached_property
    def receipts(self) -> list[CallbackReceipt]:
        """The newest 100 callbacks received, refused ones included: evidence a supervisor reads beside the steps."""
        return _json_rows(CallbackReceipt, self._history["receipts"])


def workflow_detail(*, workflow_id: int) -> WorkflowDetail | None:
    if not 0 < workflow_id <= BIGINT_MAX:  # not a workflow id (the URL takes any digits)
        return None
    # The workflow and its journal in one statement, prepared (recovery.engine.prepared) like the evidence read.
    _, rows = run_prepared(workflows_sql.WORKFLOW_AND_JOURNAL, {"workflow_id": workflow_id})
    if not rows:
        return None
    workflow_row, decision_rows = (_json_value(v) for v in rows[0])
    workflow = _json_rows(TidyWorkflow, [workflow_row])[0]
    decisions = _json_rows(RecoveryDecision, decision_rows)
    # An observed decision (observe mode) paused nothing: the pause evidence is an applied one's.
    pause_decision = next((d for d in decisions if d.action == "PAUSE" and not d.observed), None)
    evidence_then = None
    if pause_decision is not None:
        try:
            evidence_then = evidence_from_json(pause_decision.evidence)
        except (KeyError, TypeError, ValueError):
            evidence_then = None  # journaled by an older format; the page says so
    return WorkflowDetail(
        workflow=workflow, decisions=decisions, pause_decision=pause_decision,
        evidence_now=evidence_for_workflow(workflow_id), evidence_then=evidence_then,
    )


