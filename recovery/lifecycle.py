"""The normal tidy lifecycle beside recovery: creation, WCS job status and the jobFinish callback.

Services (plain functions, keyword-only arguments):
- `create_tidy_workflow`: a workflow with its ordered steps, every space lock it needs and
  the first step's job TDY-<workflowId>-<stepId> (in_or_out 28, status 1, step DISPATCHED),
  all in one transaction; MANUAL creation first checks live vehicle availability with WCS.
- `job_finish_process`: the transactional jobFinish callback (design §5). One transaction:
  lock the workflow row first, re-read the evidence under it, run alg.usp_complete_move_job
  when the job is still active, then the same idempotent advancement recovery uses.
- `job_status_process`: WCS reports a job dispatched (2) or executing (3); forward only.

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

from recovery import transaction as tx
from recovery import wms_sql
from recovery.decisions import Action, Rule, decide
from recovery.evidence import ACTIVE_JOB_STATUSES, evidence_for_workflow_under_lock
from recovery.models import CallbackReceipt, TidyWorkflow, tidy_job_id
from recovery.oplog import log_callback_outcome
from recovery.prepared import run_prepared
from recovery.wcs import WcsSnapshotError, WcsVehicleSnapshotClient

log = logging.getLogger(__name__)

FINISH_STAGES = ("MOVE_FINISHED", "OUTBOUND_FINISHED")
REPORTABLE_JOB_STATUSES = {2: "dispatched", 3: "executing"}
JOB_ID_RE = re.compile(r"^TDY-([1-9][0-9]{0,17})-([1-9][0-9]{0,17})$")
MAX_TEXT = 200
DEFAULT_LOCK_TIMEOUT_MS = 5000


# --- errors ----------------------------------------------------------------------------------


class LifecycleError(Exception):
    """Base of this module's refusals; the interface layer turns them into answers."""


class BadCallback(LifecycleError):
    """A malformed callback request (400), naming the field at fault."""

    def __init__(self, field_name: str | None, message: str, *, payload: Any = None):
        super().__init__(message)
        self.field = field_name
        self.message = message
        self.payload = payload


class CreationRefused(LifecycleError):
    """Tidy creation refused: nothing was created."""


class InvalidMoves(CreationRefused):
    pass


class SpaceLocked(CreationRefused):
    def __init__(self, holders: list[tx.SpaceHolder]):
        self.holders = holders
        parts = [f"space {h.cargo_space_id} is locked by workflow {h.workflow_id}" if h.workflow_id
                 else f"space {h.cargo_space_id} was locked by another workflow" for h in holders]
        super().__init__("; ".join(parts) + " — nothing was created")


class NoVehicleAvailable(CreationRefused):
    pass


class WcsUnavailable(CreationRefused):
    pass


# --- parsing the WCS requests ----------------------------------------------------------------


@dataclass(frozen=True)
class JobFinishRequest:
    job_id: str
    stage: str
    event_id: str | None
    payload: dict


@dataclass(frozen=True)
class JobStatusRequest:
    job_id: str
    status: int
    event_id: str | None
    payload: dict


def _decode(body: bytes) -> dict:
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadCallback(None, "the body is not UTF-8 text", payload={"raw": body[:500].hex()}) from exc
    except json.JSONDecodeError as exc:
        raise BadCallback(None, f"the body is not valid JSON ({exc.msg} at position {exc.pos})",
                          payload={"raw": body[:2000].decode("utf-8", "replace")}) from exc
    if not isinstance(data, dict):
        raise BadCallback(None, "the body must be a JSON object", payload={"raw": data})
    return data


def _text_field(data: dict, name: str, *, required: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise BadCallback(name, f"missing field '{name}'", payload=data)
        return None
    if isinstance(value, int) and not isinstance(value, bool) and name == "event_id":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise BadCallback(name, f"field '{name}' must be a non-empty string", payload=data)
    if len(value) > MAX_TEXT:
        raise BadCallback(name, f"field '{name}' is longer than {MAX_TEXT} characters", payload=data)
    return value


def parse_job_finish(body: bytes) -> JobFinishRequest:
    data = _decode(body)
    job_id = _text_field(data, "job_id", required=True)
    stage = _text_field(data, "stage", required=True)
    if stage not in FINISH_STAGES:
        raise BadCallback("stage", f"unknown stage {stage!r}: expected one of {', '.join(FINISH_STAGES)}",
                          payload=data)
    event_id = _text_field(data, "event_id", required=False)
    return JobFinishRequest(job_id, stage, event_id, data)


def parse_job_status(body: bytes) -> JobStatusRequest:
    data = _decode(body)
    job_id = _text_field(data, "job_id", required=True)
    if "status" not in data or data["status"] is None:
        raise BadCallback("status", "missing field 'status'", payload=data)
    status = data["status"]
    if isinstance(status, bool) or not isinstance(status, int) or status not in REPORTABLE_JOB_STATUSES:
        raise BadCallback("status", f"field 'status' must be 2 (dispatched) or 3 (executing), got {status!r}",
                          payload=data)
    event_id = _text_field(data, "event_id", required=False)
    return JobStatusRequest(job_id, status, event_id, data)


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


def _receipt_params(*, endpoint: str, result: CallbackResult, payload: Any, started: float, stage: str,
                    job_status: int | None, event_id: str | None) -> dict:
    return {
        "endpoint": endpoint, "job_id": result.job_id[:MAX_TEXT], "workflow_id": result.workflow_id,
        "step_id": result.step_id, "stage": stage, "job_status": job_status,
        "wcs_event_id": (event_id or "")[:MAX_TEXT], "http_status": result.http_status,
        "outcome": str(result.outcome), "message": result.message,
        "payload": json.dumps(payload) if payload is not None else None,
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
    }


def callback_receipt_record(*, endpoint: str, result: CallbackResult, payload: Any, started: float,
                            stage: str = "", job_status: int | None = None, event_id: str | None = None) -> None:
    """Write the CallbackReceipt of one request (in the caller's transaction, if any)."""
    params = _receipt_params(endpoint=endpoint, result=result, payload=payload, started=started, stage=stage,
                             job_status=job_status, event_id=event_id)
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.INSERT_CALLBACK_RECEIPT, params)
    log_callback_outcome(params)


def _record_with_state(*, workflow_id: int, endpoint: str, result: CallbackResult, payload: Any, started: float,
                       stage: str = "", job_status: int | None = None, event_id: str | None = None) -> dict | None:
    """Write the receipt and read the workflow's resulting state in one statement."""
    params = _receipt_params(endpoint=endpoint, result=result, payload=payload, started=started, stage=stage,
                             job_status=job_status, event_id=event_id)
    _, rows = run_prepared(wms_sql.INSERT_CALLBACK_RECEIPT_RETURNING_STATE, {**params, "workflow_id": workflow_id})
    log_callback_outcome(params)
    return _state_from_rows(workflow_id, rows)


def bad_callback_record(*, endpoint: str, error: BadCallback, started: float) -> CallbackResult:
    """Record a malformed request (400) as a receipt; it touches no WMS row."""
    payload = error.payload if isinstance(error.payload, dict) else {"raw": error.payload}
    job_id = payload.get("job_id") if isinstance(payload.get("job_id"), str) else ""
    ids = split_job_id(job_id) if job_id else None
    result = CallbackResult(400, Outcome.BAD_REQUEST, error.message, job_id,
                            workflow_id=ids[0] if ids else None, step_id=ids[1] if ids else None,
                            extra={"field": error.field})
    stage = payload.get("stage") if isinstance(payload.get("stage"), str) else ""
    callback_receipt_record(endpoint=endpoint, result=result, payload=_jsonable(payload), started=started,
                            stage=stage[:64])
    return result


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return {"raw": repr(value)[:2000]}


@dataclass(frozen=True)
class _Target:
    step_id: int | None
    step_no: int | None
    step_status: str | None
    active_status: int | None
    finish_count: int

    @property
    def job_exists(self) -> bool:
        return self.active_status is not None or self.finish_count > 0


# --- prepared statements on the callback's hot path --------------------------------------------


def _read_target(workflow_id: int, step_id: int, job_id: str) -> _Target:
    _, rows = run_prepared(wms_sql.CALLBACK_TARGET, {"workflow_id": workflow_id, "step_id": step_id, "job_id": job_id})
    return _Target(*rows[0])


def _lock_timeout_ms() -> int:
    return int(getattr(settings, "WCS_CALLBACK_LOCK_TIMEOUT_MS", DEFAULT_LOCK_TIMEOUT_MS))


def _process(*, endpoint: str, job_id: str, payload: dict, locked_step, receipt_kw: dict) -> CallbackResult:
    """The shared frame of both callbacks: parse the id, lock the workflow row first (with a
    lock timeout), read what the job names, hand over to `locked_step`, record the receipt."""
    started = time.perf_counter()
    ids = split_job_id(job_id)
    if ids is None:
        result = CallbackResult(404, Outcome.UNKNOWN_JOB,
                                f"unknown job {job_id!r}: not a tidy job id (TDY-<workflowId>-<stepId>)", job_id)
        callback_receipt_record(endpoint=endpoint, result=result, payload=payload, started=started, **receipt_kw)
        return result
    workflow_id, step_id = ids
    try:
        with transaction.atomic():
            # Uncontended (the usual case) the row is ours at once; otherwise wait, but only
            # as long as lock_timeout allows, so a callback never hangs forever.
            status = tx.lock_workflow(workflow_id, skip_locked=True)
            if status is None:
                tx.set_lock_timeout(_lock_timeout_ms())
                status = tx.lock_workflow(workflow_id, skip_locked=False)
            target = _read_target(workflow_id, step_id, job_id) if status is not None else None
            if status is None or target.step_id is None:
                result = CallbackResult(404, Outcome.UNKNOWN_JOB,
                                        f"unknown job {job_id}: no such workflow step", job_id)
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
                result = locked_step(workflow_id=workflow_id, step_id=step_id, status=status, target=target)
            if result.http_status == 404:
                callback_receipt_record(endpoint=endpoint, result=result, payload=payload, started=started,
                                        **receipt_kw)
            else:
                result.state = _record_with_state(workflow_id=workflow_id, endpoint=endpoint, result=result,
                                                  payload=payload, started=started, **receipt_kw)
            return result
    except (DatabaseError, tx.StaleWrite) as exc:
        # Never evidence: everything rolled back; WCS retries. 55P03 = lock_timeout expired.
        cause = getattr(exc, "__cause__", None)
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


def job_finish_process(*, request: JobFinishRequest) -> CallbackResult:
    job_id, stage = request.job_id, request.stage
    event_payload = {"source": "wcs", "event_id": request.event_id}

    def locked_step(*, workflow_id: int, step_id: int, status: str, target: _Target) -> CallbackResult:
        def result(code, outcome, message, **extra):
            return CallbackResult(code, outcome, message, job_id, workflow_id, step_id, extra=extra)

        if target.step_status == "COMPLETED":
            if status not in (TidyWorkflow.Status.ACTIVE, TidyWorkflow.Status.COMPLETED):
                return result(409, Outcome.REFUSED_CONFLICT, f"workflow {workflow_id} is {status}")
            recorded = tx.record_callback_event(workflow_id=workflow_id, step_id=step_id, job_id=job_id,
                                                stage=stage, payload=event_payload)
            return result(200, Outcome.DUPLICATE,
                          f"step {target.step_no} is already COMPLETED: nothing moved"
                          + (f"; stage {stage} recorded" if recorded else ""),
                          inventory_moved=False, event_recorded=recorded)
        if status != TidyWorkflow.Status.ACTIVE:
            return result(409, Outcome.REFUSED_CONFLICT,
                          f"workflow {workflow_id} is {status}; step {target.step_no} is {target.step_status}")
        evidence = evidence_for_workflow_under_lock(workflow_id)
        if evidence.step is None or evidence.step.step_id != step_id:
            current = f"step {evidence.step.step_no}" if evidence.step else "none"
            return result(409, Outcome.REFUSED_CONFLICT,
                          f"job {job_id} is for step {target.step_no}, but the first incomplete step is {current}")
        if evidence.step.status not in ("DISPATCHED", "PENDING"):
            return result(409, Outcome.REFUSED_CONFLICT,
                          f"step {target.step_no} is {evidence.step.status}; only a DISPATCHED step can finish")
        decision = decide(evidence)
        if target.active_status is not None:
            if decision.rule is not Rule.ACTIVE_JOB_PRE_MOVE:
                return result(409, Outcome.REFUSED_CONFLICT,
                              f"the move cannot be completed: {decision.explanation}",
                              reason=decision.reason.value if decision.reason else None, rule=decision.rule.value)
            try:
                tx.complete_move_job(job_id)
            except tx.MoveRefused as exc:
                return result(409, Outcome.REFUSED_CONFLICT, f"the move cannot be completed: {exc}")
            moved = True
        else:
            # Archived but not advanced (the procedure ran before a crash): advance only when the
            # finish is locally proven, exactly as recovery would, without a second move.
            if decision.action is not Action.ADVANCE:
                return result(409, Outcome.REFUSED_CONFLICT,
                              f"the job is archived but the finish is not proven: {decision.explanation}",
                              reason=decision.reason.value if decision.reason else None, rule=decision.rule.value)
            moved = False
        advanced = tx.advance_step(workflow_id=workflow_id, step=evidence.step, stage=stage, payload=event_payload)
        message = (f"step {target.step_no} completed"
                   + ("" if moved else " (the move was already archived; inventory not moved again)")
                   + ("; workflow completed, locks released" if advanced.workflow_completed
                      else f"; next job {advanced.next_job_id} created"))
        return result(200, Outcome.ACCEPTED, message, inventory_moved=moved,
                      event_recorded=advanced.event_recorded, next_job_id=advanced.next_job_id,
                      workflow_completed=advanced.workflow_completed)

    return _process(endpoint=CallbackReceipt.Endpoint.JOB_FINISH, job_id=job_id, payload=request.payload,
                    locked_step=locked_step,
                    receipt_kw={"stage": stage, "event_id": request.event_id})


# --- job status --------------------------------------------------------------------------------


def job_status_process(*, request: JobStatusRequest) -> CallbackResult:
    job_id, new = request.job_id, request.status

    def locked_step(*, workflow_id: int, step_id: int, status: str, target: _Target) -> CallbackResult:
        def result(code, outcome, message, **extra):
            return CallbackResult(code, outcome, message, job_id, workflow_id, step_id,
                                  extra={"job_status": target.active_status, **extra})

        if target.active_status is None:
            return result(409, Outcome.REFUSED_CONFLICT,
                          f"job {job_id} is finished (archived): a status report cannot reopen it")
        if status != TidyWorkflow.Status.ACTIVE:
            return result(409, Outcome.REFUSED_CONFLICT, f"workflow {workflow_id} is {status}")
        current = target.active_status
        if current not in ACTIVE_JOB_STATUSES:
            return result(409, Outcome.REFUSED_CONFLICT, f"job {job_id} has status {current}, not an active status")
        if new == current:
            return result(200, Outcome.DUPLICATE, f"job {job_id} is already {REPORTABLE_JOB_STATUSES[new]}")
        if new < current:
            return result(409, Outcome.REFUSED_CONFLICT,
                          f"job {job_id} is {current} ({REPORTABLE_JOB_STATUSES.get(current, 'created')}); "
                          f"an older report ({new}) never moves it backwards")
        evidence = evidence_for_workflow_under_lock(workflow_id)
        decision = decide(evidence)
        if evidence.step is None or evidence.step.step_id != step_id or decision.rule is not Rule.ACTIVE_JOB_PRE_MOVE:
            return result(409, Outcome.REFUSED_CONFLICT,
                          f"job {job_id} is not the workflow's current, consistent move: {decision.explanation}",
                          reason=decision.reason.value if decision.reason else None, rule=decision.rule.value)
        tx.set_job_status(job_id=job_id, status=new, expected_status=current)
        return CallbackResult(200, Outcome.ACCEPTED,
                              f"job {job_id}: {current} -> {new} ({REPORTABLE_JOB_STATUSES[new]})",
                              job_id, workflow_id, step_id, extra={"job_status": new, "previous_status": current})

    return _process(endpoint=CallbackReceipt.Endpoint.JOB_STATUS, job_id=job_id, payload=request.payload,
                    locked_step=locked_step,
                    receipt_kw={"job_status": new, "event_id": request.event_id})


# --- tidy creation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TidyMove:
    tray_code: str
    source: str
    target: str


@dataclass(frozen=True)
class TidyCreation:
    workflow_id: int
    origin: str
    step_ids: tuple[int, ...]
    first_job_id: str
    locked_spaces: tuple[str, ...]
    vehicles_available: int | None = None  # MANUAL only: free vehicles in the snapshot


def _clean_moves(moves) -> list[TidyMove]:
    out = []
    if not moves:
        raise InvalidMoves("a tidy workflow needs at least one move")
    for n, mv in enumerate(moves, start=1):
        mv = mv if isinstance(mv, TidyMove) else TidyMove(*mv)
        for name in ("tray_code", "source", "target"):
            value = getattr(mv, name)
            if not isinstance(value, str) or not value.strip() or value != value.strip():
                raise InvalidMoves(f"move {n}: {name} must be a non-empty code without surrounding spaces")
        if mv.source == mv.target:
            raise InvalidMoves(f"move {n}: source and target are the same space {mv.source}")
        out.append(mv)
    return out


def _check_against_wms(moves: list[TidyMove]) -> None:
    """Play the moves over the current spaces and stock (read under our space locks): each move's
    source must hold its tray with all its stock there, and its target must exist and be empty."""
    spaces = sorted({s for mv in moves for s in (mv.source, mv.target)})
    trays = sorted({mv.tray_code for mv in moves})
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.CARGO_SPACES, {"spaces": spaces})
        holds = dict(cursor.fetchall())
        cursor.execute(wms_sql.TRAY_STOCK, {"trays": trays})
        stock = {tray: (rows, locations) for tray, rows, locations in cursor.fetchall()}
    tray_at = {}
    for n, mv in enumerate(moves, start=1):
        for space in (mv.source, mv.target):
            if space not in holds:
                raise InvalidMoves(f"move {n}: unknown cargo space {space}")
        if mv.tray_code not in tray_at:
            rows, locations = stock.get(mv.tray_code, (0, []))
            if rows == 0:
                raise InvalidMoves(f"move {n}: tray {mv.tray_code} has no stock rows")
            if list(locations) != [mv.source]:
                raise InvalidMoves(f"move {n}: tray {mv.tray_code}'s stock is at {', '.join(locations)}, "
                                   f"not all at {mv.source}")
        if holds[mv.source] != mv.tray_code:
            raise InvalidMoves(f"move {n}: space {mv.source} holds {holds[mv.source] or 'no tray'}, "
                               f"not tray {mv.tray_code}")
        if holds[mv.target] is not None:
            raise InvalidMoves(f"move {n}: target space {mv.target} is not empty (holds {holds[mv.target]})")
        holds[mv.source], holds[mv.target] = None, mv.tray_code
        tray_at[mv.tray_code] = mv.target


def create_tidy_workflow(*, origin: str, moves, snapshot_client: WcsVehicleSnapshotClient | None = None
                         ) -> TidyCreation:
    """Create an ACTIVE workflow with one step per move, lock every space it touches and create
    step 1's job, in one transaction; refuse the whole creation (nothing created) when a space is
    locked by another workflow, a move does not fit the WMS state, or (MANUAL) no vehicle is free."""
    if origin not in TidyWorkflow.Origin.values:
        raise InvalidMoves(f"origin must be one of {', '.join(TidyWorkflow.Origin.values)}, got {origin!r}")
    moves = _clean_moves(moves)
    vehicles_available = None
    if origin == TidyWorkflow.Origin.MANUAL:
        # Outside the database transaction: never hold locks while waiting on WCS.
        client = snapshot_client or WcsVehicleSnapshotClient.from_settings()
        try:
            snapshot = client.fetch()
        except WcsSnapshotError as exc:
            raise WcsUnavailable(f"manual tidy refused: {exc}; nothing was created") from exc
        vehicles_available = len(snapshot.available)
        if not vehicles_available:
            raise NoVehicleAvailable(
                f"manual tidy refused: no vehicle is free ({len(snapshot.vehicles)} in the WCS snapshot, "
                "none available); nothing was created")
    spaces = sorted({s for mv in moves for s in (mv.source, mv.target)})
    with transaction.atomic():
        workflow_id = tx.insert_workflow(origin=origin)
        holders = tx.lock_spaces(workflow_id=workflow_id, spaces=spaces)
        if holders:
            raise SpaceLocked(holders)
        _check_against_wms(moves)
        step_ids = tuple(
            tx.insert_step(workflow_id=workflow_id, step_no=no, tray_code=mv.tray_code, cargo_space_id=mv.source,
                           target_cargo_space_id=mv.target)
            for no, mv in enumerate(moves, start=1))
        first = moves[0]
        job_id = tx.create_step_job(workflow_id=workflow_id, step_id=step_ids[0], tray_code=first.tray_code,
                                    cargo_space_id=first.source, target_cargo_space_id=first.target)
    log.info("tidy workflow %s (%s) created: %d step(s), job %s", workflow_id, origin, len(step_ids), job_id)
    return TidyCreation(workflow_id, origin, step_ids, job_id, tuple(spaces), vehicles_available)


# --- reads for the console ----------------------------------------------------------------------


def callback_receipts_for_workflow(*, workflow_id: int, limit: int = 100) -> list[CallbackReceipt]:
    """The callbacks received for a workflow, newest first, refused ones included (evidence for
    the supervisor: what WCS reported while the workflow was paused). Index callback_receipt_wf_idx."""
    return list(CallbackReceipt.objects.filter(workflow_id=workflow_id).order_by("-received_at", "-id")[:limit])
