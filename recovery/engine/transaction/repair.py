"""Operator repair mutations (docs/architecture.md §9): the SQL-level changes an authorized operator applies.

Like the rest of `recovery.engine.transaction`, every write here is conditional on the state its caller read and
raises StaleWrite when it matches no row; the caller holds the workflow row lock
(`lock_workflow(..., skip_locked=False)`) inside `transaction.atomic()`. The preview runs the
very same functions inside a savepoint that is rolled back (console.repair), so what the
operator sees is what applying does. Nothing here decides whether an action is allowed: the
preconditions live in `console.repair`; these functions only refuse writes whose premises no
longer hold.

Invariants for every action:
- jobs, steps and callback events are never deleted. "Archiving" a job is what the WMS does
  when a job ends: the row is copied into mydo_job_finish and leaves mydo_job.
- the workflow keeps its locks unless it is cancelled (then they are released) or completed.
- each action that touches a step records an alg.tidy_callback_event with an operator stage
  (OPERATOR_*), ON CONFLICT DO NOTHING like any callback, so the workflow's own history shows it.
- bas_stock and bas_cargo_space rows are corrected only by "reconcile to physical location",
  which is the point of that action; the audit row keeps every row before and after.

Re-check and resume (`recheck_resume`) -- the operator fixed data in the WMS:
  the decision table is evaluated as if the workflow were ACTIVE. Only a non-pause decision is
  applied: the workflow becomes ACTIVE, the paused step goes back to DISPATCHED (a job for it
  exists, active or archived) or PENDING, the evidence is read again under the same lock and
  the table's decision is applied: ADVANCE through `advance_step` with stage OPERATOR_RESUMED
  (no inventory moves), COMPLETE through `complete_workflow`, LEAVE leaves it active with an
  OPERATOR_RESUMED event. ADVANCE and COMPLETE are journaled (RecoveryDecision source REPAIR).

Re-issue job (`reissue_job`) -- job missing, pre-move state holds, no finish row:
  TDY-<wid>-<sid> is created with status 1 (the shared CREATE_STEP_JOB statement, which also
  refuses when an archived row holds the id), the step becomes DISPATCHED, the workflow ACTIVE.

Reconcile to physical location -- the operator scanned the tray and the space it stands in:
  records: every bas_stock row of the tray is booked at the stated space; that space records
  the tray; any other space recording the tray (the other end of the move, or a third space)
  is emptied. A space that records a *different* tray is never overwritten (refused earlier).
  Source (`reconcile_to_source`): the move has not happened, so the step must be dispatched
  again under its deterministic job id:
    - no active job, no finish row: the job is created (status 1), step DISPATCHED;
    - a matching active job with status 1, 2 or 3: kept as it is, step DISPATCHED;
    - a matching active job with any other status: its status is reset to 1 (created) so the
      WCS picks it up again; the old status is in the audit row;
    - a finish row for the job id (matching or not): refused -- an archived row cannot be
      un-archived and the deterministic id cannot be issued twice (CREATE_STEP_JOB refuses);
      the honest options are "reconcile to target" if the tray is really there, or cancel;
    - an active job describing a different move: refused -- the id is taken by another move
      that the WCS may be executing; fix it in the WMS and re-check, or cancel.
    The workflow becomes ACTIVE; the table then says LEAVE (matching job, pre-move state).
  Target (`reconcile_to_target`): the move has happened; it is never executed a second time:
    - an active job for the step is archived into mydo_job_finish: with status 4 (finished)
      when it matches the step, with its own status when it describes a different move (it
      did not finish; the archive must not claim it did); it is never deleted;
    - finish rows already there are kept as they are, whatever they say;
    - the step is advanced with stage OPERATOR_RECONCILED_TARGET through `advance_step`,
      which dispatches the next step's job or completes the workflow and releases its locks;
    - every step COMPLETED but one TDY job still active (RECOVERY_ACTIVE_EVIDENCE_INVALID,
      "all steps completed, job still active"): the scanned tray and space must be those of
      the completed step that job belongs to; the job is archived (status 4 when it matches
      that step) and the workflow completed, its locks released.

Cancel workflow and release locks (`cancel_release`) -- the tidy is abandoned (four eyes are
  enforced in console.repair): every active TDY-<wid>-* job is archived with its own status (it
  did not finish, so never 4 by us), the steps not COMPLETED become CANCELLED, the workflow
  CANCELLED, its locks released; an OPERATOR_CANCELLED event is recorded for the current step.
  No inventory record is changed, except with a floor confirmation: when a job was dispatched
  or executing (status 2 or 3) a vehicle may have been carrying the tray, so the cancel needs
  the space where the tray was found standing (`floor_space`, checked by console.repair) and
  corrects the records to it exactly as reconcile does, in the same transaction.
"""

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from django.db import connection

from recovery.engine import wms_sql
from recovery.engine.decisions import Action, Decision, decide
from recovery.engine.evidence import (
    ACTIVE_JOB_STATUSES,
    JobEvidence,
    StepEvidence,
    TidyRecoveryEvidence,
    evidence_for_workflow,
)
from recovery.engine.transaction import (
    StaleWrite,
    advance_step,
    complete_workflow,
    execute_rows,
    expect_rows,
    journal_decision,
    record_callback_event,
)
from recovery.messages import Message, gettext_noop, message
from recovery.models import RecoveryDecision, tidy_job_id

OPERATOR_RESUMED = "OPERATOR_RESUMED"
OPERATOR_REISSUED = "OPERATOR_REISSUED"
OPERATOR_RECONCILED_SOURCE = "OPERATOR_RECONCILED_SOURCE"
OPERATOR_RECONCILED_TARGET = "OPERATOR_RECONCILED_TARGET"
OPERATOR_CANCELLED = "OPERATOR_CANCELLED"

# What each mutation did, as the audit row and the preview show it: message ids (§15), several
# of them joined (Message.joined) for one summary.
RESUMED_ADVANCED = gettext_noop("resumed; the finished step %(step_no)s was advanced (%(stage)s)")
RESUMED_COMPLETED = gettext_noop("resumed; every step was completed, so the workflow was completed and its locks "
                                 "released")
RESUMED_CONTINUES = gettext_noop("resumed; the workflow is active again and its job continues")
JOB_CREATED_AGAIN = gettext_noop("job %(job_id)s created again (status 1)")
STEP_DISPATCHED = gettext_noop("step %(step_no)s DISPATCHED")
WORKFLOW_ACTIVE = gettext_noop("workflow ACTIVE")
TRAY_AT_SOURCE = gettext_noop("tray %(tray)s recorded at source %(space)s")
JOB_CREATED = gettext_noop("job %(job_id)s created (status 1)")
JOB_KEPT = gettext_noop("job %(job_id)s kept (status %(job_status)s)")
JOB_STATUS_RESET = gettext_noop("job %(job_id)s status %(job_status)s reset to 1")
TRAY_AT_TARGET = gettext_noop("tray %(tray)s recorded at target %(space)s")
JOB_ARCHIVED = gettext_noop("job %(job_id)s archived with status %(job_status)s")
WORKFLOW_COMPLETED = gettext_noop("workflow COMPLETED, locks released")
STEP_COMPLETED = gettext_noop("step %(step_no)s COMPLETED")
NEXT_JOB = gettext_noop("next job %(job_id)s dispatched")
STEPS_CANCELLED = gettext_noop("%(count)s step(s) CANCELLED")
JOBS_ARCHIVED = gettext_noop("%(count)s active job(s) archived with their own status")
WORKFLOW_CANCELLED = gettext_noop("workflow CANCELLED")
LOCKS_RELEASED = gettext_noop("%(count)s lock(s) released")
TRAY_AT_FLOOR_SPACE = gettext_noop("tray %(tray)s recorded at %(space)s, where it was found on the floor")

# --- the row snapshot a preview and an audit row show -----------------------------------------

# Columns that move on every write; a row whose only change is one of these is not shown.
VOLATILE = frozenset({"updated_at", "locked_at", "received_at", "created_at", "finished_at", "completed_at"})


def _prefix(workflow_id: int) -> dict:
    return {"prefix": f"TDY-{workflow_id}-", "prefix_end": f"TDY-{workflow_id}."}


def _jsonable(value):
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


@dataclass(frozen=True)
class Scope:
    """The rows an operator action on one workflow can touch."""

    workflow_id: int
    trays: tuple[str, ...]
    spaces: tuple[str, ...]


def workflow_scope(workflow_id: int, extra_spaces=()) -> Scope:
    """Every tray and space the workflow's steps name, every space recording one of its trays, and
    `extra_spaces` (a space a floor confirmation names)."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.WORKFLOW_STEPS, {"workflow_id": workflow_id})
        steps = cursor.fetchall()
        trays = sorted({s[3] for s in steps})
        spaces = {s[4] for s in steps} | {s[5] for s in steps} | set(extra_spaces)
        cursor.execute(wms_sql.SPACES_RECORDING_TRAYS, {"trays": trays})
        spaces |= {r[0] for r in cursor.fetchall()}
    return Scope(workflow_id, tuple(trays), tuple(sorted(spaces)))


def snapshot_scope(scope: Scope) -> dict[str, dict[str, dict]]:
    params = {"workflow_id": scope.workflow_id, "trays": list(scope.trays), "spaces": list(scope.spaces),
              **_prefix(scope.workflow_id)}
    out: dict[str, dict[str, dict]] = {}
    with connection.cursor() as cursor:
        for table, (key, sql) in wms_sql.REPAIR_SNAPSHOT.items():
            cursor.execute(sql, params)
            cols = [c.name for c in cursor.description]
            rows = {}
            for values in cursor.fetchall():
                row = {c: _jsonable(v) for c, v in zip(cols, values, strict=True)}
                rows[str(row[key])] = row
            out[table] = rows
    return out


def row_changes(before: dict, after: dict) -> list[dict]:
    """[{table, key, kind: added|removed|changed, before, after, columns}] in table order."""
    changes = []
    for table in wms_sql.REPAIR_SNAPSHOT:
        b, a = before.get(table, {}), after.get(table, {})
        for key in sorted(a.keys() | b.keys(), key=lambda k: (len(k), k)):
            old, new = b.get(key), a.get(key)
            if old is None:
                changes.append({"table": table, "key": key, "kind": "added", "before": None, "after": new,
                                "columns": sorted(new)})
            elif new is None:
                changes.append({"table": table, "key": key, "kind": "removed", "before": old, "after": None,
                                "columns": sorted(old)})
            else:
                cols = sorted(c for c in new if new[c] != old.get(c) and c not in VOLATILE)
                if cols:
                    changes.append({"table": table, "key": key, "kind": "changed",
                                    "before": {c: old.get(c) for c in cols}, "after": {c: new[c] for c in cols},
                                    "columns": cols})
    return changes


# --- the repair context: the evidence plus what the actions need beyond it -------------------


@dataclass(frozen=True)
class RepairContext:
    """Read under the workflow row lock (apply, preview) or without it (the page's offers)."""

    evidence: TidyRecoveryEvidence
    steps: tuple[StepEvidence, ...]
    active_jobs: tuple[JobEvidence, ...]  # every active TDY-<wid>-* job
    # The step a reconcile is about: the first incomplete step, or, when every step is
    # COMPLETED, the step whose job is the one still active (None when that is not unique).
    subject: StepEvidence | None
    subject_job: JobEvidence | None  # the active job with the subject's deterministic id
    subject_finish_rows: int
    stock_spaces: tuple[str | None, ...]  # where each stock row of the subject tray is booked
    spaces: dict[str, str | None] = field(default_factory=dict)  # space -> tray it records

    @property
    def workflow_id(self) -> int:
        return self.evidence.workflow_id

    @property
    def fingerprint(self) -> str:
        return self.evidence.fingerprint

    def space_exists(self, space: str) -> bool:
        return space in self.spaces

    def elsewhere(self, space: str) -> list[str]:
        """Spaces other than `space` that record the subject tray."""
        tray = self.subject.tray_code if self.subject else None
        return sorted(s for s, t in self.spaces.items() if t == tray and s != space)


def read_context(workflow_id: int, extra_spaces=()) -> RepairContext | None:
    """The context; `spaces` also records what `extra_spaces` hold (a space scanned on the floor
    that is neither end of the move), absent when such a space does not exist."""
    evidence = evidence_for_workflow(workflow_id)
    if evidence is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.WORKFLOW_STEPS, {"workflow_id": workflow_id})
        steps = tuple(StepEvidence(*row) for row in cursor.fetchall())
        cursor.execute(wms_sql.WORKFLOW_ACTIVE_JOBS, _prefix(workflow_id))
        active_jobs = tuple(JobEvidence(*row) for row in cursor.fetchall())
        subject = None
        if evidence.step is not None:
            subject = next(s for s in steps if s.step_id == evidence.step.step_id)
        elif len(active_jobs) == 1:
            by_job = {tidy_job_id(workflow_id, s.step_id): s for s in steps}
            subject = by_job.get(active_jobs[0].job_id)
        subject_job, finish_rows, stock_spaces, spaces = None, 0, (), {}
        if subject is not None:
            job_id = tidy_job_id(workflow_id, subject.step_id)
            subject_job = next((j for j in active_jobs if j.job_id == job_id), None)
            cursor.execute(wms_sql.FINISH_ROWS_OF_JOB, {"job_id": job_id})
            finish_rows = cursor.fetchone()[0]
            cursor.execute(wms_sql.TRAY_STOCK_ROWS, {"tray_code": subject.tray_code})
            stock_spaces = tuple(row[1] for row in cursor.fetchall())
            cursor.execute(wms_sql.SPACES_OF_MOVE, {"spaces": [subject.cargo_space_id, subject.target_cargo_space_id,
                                                       *extra_spaces],
                                            "tray_code": subject.tray_code})
            spaces = dict(cursor.fetchall())
    return RepairContext(evidence=evidence, steps=steps, active_jobs=active_jobs, subject=subject,
                         subject_job=subject_job, subject_finish_rows=finish_rows, stock_spaces=stock_spaces,
                         spaces=spaces)


# --- primitives ---------------------------------------------------------------------------------


def _resume_workflow(workflow_id: int) -> None:
    expect_rows(wms_sql.RESUME_WORKFLOW, {"workflow_id": workflow_id}, "resume workflow")


def _resume_step(workflow_id: int, step_id: int, expected_status: str | None, new_status: str) -> None:
    expect_rows(wms_sql.RESUME_STEP, {"workflow_id": workflow_id, "step_id": step_id,
                                      "expected_status": expected_status, "new_status": new_status}, "resume step")


def _event(ctx: RepairContext, step: StepEvidence, stage: str, payload: dict) -> None:
    record_callback_event(workflow_id=ctx.workflow_id, step_id=step.step_id,
                          job_id=tidy_job_id(ctx.workflow_id, step.step_id), stage=stage, payload=payload)


def _create_job(ctx: RepairContext, step: StepEvidence) -> str:
    job_id = tidy_job_id(ctx.workflow_id, step.step_id)
    expect_rows(wms_sql.CREATE_STEP_JOB, {"job_id": job_id, "tray_code": step.tray_code,
                                          "cargo_space_id": step.cargo_space_id,
                                          "target_cargo_space_id": step.target_cargo_space_id}, "create job")
    return job_id


def _archive_job(job: JobEvidence, archive_status: int | None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.ARCHIVE_JOB, {"job_id": job.job_id, "expected_status": job.status,
                                     "archive_status": archive_status})
        if cursor.fetchone() is None:
            raise StaleWrite(f"archive job {job.job_id}: state changed since it was read")


def _correct_records_to(ctx: RepairContext, space: str) -> None:
    """Book the subject tray's stock at `space`, make `space` record it, empty every other space
    that records it. The caller has checked that `space` exists and holds no other tray."""
    tray = ctx.subject.tray_code
    expect_rows(wms_sql.BOOK_TRAY_STOCK_AT, {"tray_code": tray, "cargo_space_id": space}, "book stock",
                rows=sum(1 for booked in ctx.stock_spaces if booked != space))
    if ctx.spaces.get(space) != tray:
        expect_rows(wms_sql.SET_SPACE_TRAY, {"tray_code": tray, "cargo_space_id": space,
                                             "expected_tray_code": ctx.spaces.get(space)}, f"space {space}")
    expect_rows(wms_sql.CLEAR_TRAY_ELSEWHERE, {"tray_code": tray, "cargo_space_id": space}, "clear other spaces",
                rows=len(ctx.elsewhere(space)))


# --- the actions (caller: workflow row locked, preconditions checked on `ctx`) -----------------


@dataclass(frozen=True)
class MutationResult:
    summary: Message  # its English (summary.english()) is what the audit row's `message` says
    decision: Decision | None = None  # re-check: the decision that was applied


def recheck_resume(ctx: RepairContext, *, payload: dict) -> MutationResult:
    ev = ctx.evidence
    _resume_workflow(ctx.workflow_id)
    step = ctx.subject if ev.step is not None else None
    if step is not None and step.status == "PAUSED_RECOVERY":
        has_job = ev.active_job is not None or ev.finish_job is not None
        _resume_step(ctx.workflow_id, step.step_id, step.status, "DISPATCHED" if has_job else "PENDING")
    current = evidence_for_workflow(ctx.workflow_id)
    decision = decide(current)
    if decision.action is Action.PAUSE:
        # The precondition said otherwise a moment ago under the same lock: treat as stale.
        raise StaleWrite(f"workflow {ctx.workflow_id}: the table still pauses it ({decision.reason})")
    if decision.action is Action.ADVANCE:
        advance_step(workflow_id=ctx.workflow_id, step=current.step, stage=OPERATOR_RESUMED,
                     payload={**payload, "finish_job": current.as_json()["finish_job"]})
        journal_decision(evidence=current, decision=decision, source=RecoveryDecision.Source.REPAIR)
        summary = message(RESUMED_ADVANCED, step_no=current.step.step_no, stage=OPERATOR_RESUMED)
    elif decision.action is Action.COMPLETE:
        complete_workflow(workflow_id=ctx.workflow_id)
        journal_decision(evidence=current, decision=decision, source=RecoveryDecision.Source.REPAIR)
        summary = message(RESUMED_COMPLETED)
    else:
        if step is not None:
            _event(ctx, step, OPERATOR_RESUMED, payload)
        summary = message(RESUMED_CONTINUES)
    return MutationResult(summary, decision)


def reissue_job(ctx: RepairContext, *, payload: dict) -> MutationResult:
    step = ctx.subject
    _resume_workflow(ctx.workflow_id)
    job_id = _create_job(ctx, step)
    _resume_step(ctx.workflow_id, step.step_id, step.status, "DISPATCHED")
    _event(ctx, step, OPERATOR_REISSUED, payload)
    return MutationResult(Message.joined([message(JOB_CREATED_AGAIN, job_id=job_id),
                                          message(STEP_DISPATCHED, step_no=step.step_no), message(WORKFLOW_ACTIVE)]))


def reconcile_to_source(ctx: RepairContext, *, payload: dict) -> MutationResult:
    step, job = ctx.subject, ctx.subject_job
    _resume_workflow(ctx.workflow_id)
    _correct_records_to(ctx, step.cargo_space_id)
    if job is None:
        what = message(JOB_CREATED, job_id=_create_job(ctx, step))
    elif job.status in ACTIVE_JOB_STATUSES:
        what = message(JOB_KEPT, job_id=job.job_id, job_status=job.status)
    else:
        expect_rows(wms_sql.RESET_JOB_STATUS, {"job_id": job.job_id, "expected_status": job.status},
                    "reset job status")
        what = message(JOB_STATUS_RESET, job_id=job.job_id, job_status=job.status)
    _resume_step(ctx.workflow_id, step.step_id, step.status, "DISPATCHED")
    _event(ctx, step, OPERATOR_RECONCILED_SOURCE, payload)
    return MutationResult(Message.joined([message(TRAY_AT_SOURCE, tray=step.tray_code, space=step.cargo_space_id),
                                          what, message(STEP_DISPATCHED, step_no=step.step_no),
                                          message(WORKFLOW_ACTIVE)]))


def reconcile_to_target(ctx: RepairContext, *, payload: dict) -> MutationResult:
    step, job = ctx.subject, ctx.subject_job
    _resume_workflow(ctx.workflow_id)
    _correct_records_to(ctx, step.target_cargo_space_id)
    parts = [message(TRAY_AT_TARGET, tray=step.tray_code, space=step.target_cargo_space_id)]
    if job is not None:
        status = 4 if step.matches(ctx.workflow_id, job) else None
        _archive_job(job, status)
        parts.append(message(JOB_ARCHIVED, job_id=job.job_id, job_status=status or job.status))
    if step.status == "COMPLETED":
        # Every step done, one job left over: archive it (above) and complete the workflow.
        _event(ctx, step, OPERATOR_RECONCILED_TARGET, payload)
        complete_workflow(workflow_id=ctx.workflow_id)
        parts.append(message(WORKFLOW_COMPLETED))
    else:
        result = advance_step(workflow_id=ctx.workflow_id, step=step,
                              stage=OPERATOR_RECONCILED_TARGET, payload=payload)
        parts.append(message(STEP_COMPLETED, step_no=step.step_no))
        parts.append(message(WORKFLOW_COMPLETED) if result.workflow_completed
                     else message(NEXT_JOB, job_id=result.next_job_id))
    return MutationResult(Message.joined(parts))


def cancel_release(ctx: RepairContext, *, payload: dict, floor_space: str | None = None) -> MutationResult:
    """`floor_space`: where the subject tray was found standing (a floor confirmation, checked by
    the caller: the space exists and records no other tray); the records are corrected to it."""
    for job in ctx.active_jobs:
        _archive_job(job, None)
    if ctx.evidence.step is not None:
        _event(ctx, ctx.subject, OPERATOR_CANCELLED, payload)
    open_steps = [s for s in ctx.steps if s.status not in ("COMPLETED", "CANCELLED")]
    expect_rows(wms_sql.CANCEL_OPEN_STEPS, {"workflow_id": ctx.workflow_id}, "cancel steps", rows=len(open_steps))
    cancelled = len(open_steps)
    expect_rows(wms_sql.CANCEL_WORKFLOW, {"workflow_id": ctx.workflow_id}, "cancel workflow")
    released = execute_rows(wms_sql.RELEASE_LOCKS, {"workflow_id": ctx.workflow_id})
    parts = [message(STEPS_CANCELLED, count=cancelled), message(JOBS_ARCHIVED, count=len(ctx.active_jobs)),
             message(WORKFLOW_CANCELLED), message(LOCKS_RELEASED, count=released)]
    if floor_space is not None:
        _correct_records_to(ctx, floor_space)
        parts.append(message(TRAY_AT_FLOOR_SPACE, tray=ctx.subject.tray_code, space=floor_space))
    return MutationResult(Message.joined(parts))

