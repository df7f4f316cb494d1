"""TidyWorkflowTransaction: every mutation of the tidy workflow tables, in one place.

This package is the one place that writes WMS rows: this module holds the workflow transaction
shared by recovery, WCS callbacks and tidy creation (advance, pause, complete, decide under the
row lock); `statements` how it sends its statements (conditional writes, one-trip pipelines),
`moves` the WCS's move in the WMS (alg.usp_complete_move_job, a job's status), `new_workflow` the
rows a new tidy writes, `repair` the operator repair actions built on them and `observe` what an
observing cycle journals.

Rules (docs/architecture.md §6):
- the workflow row is the lock that serialises recovery, callbacks and operator repairs:
  `SELECT ... FOR UPDATE` on alg.tidy_workflow first, then the evidence is re-read under it;
- every write is conditional on the state its caller read; a write that matches no row raises
  StaleWrite, which rolls the whole transaction back (a stale worker changes nothing);
- advancement is idempotent: the callback event insert ignores duplicates, the next job has a
  deterministic id, lock release deletes whatever is left;
- recovery never calls alg.usp_complete_move_job: a proven finish only advances the step.
"""

import json
import logging
import os
from dataclasses import dataclass
from enum import StrEnum

from django.db import connection, transaction

from recovery.engine import wms_sql
from recovery.engine.decisions import Action, Decision, decide
from recovery.engine.evidence import ClassificationEvidence, StepEvidence, TidyRecoveryEvidence, evidence_from_result
from recovery.engine.faults import fault_point
from recovery.engine.prepared import run_prepared
from recovery.engine.transaction.moves import (
    MOVE_RELEASE,
    MOVE_SAVEPOINT,
    MoveRefused,
    complete_move_job,
    raise_if_move_refused,
    set_job_status,
)
from recovery.engine.transaction.new_workflow import SpaceHolder, insert_step, insert_workflow, lock_spaces
from recovery.engine.transaction.statements import (
    PipelineFailed,
    StaleEvidence,
    StaleWrite,
    WorkflowLocked,
    execute_rows,
    expect_rows,
    run_pipelined,
    set_lock_timeout,
)
from recovery.models import RecoveryDecision, tidy_job_id

# The package's face: the workflow transaction below, and what its parts hand on (the statements,
# the WCS's move, the rows of a new tidy) under the names every caller uses (`tx.<name>`).
__all__ = [
    "MoveRefused", "PipelineFailed", "SpaceHolder", "StaleEvidence", "StaleWrite", "WorkflowLocked",
    "complete_move_job", "execute_rows", "expect_rows", "insert_step", "insert_workflow", "lock_spaces",
    "run_pipelined", "set_job_status", "set_lock_timeout",
]

log = logging.getLogger("recovery.transaction")  # the logger's name as log readers know it

RECOVERY_FINISHED = "RECOVERY_FINISHED"


def lock_workflow(workflow_id: int, *, skip_locked: bool) -> str | None:
    """Lock the workflow row; return its status, or None when absent (or locked, if skipping)."""
    sql = wms_sql.LOCK_WORKFLOW_SKIP_LOCKED if skip_locked else wms_sql.LOCK_WORKFLOW_WAIT
    with connection.cursor() as cursor:
        cursor.execute(sql, {"workflow_id": workflow_id})
        row = cursor.fetchone()
    return row[1] if row else None


def record_callback_event(*, workflow_id: int, step_id: int, job_id: str, stage: str,
                          payload: dict | None) -> bool:
    """Insert the event unless (workflow, step, job, stage) exists; True when inserted."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.INSERT_CALLBACK_EVENT, {
            "workflow_id": workflow_id, "step_id": step_id, "job_id": job_id, "stage": stage,
            "payload": json.dumps(payload) if payload is not None else None,
        })
        return cursor.fetchone() is not None


@dataclass(frozen=True)
class AdvanceResult:
    event_recorded: bool
    next_job_id: str | None  # the job created (or already there) for the next step
    workflow_completed: bool


def create_step_job(*, workflow_id: int, step_id: int, tray_code: str, cargo_space_id: str,
                    target_cargo_space_id: str) -> str:
    """Create the step's deterministic move job (status 1) unless it exists, active or archived,
    and mark a PENDING step DISPATCHED. Idempotent."""
    job_id = tidy_job_id(workflow_id, step_id)
    execute_rows(wms_sql.CREATE_STEP_JOB, {
        "job_id": job_id, "tray_code": tray_code, "cargo_space_id": cargo_space_id,
        "target_cargo_space_id": target_cargo_space_id,
    })
    execute_rows(wms_sql.DISPATCH_STEP, {"step_id": step_id})
    return job_id


def complete_workflow(*, workflow_id: int, expected_status: str = "ACTIVE") -> None:
    """Complete the workflow and release every lock it holds."""
    expect_rows(wms_sql.COMPLETE_WORKFLOW, {"workflow_id": workflow_id, "expected_status": expected_status},
                "complete workflow")
    execute_rows(wms_sql.RELEASE_LOCKS, {"workflow_id": workflow_id})


def advance_step(*, workflow_id: int, step: StepEvidence, stage: str, payload: dict | None,
                 expected_workflow_status: str = "ACTIVE") -> AdvanceResult:
    """Record the finish of `step` with `stage`, complete it, then dispatch the next step's job
    or complete the workflow and release its locks. Moves no inventory. Two prepared
    statements in one round trip: this runs for every callback and every proven finish."""
    advanced, _ = finish_step(workflow_id=workflow_id, step=step, stage=stage, payload=payload,
                              expected_workflow_status=expected_workflow_status)
    return advanced


def finish_step(*, workflow_id: int, step: StepEvidence, stage: str, payload: dict | None,
                expected_workflow_status: str = "ACTIVE", move_job_id: str | None = None,
                then: list[tuple[str, dict]] = ()) -> tuple[AdvanceResult, list[tuple[list[str], list[tuple]]]]:
    """`advance_step`, preceded by alg.usp_complete_move_job(`move_job_id`) in its savepoint when
    given, and followed by the statements `then` (the callback's receipt): all in one round trip
    (docs/architecture.md §8). Returns the advancement and the results of `then`.

    Same effects and checks as running them one by one: a refused move rolls back to its
    savepoint alone and raises MoveRefused (nothing after it ran); a conditional write that
    matched nothing raises StaleWrite and any other error propagates, both rolling the whole
    transaction back, including whatever `then` wrote."""
    job_id = tidy_job_id(workflow_id, step.step_id)
    statements: list[tuple[str, dict | None]] = []
    if move_job_id is not None:
        statements += [(MOVE_SAVEPOINT, None), (wms_sql.COMPLETE_MOVE_JOB, {"job_id": move_job_id}),
                       (MOVE_RELEASE, None)]
    first = len(statements)
    statements.append((wms_sql.RECORD_EVENT_AND_COMPLETE_STEP, {
        "workflow_id": workflow_id, "step_id": step.step_id, "job_id": job_id, "stage": stage,
        "payload": json.dumps(payload) if payload is not None else None, "expected_status": step.status,
    }))
    statements.append((wms_sql.ADVANCE_WORKFLOW,
                       {"workflow_id": workflow_id, "expected_status": expected_workflow_status}))
    statements += list(then)
    # The replay kills processes inside this transaction at this fault point, once the step's
    # completion has run (it waits for that statement in pg_stat_activity): with faults armed the
    # pipeline is cut in two there. Production never arms them (recovery/engine/faults.py).
    cut = first + 1 if os.environ.get("TIDY_FAULTS") else len(statements)
    try:
        results = run_pipelined(statements[:cut])
        fault_point(f"advance.{stage}")
        if cut < len(statements):
            try:
                results += run_pipelined(statements[cut:])
            except PipelineFailed as exc:
                exc.index += cut
                raise
    except PipelineFailed as exc:
        if move_job_id is not None and exc.index == 1:
            raise_if_move_refused(exc)
        raise
    events_recorded, steps_completed = results[first][1][0]
    if steps_completed != 1:
        raise StaleWrite(f"complete step: step {step.step_id} is no longer {step.status}")
    next_step_id, workflows_updated, _, _ = results[first + 1][1][0]
    if workflows_updated != 1:
        raise StaleWrite(f"advance workflow: workflow {workflow_id} is no longer {expected_workflow_status}")
    advanced = AdvanceResult(
        event_recorded=events_recorded == 1,
        next_job_id=tidy_job_id(workflow_id, next_step_id) if next_step_id is not None else None,
        workflow_completed=next_step_id is None,
    )
    return advanced, results[first + 2:]


def pause_workflow(*, workflow_id: int, step: StepEvidence | None, reason: str,
                   expected_workflow_status: str = "ACTIVE") -> None:
    """PAUSED_RECOVERY on the workflow and its first incomplete step; every lock is kept."""
    expect_rows(wms_sql.PAUSE_WORKFLOW,
                {"workflow_id": workflow_id, "reason": reason, "expected_status": expected_workflow_status},
                "pause workflow")
    if step is not None:
        expect_rows(wms_sql.PAUSE_STEP, {"workflow_id": workflow_id, "step_id": step.step_id,
                                         "reason": reason, "expected_step_status": step.status}, "pause step")


def _journal_params(evidence: TidyRecoveryEvidence, decision: Decision, source: str, cycle_id: int | None) -> dict:
    return {
        "cycle_id": cycle_id,
        "source": str(source),
        "workflow_id": evidence.workflow_id,
        "step_id": evidence.step.step_id if evidence.step else None,
        "action": decision.action.value,
        "reason": decision.reason.value if decision.reason else "",
        "rule": decision.rule.value,
        "evidence": json.dumps(evidence.as_json()),
        "fingerprint": evidence.fingerprint,
    }


def journal_decision(*, evidence: TidyRecoveryEvidence, decision: Decision, source: str,
                     cycle_id: int | None = None) -> int:
    """Journal a decision with the evidence it was made on (a RecoveryDecision row); returns its id.
    Plain SQL on the decision's own transaction: this runs once per changed workflow per cycle."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.INSERT_RECOVERY_DECISION, _journal_params(evidence, decision, source, cycle_id))
        return cursor.fetchone()[0]


def _pause_and_journal(evidence: TidyRecoveryEvidence, decision: Decision, *, source: str,
                       cycle_id: int | None) -> None:
    """pause_workflow and journal_decision in one prepared statement (one round trip)."""
    step = evidence.step
    _, rows = run_prepared(wms_sql.PAUSE_AND_JOURNAL, {
        **_journal_params(evidence, decision, source, cycle_id),
        "expected_status": evidence.workflow_status,
        "expected_step_status": step.status if step else None,
    })
    workflows_paused, steps_paused, _ = rows[0]
    if workflows_paused != 1:
        raise StaleWrite(f"pause workflow: workflow {evidence.workflow_id} is no longer {evidence.workflow_status}")
    if step is not None and steps_paused != 1:
        raise StaleWrite(f"pause step: step {step.step_id} is no longer {step.status}")


def _complete_and_journal(evidence: TidyRecoveryEvidence, decision: Decision, *, source: str,
                          cycle_id: int | None) -> None:
    """complete_workflow and journal_decision in one prepared statement (one round trip)."""
    _, rows = run_prepared(wms_sql.COMPLETE_AND_JOURNAL, {
        **_journal_params(evidence, decision, source, cycle_id), "expected_status": evidence.workflow_status,
    })
    if rows[0][0] != 1:
        raise StaleWrite(f"complete workflow: workflow {evidence.workflow_id} is no longer {evidence.workflow_status}")


# --- applying a recovery decision ------------------------------------------------------------


def _apply_locked(evidence: TidyRecoveryEvidence, decision: Decision, *, source: str,
                  cycle_id: int | None) -> None:
    """Write `decision`, made on `evidence` read under the workflow row lock, and journal it."""
    status = evidence.workflow_status
    if decision.action is Action.ADVANCE:
        payload = {"source": source.lower(), "cycle_id": cycle_id, "fingerprint": evidence.fingerprint,
                   "finish_job": evidence.finish_job_json()}
        # The journal row travels in the advancement's round trip (finish_step's `then`).
        finish_step(workflow_id=evidence.workflow_id, step=evidence.step, stage=RECOVERY_FINISHED,
                    payload=payload, expected_workflow_status=status,
                    then=[(wms_sql.INSERT_RECOVERY_DECISION, _journal_params(evidence, decision, source, cycle_id))])
    elif decision.action is Action.COMPLETE:
        _complete_and_journal(evidence, decision, source=source, cycle_id=cycle_id)
    elif decision.action is Action.PAUSE:
        _pause_and_journal(evidence, decision, source=source, cycle_id=cycle_id)
    else:
        return
    fault_point("recovery.before_commit")


def apply_decision(evidence: TidyRecoveryEvidence, decision: Decision, *, source: str = "RECOVERY",
                   cycle_id: int | None = None) -> None:
    """Apply a decision made earlier, outside the lock (a possibly stale worker).

    Waits for the workflow row, re-reads the evidence and refuses with StaleEvidence, writing
    nothing, when it no longer equals what the decision was made on."""
    # Lines are logged after the transaction, never while the workflow row is locked
    # (docs/architecture.md, "Logging never blocks").
    try:
        with transaction.atomic():
            _, current = lock_and_read(evidence.workflow_id, skip_locked=False)
            if current is None or current.fingerprint != evidence.fingerprint:
                raise StaleEvidence(f"workflow {evidence.workflow_id}: evidence changed since the decision")
            _apply_locked(current, decision, source=source, cycle_id=cycle_id)
    except StaleEvidence:
        log.warning("stale decision refused for workflow %s: evidence changed since it was read",
                    evidence.workflow_id)
        raise


class Outcome(StrEnum):
    APPLIED = "APPLIED"
    LEFT = "LEFT"  # re-read under the lock, the table says leave it
    SKIPPED = "SKIPPED"  # another transaction holds the workflow row
    STALE = "STALE"  # a conditional write matched nothing; rolled back
    OBSERVED = "OBSERVED"  # observe mode: journaled as observed, nothing applied (transaction/observe.py)


@dataclass(frozen=True)
class ReconcileResult:
    workflow_id: int
    outcome: Outcome
    decision: Decision | None = None
    evidence: TidyRecoveryEvidence | None = None


def lock_and_read(workflow_id: int, *, skip_locked: bool) -> tuple[bool, TidyRecoveryEvidence | None]:
    """lock_workflow, then evidence_for_workflow_under_lock, in one round trip: PostgreSQL runs
    the read after the lock is granted, with its own snapshot, so it sees everything committed
    before (docs/architecture.md §6). (False, None) when the row is absent, or held and skipped."""
    lock = wms_sql.LOCK_WORKFLOW_SKIP_LOCKED if skip_locked else wms_sql.LOCK_WORKFLOW_WAIT
    (_, locked), evidence_result = run_pipelined([
        (lock, {"workflow_id": workflow_id}),
        (wms_sql.evidence_for_one_workflow(), {"workflow_id": workflow_id}),
    ])
    return (True, evidence_from_result(*evidence_result)) if locked else (False, None)


def reconcile_workflow(workflow_id: int, *, cycle_id: int | None = None, skip_locked: bool = True,
                       classified: ClassificationEvidence | None = None) -> ReconcileResult:
    """One short transaction: lock the row (skipping it if held), re-read the evidence under the
    lock, decide again, apply only what still holds. `classified`: what the cycle classified the
    workflow on, if it did (a changed decision since then is logged, after the transaction:
    nothing is logged while the row is locked, docs/architecture.md "Logging never blocks")."""
    changed = None
    try:
        with transaction.atomic():
            locked, evidence = lock_and_read(workflow_id, skip_locked=skip_locked)
            if not locked:
                return ReconcileResult(workflow_id, Outcome.SKIPPED)
            decision = decide(evidence)
            if classified is not None and (then := decide(classified)) != decision:
                changed = (then.rule.value, decision.rule.value)
            if not decision.changes_state:
                result = ReconcileResult(workflow_id, Outcome.LEFT, decision, evidence)
            else:
                _apply_locked(evidence, decision, source=RecoveryDecision.Source.RECOVERY, cycle_id=cycle_id)
                result = ReconcileResult(workflow_id, Outcome.APPLIED, decision, evidence)
    except StaleWrite as exc:
        _log_changed(workflow_id, changed)
        log.warning("stale write on workflow %s rolled back: %s", workflow_id, exc)
        return ReconcileResult(workflow_id, Outcome.STALE)
    _log_changed(workflow_id, changed)
    return result


def _log_changed(workflow_id: int, changed: tuple[str, str] | None) -> None:
    if changed is not None:
        log.info("workflow %s changed since classification (%s then, %s now); deciding on the fresh evidence",
                 workflow_id, *changed)
