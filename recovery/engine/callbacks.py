"""The WCS callbacks of the normal tidy lifecycle: jobFinish and job status.

- `job_finish_process`: the transactional jobFinish callback.
  One transaction: lock the workflow row first, re-read the evidence under it, run
  alg.usp_complete_move_job when the job is still active, then the same idempotent advancement
  recovery uses.
- `job_status_process`: WCS reports a job dispatched (2) or executing (3); forward only. A report
  about a job already finished is stale (200 STALE_REPORT), never a conflict.

Both go through one frame (`process_callback`) that locks the workflow row and reads what the job
names; what happens under that lock is a named function per callback (`finish_under_lock`,
`status_under_lock`). The requests arrive typed (JobFinishRequest, JobStatusRequest): parsing the
HTTP body is the API view's job (console/api/parsing.py).

Every callback received is recorded as a CallbackReceipt (accepted, duplicate or refused),
in the same transaction as its effect; a refused callback changes no WMS row.
"""

import json
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from recovery.engine import transaction as tx
from recovery.engine import wms_sql
from recovery.engine.decisions import Action, Rule, decide
from recovery.engine.evidence import (
    ACTIVE_JOB_STATUSES,
    TidyRecoveryEvidence,
    evidence_for_workflow_under_lock,
    evidence_from_row,
)
from recovery.engine.prepared import run_prepared
from recovery.logs.logcontext import load_var
from recovery.logs.oplog import log_callback_outcome
from recovery.models import CallbackReceipt, TidyWorkflow, tidy_job_id

log = logging.getLogger("recovery.callbacks")  # the logger's name as log readers know it

FINISH_STAGES = ("MOVE_FINISHED", "OUTBOUND_FINISHED")
REPORTABLE_JOB_STATUSES = {2: "dispatched", 3: "executing"}
JOB_ID_RE = re.compile(r"^TDY-([1-9][0-9]{0,17})-([1-9][0-9]{0,17})$")
MAX_TEXT = 200
# The upper bounds (seconds) of tidy_callback_duration_seconds' buckets, from the receipts'
# duration_ms (prometheus-client's defaults: a callback takes milliseconds, a lock wait seconds).
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


# --- the typed requests ------------------------------------------------------------------------


@dataclass(frozen=True)
class JobFinishRequest:
    job_id: str
    stage: str
    event_id: str | None
    payload: dict
    # Load identity and delivery point, when the WCS sends them: compared with the step.
    tray_code: str | None = None
    location: str | None = None
    sequence: int | None = None
    # The names of the top-level fields the request carried that the contract does not name
    # (console/api/unknown_fields.py): distinct, at most 50, and how many more; kept on the
    # receipt, never evidence.
    unknown_fields: tuple[str, ...] | None = None
    unknown_fields_rest: int = 0

    def receipt_kw(self) -> dict:
        return {"stage": self.stage, "event_id": self.event_id, "sequence": self.sequence,
                "tray_code": self.tray_code, "location": self.location, "unknown_fields": self.unknown_fields,
                "unknown_fields_rest": self.unknown_fields_rest}


@dataclass(frozen=True)
class JobStatusRequest:
    job_id: str
    status: int
    event_id: str | None
    payload: dict
    sequence: int | None = None
    unknown_fields: tuple[str, ...] | None = None
    unknown_fields_rest: int = 0

    def receipt_kw(self) -> dict:
        return {"job_status": self.status, "event_id": self.event_id, "sequence": self.sequence,
                "unknown_fields": self.unknown_fields, "unknown_fields_rest": self.unknown_fields_rest}


def split_job_id(job_id: str) -> tuple[int, int] | None:
    """(workflow_id, step_id) of a deterministic tidy job id, None for anything else."""
    m = JOB_ID_RE.match(job_id)
    return (int(m.group(1)), int(m.group(2))) if m else None


# --- callback results and receipts -----------------------------------------------------------

Outcome = CallbackReceipt.Outcome


@dataclass
class CallbackResult:
    http_status: int
    outcome: str
    message: str
    job_id: str
    workflow_id: int | None = None
    step_id: int | None = None
    extra: dict = field(default_factory=dict)
    state: dict | None = None
    # True once its receipt is written (with the effect, in the same round trip: §8).
    recorded: bool = field(default=False, compare=False, repr=False)

    def body(self) -> dict:
        out = {"outcome": self.outcome, "message": self.message, "job_id": self.job_id,
               "workflow_id": self.workflow_id, "step_id": self.step_id, **self.extra}
        if self.state is not None:
            out["workflow"] = self.state
        return out


def workflow_state(workflow_id: int) -> dict | None:
    """The workflow and its steps as a callback answer shows them."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.WORKFLOW_STATE, {"workflow_id": workflow_id})
        return _state_from_rows(workflow_id, cursor.fetchall())


def _state_from_rows(workflow_id: int, rows: list[tuple]) -> dict | None:
    if not rows:
        return None
    status, reason = rows[0][0], rows[0][1]
    steps = [{"step_id": sid, "step_no": no, "status": st, "job_id": tidy_job_id(workflow_id, sid)}
             for _, _, sid, no, st in rows if sid is not None]
    return {"workflow_id": workflow_id, "status": status, "pause_reason": reason, "steps": steps}


def _receipt_params(*, endpoint: str, result: CallbackResult, payload: Any, started: float, stage: str = "",
                    job_status: int | None = None, event_id: str | None = None, sequence: int | None = None,
                    tray_code: str | None = None, location: str | None = None,
                    unknown_fields: tuple[str, ...] | None = None, unknown_fields_rest: int = 0) -> dict:
    mismatch = ({"expected": result.extra["expected"], "reported": result.extra["reported"]}
                if result.outcome == Outcome.REPORT_MISMATCH else None)
    return {
        "endpoint": endpoint, "job_id": result.job_id[:MAX_TEXT], "workflow_id": result.workflow_id,
        "step_id": result.step_id, "stage": stage, "job_status": job_status,
        "wcs_event_id": (event_id or "")[:MAX_TEXT], "http_status": result.http_status,
        "outcome": str(result.outcome), "message": result.message,
        "payload": json.dumps(payload) if payload is not None else None,
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        "sequence": sequence, "tray_code": tray_code or "", "location": location or "",
        "mismatch": json.dumps(mismatch) if mismatch is not None else None,
        "unknown_fields": json.dumps(list(unknown_fields)) if unknown_fields else None,
        "unknown_fields_rest": unknown_fields_rest,
    }


def callback_receipt_record(*, endpoint: str, result: CallbackResult, payload: Any, started: float,
                            **receipt_kw) -> None:
    """Write the CallbackReceipt of one request (in the caller's transaction, if any)."""
    params = _receipt_params(endpoint=endpoint, result=result, payload=payload, started=started, **receipt_kw)
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.INSERT_CALLBACK_RECEIPT, params)
    log_callback_outcome(params)


def _record_with_state(*, workflow_id: int, endpoint: str, result: CallbackResult, payload: Any, started: float,
                       **receipt_kw) -> dict | None:
    """Write the receipt and read the workflow's resulting state in one statement."""
    params = _receipt_params(endpoint=endpoint, result=result, payload=payload, started=started, **receipt_kw)
    ((_, rows),) = tx.run_pipelined([(wms_sql.INSERT_CALLBACK_RECEIPT_RETURNING_STATE,
                                      {**params, "workflow_id": workflow_id})])
    log_callback_outcome(params)
    return _state_from_rows(workflow_id, rows)


def bad_request_record(*, endpoint: str, field_name: str | None, message: str, payload: Any,
                       started: float, http_status: int = 400,
                       unknown_fields: tuple[str, ...] | None = None, unknown_fields_rest: int = 0) -> CallbackResult:
    """Record a malformed request (400; 413 too large, 415 not JSON) as a receipt; it touches no
    WMS row. The caller hands over a storable payload (the API's parser checked its text)."""
    payload = payload if isinstance(payload, dict) else {"raw": payload}
    job_id = payload.get("job_id") if isinstance(payload.get("job_id"), str) else ""
    ids = split_job_id(job_id) if job_id else None
    result = CallbackResult(http_status, Outcome.BAD_REQUEST, message, job_id[:MAX_TEXT],
                            workflow_id=ids[0] if ids else None, step_id=ids[1] if ids else None,
                            extra={"field": field_name})
    stage = payload.get("stage") if isinstance(payload.get("stage"), str) else ""
    callback_receipt_record(endpoint=endpoint, result=result, payload=_jsonable(payload), started=started,
                            stage=stage[:64], unknown_fields=unknown_fields, unknown_fields_rest=unknown_fields_rest)
    return result


def _jsonable(value: Any) -> Any:
    """`value` when jsonb can hold it (no Infinity or NaN either: PostgreSQL refuses them),
    else a bounded text of it."""
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return {"raw": repr(value)[:2000]}


@dataclass(frozen=True)
class CallbackTarget:
    step_id: int | None
    step_no: int | None
    step_status: str | None
    active_status: int | None
    finish_count: int
    # The step's own tray and target (a job-finish's tray_code and location are compared with them).
    step_tray_code: str | None = None
    step_target_cargo_space_id: str | None = None
    step_source_cargo_space_id: str | None = None
    # The workflow's first step other than this one that is not COMPLETED (by step_no): the step
    # the advancement dispatches next; None when this is the last one left.
    next_step_id: int | None = None
    # The workflow's evidence, read in the same round trip as the lock when the callback asked
    # for it (jobFinish); None: read it when needed.
    evidence: TidyRecoveryEvidence | None = field(default=None, compare=False, repr=False)

    @property
    def job_exists(self) -> bool:
        return self.active_status is not None or self.finish_count > 0


# --- prepared statements on the callback's hot path --------------------------------------------


def read_callback_target(workflow_id: int, step_id: int, job_id: str) -> CallbackTarget:
    _, rows = run_prepared(wms_sql.CALLBACK_TARGET, {"workflow_id": workflow_id, "step_id": step_id, "job_id": job_id})
    return CallbackTarget(*rows[0])


def _lock_timeout_ms() -> int:
    return settings.WCS_CALLBACK_LOCK_TIMEOUT_MS


def lock_and_read_target(workflow_id: int, step_id: int, job_id: str, *, wait: bool,
                         with_evidence: bool) -> tuple[str | None, CallbackTarget | None]:
    """Lock the workflow row first (skipping it when another holds it, or waiting at most the lock
    timeout), then read what the job names and, when asked, the workflow's evidence (one statement:
    wms_sql.callback_target_and_evidence): one round trip. Returns (workflow status, target);
    (None, None) when the row is absent or skipped."""
    statements = []
    if wait:
        statements.append((wms_sql.SET_LOCAL_LOCK_TIMEOUT, {"lock_timeout": f"{int(_lock_timeout_ms())}ms"}))
    statements.append((wms_sql.LOCK_WORKFLOW_WAIT if wait else wms_sql.LOCK_WORKFLOW_SKIP_LOCKED,
                       {"workflow_id": workflow_id}))
    read = wms_sql.callback_target_and_evidence() if with_evidence else wms_sql.CALLBACK_TARGET
    statements.append((read, {"workflow_id": workflow_id, "step_id": step_id, "job_id": job_id}))
    (_, locked), (columns, rows) = tx.run_pipelined(statements)[1 if wait else 0:]
    if not locked:
        return None, None
    target, evidence = rows[0][:wms_sql.CALLBACK_TARGET_COLUMNS], None
    if with_evidence:
        row = dict(zip(columns[wms_sql.CALLBACK_TARGET_COLUMNS:], rows[0][wms_sql.CALLBACK_TARGET_COLUMNS:],
                       strict=True))
        evidence = evidence_from_row(row) if row["workflow_id"] is not None else None
    return locked[0][1], CallbackTarget(*target, evidence=evidence)


def process_callback(*, request: JobFinishRequest | JobStatusRequest, **kw) -> CallbackResult:
    """`_process_callback` with the callback's log context: its lines carry the WCS's event_id
    and, once the step is read, its tray, source and target (recovery/logs/logcontext.py)."""
    token = load_var.set({"event_id": request.event_id})
    try:
        return _process_callback(request=request, **kw)
    finally:
        load_var.reset(token)


def _log_load(target: "CallbackTarget | None") -> None:
    load = load_var.get()
    if load is not None and target is not None and target.step_id is not None:
        load.update(tray_code=target.step_tray_code, source=target.step_source_cargo_space_id,
                    target=target.step_target_cargo_space_id)


def _process_callback(*, endpoint: str, request: JobFinishRequest | JobStatusRequest, under_lock,
                      receipt_kw: dict, before_lock=None, evidence_with_lock: bool = False,
                      receipt_with_effect: bool = False, report_check=None) -> CallbackResult:
    """The shared frame of both callbacks: parse the id, lock the workflow row first (with a
    lock timeout), read what the job names, hand over to `under_lock`, record the receipt.

    `before_lock`, when given, may answer from one read without any lock or transaction (a
    duplicate of a callback already applied: docs/architecture.md §8); it returns None for
    everything it cannot prove (having written nothing), which then takes the locked path. It is
    given `receipt` (the receipt's parameters of a result) and writes the receipt of the answer it
    gives in the round trip of its read. The lock and the reads under it travel in one round trip
    (`lock_and_read_target`); `evidence_with_lock` adds the workflow's evidence to that trip for a
    callback that usually needs it. With `receipt_with_effect`, `under_lock` is also given
    `receipt` so it can write the receipt in the round trip of its effect; a result it recorded
    says so (`recorded`).

    `report_check`, when given, may answer the report itself from what the job names, before the
    workflow's state is considered (a job-finish naming another tray or place: REPORT_MISMATCH; a
    job-status about a finished job: STALE_REPORT), so a repeat of the report gets the same answer
    whether or not recovery paused the workflow since."""
    started = time.perf_counter()
    job_id, payload = request.job_id, request.payload
    ids = split_job_id(job_id)
    if ids is None:
        result = CallbackResult(404, Outcome.UNKNOWN_JOB,
                                f"unknown job {job_id!r}: not a tidy job id (TDY-<workflowId>-<stepId>)", job_id)
        callback_receipt_record(endpoint=endpoint, result=result, payload=payload, started=started, **receipt_kw)
        return result
    workflow_id, step_id = ids

    def receipt(result: CallbackResult) -> dict:
        return _receipt_params(endpoint=endpoint, result=result, payload=payload, started=started, **receipt_kw)

    try:
        if before_lock is not None:
            result = before_lock(request, workflow_id=workflow_id, step_id=step_id, receipt=receipt)
            # The read just succeeded on this connection: it is the request's health check, and
            # Django's own (a `SELECT 1` round trip before the transaction) would only repeat it.
            connection.health_check_done = True
            if result is not None:
                return result
        with transaction.atomic():
            # Uncontended (the usual case) the row is ours at once; otherwise wait, but only
            # as long as lock_timeout allows, so a callback never hangs forever.
            status, target = lock_and_read_target(workflow_id, step_id, job_id, wait=False,
                                                  with_evidence=evidence_with_lock)
            if status is None:
                status, target = lock_and_read_target(workflow_id, step_id, job_id, wait=True,
                                                      with_evidence=evidence_with_lock)
            _log_load(target)
            if status is None or target.step_id is None:
                result = CallbackResult(404, Outcome.UNKNOWN_JOB,
                                        f"unknown job {job_id}: no such workflow step", job_id)
            elif report_check is not None and target.job_exists and (
                    refused := report_check(request, workflow_id=workflow_id, step_id=step_id, target=target)):
                result = refused
            elif status == TidyWorkflow.Status.PAUSED_RECOVERY:
                # Before the job check: a report for a paused workflow's missing job is evidence too.
                result = CallbackResult(
                    409, Outcome.REFUSED_PAUSED,
                    f"workflow {workflow_id} is PAUSED_RECOVERY: the callback changed neither inventory nor "
                    "workflow state and is kept as evidence for the operator who repairs it",
                    job_id, workflow_id, step_id)
            elif not target.job_exists:
                result = CallbackResult(404, Outcome.UNKNOWN_JOB,
                                        f"unknown job {job_id}: no such job in mydo_job nor mydo_job_finish",
                                        job_id, workflow_id, step_id)
            else:
                result = under_lock(request, workflow_id=workflow_id, step_id=step_id, status=status, target=target,
                                    **({"receipt": receipt} if receipt_with_effect else {}))
            if result.recorded:
                pass
            elif result.http_status == 404:
                callback_receipt_record(endpoint=endpoint, result=result, payload=payload, started=started,
                                        **receipt_kw)
            else:
                result.state = _record_with_state(workflow_id=workflow_id, endpoint=endpoint, result=result,
                                                  payload=payload, started=started, **receipt_kw)
            return result
    except (DatabaseError, tx.StaleWrite) as exc:
        # Never evidence: everything rolled back; WCS retries. 55P03 = lock_timeout expired.
        cause = exc.__cause__
        if getattr(cause, "sqlstate", None) == "55P03":
            message = f"workflow {workflow_id} is busy (lock wait over {_lock_timeout_ms()} ms); nothing changed, retry"
        else:
            log.exception("%s callback for %s failed and was rolled back", endpoint, job_id)
            message = f"the callback could not be processed ({type(exc).__name__}); nothing changed, retry"
        result = CallbackResult(503, Outcome.UNAVAILABLE, message, job_id, workflow_id, step_id)
        try:
            callback_receipt_record(endpoint=endpoint, result=result, payload=payload, started=started, **receipt_kw)
        except DatabaseError:
            log.exception("could not record the receipt of a failed %s callback for %s", endpoint, job_id)
        return result


# --- jobFinish ---------------------------------------------------------------------------------


def consistent_move(decision, evidence: TidyRecoveryEvidence) -> bool:
    """Whether the workflow's current move is one a callback may act on: a matching active job in
    the pre-move state. An earlier finish report that named another tray or place does not stop a
    new report (a finish that now agrees supersedes it); only the recovery cycle pauses for it."""
    return decision.rule is Rule.ACTIVE_JOB_PRE_MOVE or (
        decision.rule is Rule.WCS_REPORT_MISMATCH and evidence.pre_move_state)


def _finish_answer(request: JobFinishRequest, workflow_id: int, step_id: int, code: int, outcome: str, message: str,
                   **extra) -> CallbackResult:
    return CallbackResult(code, outcome, message, request.job_id, workflow_id, step_id, extra=extra)


def _event_payload(request: JobFinishRequest) -> dict:
    return {"source": "wcs", "event_id": request.event_id}


def finish_of_completed_step(request: JobFinishRequest, *, workflow_id: int, step_id: int, status: str,
                             target: CallbackTarget) -> CallbackResult:
    """A finish for a step that is already COMPLETED: a duplicate that moves nothing; its stage is
    recorded as an event once (a second stage of the same step is news, the same one is not)."""
    if status not in (TidyWorkflow.Status.ACTIVE, TidyWorkflow.Status.COMPLETED):
        return _finish_answer(request, workflow_id, step_id, 409, Outcome.REFUSED_CONFLICT,
                              f"workflow {workflow_id} is {status}")
    recorded = tx.record_callback_event(workflow_id=workflow_id, step_id=step_id, job_id=request.job_id,
                                        stage=request.stage, payload=_event_payload(request))
    return _finish_answer(request, workflow_id, step_id, 200, Outcome.DUPLICATE,
                          FINISH_DUPLICATE_MESSAGE % target.step_no
                          + (f"; stage {request.stage} recorded" if recorded else ""),
                          inventory_moved=False, event_recorded=recorded)


# The duplicate's message, with the step number; both Python's % and PostgreSQL's format() fill
# its %s (FINISH_DUPLICATE_ANSWER writes the receipt of a duplicate proven without a lock).
FINISH_DUPLICATE_MESSAGE = "step %s is already COMPLETED: nothing moved"


def finish_duplicate_before_lock(request: JobFinishRequest, *, workflow_id: int, step_id: int,
                                 receipt) -> CallbackResult | None:
    """The answer `finish_of_completed_step` would give a duplicate whose stage is already recorded
    (it changes nothing), read from one snapshot without a lock, its receipt written by the same
    statement (FINISH_DUPLICATE_ANSWER, in autocommit); None when that is not proven, and then
    nothing was written. The read is the callback's moment: a later pause or repair does not make
    it wrong, exactly as if the callback had taken the lock just before them. The receipt's
    `duration_ms` is taken when the statement is sent."""
    result = _finish_answer(request, workflow_id, step_id, 200, Outcome.DUPLICATE, FINISH_DUPLICATE_MESSAGE,
                            inventory_moved=False, event_recorded=False)
    params = receipt(result)
    ((_, rows),) = tx.run_pipelined([(wms_sql.FINISH_DUPLICATE_ANSWER, params)])
    if not rows or not rows[0][6]:
        return None
    result.message = FINISH_DUPLICATE_MESSAGE % rows[0][5]
    result.state = _state_from_rows(workflow_id, [row[:5] for row in rows])
    result.recorded = True
    log_callback_outcome(params)
    return result


def finish_under_lock(request: JobFinishRequest, *, workflow_id: int, step_id: int, status: str,
                      target: CallbackTarget, receipt=None) -> CallbackResult:
    """jobFinish under the workflow row lock: complete the move when the job is still active and
    the evidence is the consistent pre-move state, or advance an archived move whose finish is
    proven, exactly as recovery would; refuse (409, nothing changed) anything else.

    Accepted, the move (in its savepoint), the advancement and, given `receipt` (the receipt's
    parameters of a result), the receipt with the resulting state travel in one round trip
    (`tx.finish_step`). The receipt's message names the next job before the advancement ran:
    under the row lock the workflow's steps cannot change, and the advancement's own answer is
    checked against it (a difference raises StaleWrite: everything rolls back, no receipt lies)."""
    job_id = request.job_id

    def answer(code, outcome, message, **extra):
        return _finish_answer(request, workflow_id, step_id, code, outcome, message, **extra)

    if target.step_status == "COMPLETED":
        return finish_of_completed_step(request, workflow_id=workflow_id, step_id=step_id, status=status,
                                        target=target)
    if status != TidyWorkflow.Status.ACTIVE:
        return answer(409, Outcome.REFUSED_CONFLICT,
                      f"workflow {workflow_id} is {status}; step {target.step_no} is {target.step_status}")
    evidence = target.evidence or evidence_for_workflow_under_lock(workflow_id)
    if evidence.step is None or evidence.step.step_id != step_id:
        current = f"step {evidence.step.step_no}" if evidence.step else "none"
        return answer(409, Outcome.REFUSED_CONFLICT,
                      f"job {job_id} is for step {target.step_no}, but the first incomplete step is {current}")
    if evidence.step.status not in ("DISPATCHED", "PENDING"):
        return answer(409, Outcome.REFUSED_CONFLICT,
                      f"step {target.step_no} is {evidence.step.status}; only a DISPATCHED step can finish")
    decision = decide(evidence)
    if target.active_status is not None:
        if not consistent_move(decision, evidence):
            return answer(409, Outcome.REFUSED_CONFLICT, f"the move cannot be completed: {decision.explanation}",
                          reason=decision.reason.value if decision.reason else None, rule=decision.rule.value)
        moved = True
    else:
        # Archived but not advanced (the procedure ran before a crash): advance only when the
        # finish is locally proven, exactly as recovery would, without a second move.
        if decision.action is not Action.ADVANCE:
            return answer(409, Outcome.REFUSED_CONFLICT,
                          f"the job is archived but the finish is not proven: {decision.explanation}",
                          reason=decision.reason.value if decision.reason else None, rule=decision.rule.value)
        moved = False
    next_job_id = tidy_job_id(workflow_id, target.next_step_id) if target.next_step_id is not None else None
    message = (f"step {target.step_no} completed"
               + ("" if moved else " (the move was already archived; inventory not moved again)")
               + ("; workflow completed, locks released" if next_job_id is None
                  else f"; next job {next_job_id} created"))
    result = answer(200, Outcome.ACCEPTED, message, inventory_moved=moved, event_recorded=None,
                    next_job_id=next_job_id, workflow_completed=next_job_id is None)
    then, params = [], None
    if receipt is not None:
        params = receipt(result)
        then = [(wms_sql.INSERT_CALLBACK_RECEIPT_RETURNING_STATE, {**params, "workflow_id": workflow_id})]
    try:
        advanced, after = tx.finish_step(workflow_id=workflow_id, step=evidence.step, stage=request.stage,
                                         payload=_event_payload(request), move_job_id=job_id if moved else None,
                                         then=then)
    except tx.MoveRefused as exc:
        return answer(409, Outcome.REFUSED_CONFLICT, f"the move cannot be completed: {exc}")
    if advanced.next_job_id != next_job_id:
        raise tx.StaleWrite(f"advance workflow {workflow_id}: next job {advanced.next_job_id}, "
                            f"but the steps read under the lock named {next_job_id}")
    result.extra["event_recorded"] = advanced.event_recorded
    if params is not None:
        log_callback_outcome(params)
        result.state = _state_from_rows(workflow_id, after[0][1])
        result.recorded = True
    return result


def finish_report_mismatch(request: JobFinishRequest, *, workflow_id: int, step_id: int,
                           target: CallbackTarget) -> CallbackResult | None:
    """REPORT_MISMATCH (409, nothing moves) when the finish names another tray than the step's,
    or, for MOVE_FINISHED, another place than the step's target; None when what it reports agrees
    (or it reports neither). A location of another stage is recorded, not compared."""
    tray_differs = request.tray_code is not None and request.tray_code != target.step_tray_code
    compares_location = request.stage == "MOVE_FINISHED"
    location_differs = (compares_location and request.location is not None
                        and request.location != target.step_target_cargo_space_id)
    if not (tray_differs or location_differs):
        return None
    expected = {"tray_code": target.step_tray_code,
                "location": target.step_target_cargo_space_id if compares_location else None}
    reported = {"tray_code": request.tray_code, "location": request.location}
    differs = " and ".join(
        part for part, on in ((f"tray {request.tray_code} (expected {target.step_tray_code})", tray_differs),
                              (f"location {request.location} (expected {target.step_target_cargo_space_id})",
                               location_differs)) if on)
    return _finish_answer(request, workflow_id, step_id, 409, Outcome.REPORT_MISMATCH,
                          f"job {request.job_id} reported {differs}: nothing moved; find the tray on the floor",
                          expected=expected, reported=reported, inventory_moved=False)


def job_finish_process(*, request: JobFinishRequest) -> CallbackResult:
    # A finish that reports identity is compared under the lock, so it never takes the duplicate's
    # lock-free answer (which knows nothing of trays and places).
    reports_identity = request.tray_code is not None or request.location is not None
    return process_callback(endpoint=CallbackReceipt.Endpoint.JOB_FINISH, request=request,
                            under_lock=finish_under_lock,
                            before_lock=None if reports_identity else finish_duplicate_before_lock,
                            evidence_with_lock=True, receipt_with_effect=True,
                            report_check=finish_report_mismatch if reports_identity else None,
                            receipt_kw=request.receipt_kw())


# --- job status --------------------------------------------------------------------------------


def status_under_lock(request: JobStatusRequest, *, workflow_id: int, step_id: int, status: str,
                      target: CallbackTarget) -> CallbackResult:
    """A job status report under the workflow row lock: forward only (1 -> 2 -> 3), only for the
    workflow's current, consistent move of an ACTIVE workflow; anything else is refused (409)."""
    job_id, new = request.job_id, request.status

    def answer(code, outcome, message, **extra):
        return CallbackResult(code, outcome, message, job_id, workflow_id, step_id,
                              extra={"job_status": target.active_status, **extra})

    if request.sequence is not None:
        # Explicit order: the WCS's own sequence decides, not arrival (docs/architecture.md §8).
        highest = job_highest_sequence(job_id)
        if highest is not None and request.sequence <= highest:
            return answer(200, Outcome.STALE_REPORT,
                          f"job {job_id}: report {request.sequence} is not newer than report {highest}; "
                          "nothing changed", highest_sequence=highest)
    if target.active_status is None:
        # Not reached through job_status_process (the frame answers both first); kept so the
        # function alone never reopens a finished job.
        stale = status_of_finished_job(request, workflow_id=workflow_id, step_id=step_id, target=target)
        return stale or answer(404, Outcome.UNKNOWN_JOB,
                               f"unknown job {job_id}: no such job in mydo_job nor mydo_job_finish")
    if status != TidyWorkflow.Status.ACTIVE:
        return answer(409, Outcome.REFUSED_CONFLICT, f"workflow {workflow_id} is {status}")
    current = target.active_status
    if current not in ACTIVE_JOB_STATUSES:
        return answer(409, Outcome.REFUSED_CONFLICT, f"job {job_id} has status {current}, not an active status")
    if new == current:
        return answer(200, Outcome.DUPLICATE, f"job {job_id} is already {REPORTABLE_JOB_STATUSES[new]}")
    if new < current:
        return answer(409, Outcome.REFUSED_CONFLICT,
                      f"job {job_id} is {current} ({REPORTABLE_JOB_STATUSES.get(current, 'created')}); "
                      f"an older report ({new}) never moves it backwards")
    evidence = evidence_for_workflow_under_lock(workflow_id)
    decision = decide(evidence)
    if evidence.step is None or evidence.step.step_id != step_id or not consistent_move(decision, evidence):
        return answer(409, Outcome.REFUSED_CONFLICT,
                      f"job {job_id} is not the workflow's current, consistent move: {decision.explanation}",
                      reason=decision.reason.value if decision.reason else None, rule=decision.rule.value)
    tx.set_job_status(job_id=job_id, status=new, expected_status=current)
    return CallbackResult(200, Outcome.ACCEPTED, f"job {job_id}: {current} -> {new} ({REPORTABLE_JOB_STATUSES[new]})",
                          job_id, workflow_id, step_id, extra={"job_status": new, "previous_status": current})


# A status report about a job already archived in mydo_job_finish: the finish is newer than anything
# the report can say, so, like a report with an old sequence, it is stale (design §11), whatever
# the workflow's state; nothing changes and WCS and WMS do not disagree.
STATUS_OF_FINISHED_JOB_MESSAGE = "job %s is finished (archived): a status report about it is stale; nothing changed"


def status_of_finished_job(request: JobStatusRequest, *, workflow_id: int, step_id: int,
                           target: CallbackTarget) -> CallbackResult | None:
    """200 STALE_REPORT for a status report about a job that is already finished (archived, no
    longer active), read under the row lock before the workflow's state is considered (a paused
    workflow's finished job too: the report is late, not evidence of a disagreement); None for a
    job still active."""
    if target.active_status is not None or target.finish_count == 0:
        return None
    return CallbackResult(200, Outcome.STALE_REPORT, STATUS_OF_FINISHED_JOB_MESSAGE % request.job_id,
                          request.job_id, workflow_id, step_id, extra={"job_status": None})


def status_duplicate_before_lock(request: JobStatusRequest, *, workflow_id: int, step_id: int,
                                 receipt) -> CallbackResult | None:
    """The DUPLICATE `status_under_lock` would answer a report of the status the job already has
    (an ACTIVE workflow, the step its own, the active job at that status: nothing changes),
    answered and recorded by one statement without a lock (STATUS_DUPLICATE_ANSWER, in
    autocommit); None when that is not proven, and then nothing was written. As for a jobFinish
    duplicate, the read is the callback's moment."""
    job_id, new = request.job_id, request.status
    result = CallbackResult(200, Outcome.DUPLICATE, f"job {job_id} is already {REPORTABLE_JOB_STATUSES[new]}",
                            job_id, workflow_id, step_id, extra={"job_status": new})
    params = receipt(result)
    ((_, rows),) = tx.run_pipelined([(wms_sql.STATUS_DUPLICATE_ANSWER, params)])
    if not rows or not rows[0][6]:
        return None
    result.state = _state_from_rows(workflow_id, [row[:5] for row in rows])
    result.recorded = True
    log_callback_outcome(params)
    return result


def job_highest_sequence(job_id: str) -> int | None:
    """The highest sequence recorded for the job's reports (either endpoint); None when none carried one."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.JOB_HIGHEST_SEQUENCE, {"job_id": job_id})
        return cursor.fetchone()[0]


def job_status_process(*, request: JobStatusRequest) -> CallbackResult:
    # A report with a sequence is judged against the job's highest under the lock (a stale one is
    # STALE_REPORT even when its status is the job's), never by the duplicate's lock-free answer.
    # A report about a finished job is stale whatever the workflow's state: it is answered before
    # the paused workflow's refusal (status_of_finished_job).
    return process_callback(endpoint=CallbackReceipt.Endpoint.JOB_STATUS, request=request,
                            under_lock=status_under_lock, report_check=status_of_finished_job,
                            before_lock=status_duplicate_before_lock if request.sequence is None else None,
                            receipt_kw=request.receipt_kw())
