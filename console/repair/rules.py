"""What a repair may do: who may take which action, the preconditions on the evidence, and the
checks of the written reason, the reason code and the scanned codes.

Pure on a RepairContext (no reads, no writes), so the panel's offers, the preview and the
apply-once frame ask the very same questions. A failed check raises RepairRefused; the frame
audits it.
"""

from dataclasses import dataclass

from console import roles
from console.models import RepairAction
from console.repair import codes
from console.repair import texts as t
from console.repair.texts import english
from recovery.decisions import Action, decide_as_if_active
from recovery.errors import Refused
from recovery.transaction import repair as m

REASON_MIN_LENGTH = 15
REASON_MAX_LENGTH = 2000
PAUSED = "PAUSED_RECOVERY"

# The actions the workflow's panel offers; approve and reject are taken on the proposal page.
OFFERED = (RepairAction.RECHECK, RepairAction.REISSUE, RepairAction.RECONCILE_SOURCE,
           RepairAction.RECONCILE_TARGET, RepairAction.CANCEL_PROPOSE)
RECONCILE = (RepairAction.RECONCILE_SOURCE, RepairAction.RECONCILE_TARGET)
CANCEL = (RepairAction.CANCEL_PROPOSE, RepairAction.CANCEL_APPROVE, RepairAction.CANCEL_REJECT)


class Refusal:
    """Refusal codes, as stored in RepairAudit.outcome (REFUSED:<code>)."""

    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    STALE_EVIDENCE = "STALE_EVIDENCE"
    PRECONDITION = "PRECONDITION"
    REASON_MISSING = "REASON_MISSING"
    REASON_TOO_SHORT = "REASON_TOO_SHORT"
    REASON_CODE_NOT_ALLOWED = "REASON_CODE_NOT_ALLOWED"
    CODES_DO_NOT_MATCH = "CODES_DO_NOT_MATCH"
    BAD_REQUEST = "BAD_REQUEST"
    SELF_APPROVAL = "SELF_APPROVAL"
    PROPOSAL_CLOSED = "PROPOSAL_CLOSED"
    PROPOSAL_PENDING = "PROPOSAL_PENDING"
    STALE_WRITE = "STALE_WRITE"
    FLOOR_CONFIRMATION_REQUIRED = "FLOOR_CONFIRMATION_REQUIRED"  # cancel while a vehicle may move the tray
    BUSY = "BUSY"  # the workflow row stayed locked longer than the lock timeout


class RepairRefused(Refused):
    """A refused attempt; `audit` is its (committed) audit row, `evidence` the evidence then."""

    def __init__(self, code: str, message: str, *, field_errors: dict | None = None):
        """`message` (and the field errors) in English, as the audit stores it: one of the
        sentences of console.repair.texts, which `shown_message` reads in the reader's language."""
        super().__init__(message)
        self.code = code
        self.message = message
        self.field_errors = field_errors or {}
        self.audit = None
        self.evidence = None

    @property
    def shown_message(self):
        return t.shown(self.message)

    @property
    def http_status(self) -> int:
        if self.code == Refusal.BUSY:
            return 503
        return 403 if self.code in (Refusal.FORBIDDEN, Refusal.SELF_APPROVAL) else 409


@dataclass(frozen=True)
class RepairRequest:
    action: str
    workflow_id: int
    reason_code: str = ""
    reason_text: str = ""
    tray_code: str = ""
    space_code: str = ""

    def inputs(self) -> dict:
        if self.action in RECONCILE or (self.action == RepairAction.CANCEL_PROPOSE
                                        and (self.tray_code or self.space_code)):
            return {"tray_code": self.tray_code, "space_code": self.space_code}
        return {}


def permitted(user, action: str) -> bool:
    return roles.can_cancel(user) if action in CANCEL else roles.can_repair(user)


def precondition_failures(ctx: m.RepairContext, action: str) -> list[str]:
    """Why `action` does not hold on this evidence (empty: it holds)."""
    ev = ctx.evidence
    if ev.workflow_status != PAUSED:
        return [english(t.NOT_PAUSED, wf_status=ev.workflow_status)]
    if action == RepairAction.RECHECK:
        decision = decide_as_if_active(ev)
        if decision.action is Action.PAUSE:
            return [english(t.STILL_PAUSES, reason=decision.reason.value, explanation=decision.explanation)]
        return []
    if action in CANCEL:
        return []
    if action == RepairAction.REISSUE:
        return _reissue_failures(ctx)
    return _reconcile_failures(ctx, action)


def _reissue_failures(ctx: m.RepairContext) -> list[str]:
    ev = ctx.evidence
    if ev.step is None:
        return [t.NO_STEP_TO_ISSUE]
    why = []
    if ev.active_job is not None:
        why.append(english(t.JOB_NOT_MISSING, job_id=ev.expected_job_id, job_status=ev.active_job.status))
    if ev.finish_job is not None or ctx.subject_finish_rows:
        why.append(english(t.JOB_HAS_FINISH, job_id=ev.expected_job_id))
    if not ev.pre_move_state:
        why.append(t.NOT_PRE_MOVE)
    return why


def _reconcile_failures(ctx: m.RepairContext, action: str) -> list[str]:
    ev, step = ctx.evidence, ctx.subject
    if step is None:
        if ev.step is None:
            return [english(t.LEFTOVER_JOBS, count=len(ctx.active_jobs))]
        return [t.NO_STEP_TO_RECONCILE]
    why = []
    to_source = action == RepairAction.RECONCILE_SOURCE
    space = step.cargo_space_id if to_source else step.target_cargo_space_id
    if not ctx.stock_spaces:
        why.append(english(t.NO_STOCK, tray=step.tray_code))
    if not ctx.space_exists(space):
        why.append(english(t.SOURCE_MISSING if to_source else t.TARGET_MISSING, space=space))
    elif ctx.spaces.get(space) not in (None, step.tray_code):
        why.append(english(t.SOURCE_TAKEN if to_source else t.TARGET_TAKEN, space=space, other=ctx.spaces[space]))
    if to_source:
        if ev.step is None:
            why.append(t.NO_RESUME_AT_SOURCE)
        if ctx.subject_finish_rows:
            why.append(english(t.JOB_ARCHIVED, job_id=m.tidy_job_id(ctx.workflow_id, step.step_id)))
        if ctx.subject_job is not None and not step.matches(ctx.workflow_id, ctx.subject_job):
            job = ctx.subject_job
            why.append(english(t.OTHER_MOVE, job_id=job.job_id, tray=job.tray_code, source=job.cargo_space_id,
                               target=job.target_cargo_space_id))
    return why


def check_preconditions(ctx: m.RepairContext, action: str) -> None:
    why = precondition_failures(ctx, action)
    if why:
        raise RepairRefused(Refusal.PRECONDITION, " ".join(why))


def check_text(request: RepairRequest) -> None:
    """A written reason of REASON_MIN_LENGTH to REASON_MAX_LENGTH characters."""
    text = request.reason_text.strip()
    if not text:
        msg = t.REASON_MISSING
        raise RepairRefused(Refusal.REASON_MISSING, msg, field_errors={"reason_text": msg})
    if len(text) < REASON_MIN_LENGTH:
        msg = english(t.REASON_TOO_SHORT, min=REASON_MIN_LENGTH)
        raise RepairRefused(Refusal.REASON_TOO_SHORT, msg, field_errors={"reason_text": msg})
    if len(text) > REASON_MAX_LENGTH:
        msg = english(t.REASON_TOO_LONG, max=REASON_MAX_LENGTH)
        raise RepairRefused(Refusal.BAD_REQUEST, msg, field_errors={"reason_text": msg})


def check_reason_code(request: RepairRequest, pause_reason: str | None) -> None:
    """Only a code the form offers for this action and pause reason (codes.codes_for)."""
    allowed = {c.code for c in codes.codes_for(request.action, pause_reason)}
    if request.reason_code and request.reason_code in allowed:
        return
    msg = english(t.CODE_NOT_ALLOWED, code=request.reason_code or t.NONE, reason=pause_reason or t.NONE)
    raise RepairRefused(Refusal.REASON_CODE_NOT_ALLOWED, msg, field_errors={"reason_code": msg})


# --- the floor confirmation of a cancel --------------------------------------------------------

MOVING_JOB_STATUSES = (2, 3)  # dispatched, executing: a vehicle may be carrying the tray


def moving_jobs(ctx: m.RepairContext) -> list:
    return [j for j in ctx.active_jobs if j.status in MOVING_JOB_STATUSES]


def needs_floor_confirmation(ctx: m.RepairContext) -> bool:
    """Cancel-and-release frees the workflow's spaces; while a job is dispatched or executing the
    tray may be on a vehicle, so the records must first say where it was found standing."""
    return bool(moving_jobs(ctx))


def floor_space(ctx: m.RepairContext, space_code: str | None) -> str | None:
    """The space a cancel corrects the records to: the confirmed space when one is needed."""
    if not needs_floor_confirmation(ctx):
        return None
    return (space_code or "").strip() or None


def check_floor_confirmation(ctx: m.RepairContext, tray_code: str | None, space_code: str | None) -> None:
    """While a job is status 2 or 3, a cancel needs the tray code (the step's tray) and the space
    where it stands (an existing space recording no other tray). Nothing is needed otherwise."""
    moving = moving_jobs(ctx)
    if not moving:
        return
    jobs = ", ".join(f"{j.job_id} (status {j.status})" for j in moving)
    if ctx.subject is None:
        raise RepairRefused(Refusal.PRECONDITION, english(t.MOVING_NO_STEP, jobs=jobs))
    tray, space = (tray_code or "").strip(), (space_code or "").strip()
    if not tray or not space:
        errors = {}
        if not tray:
            errors["tray_code"] = t.SCAN_TRAY
        if not space:
            errors["space_code"] = t.SCAN_SPACE
        raise RepairRefused(
            Refusal.FLOOR_CONFIRMATION_REQUIRED,
            english(t.FLOOR_REQUIRED, jobs=jobs, tray=ctx.subject.tray_code), field_errors=errors)
    errors = {}
    if tray != ctx.subject.tray_code:
        errors["tray_code"] = english(t.FLOOR_WRONG_TRAY, tray=tray, expected=ctx.subject.tray_code)
    if not ctx.space_exists(space):
        errors["space_code"] = english(t.FLOOR_NO_SPACE, space=space)
    elif ctx.spaces.get(space) not in (None, ctx.subject.tray_code):
        errors["space_code"] = english(t.FLOOR_SPACE_TAKEN, space=space, other=ctx.spaces[space])
    if errors:
        raise RepairRefused(Refusal.CODES_DO_NOT_MATCH,
                            english(t.FLOOR_MISFIT, details=" ".join(errors.values())),
                            field_errors=errors)


def check_scanned_codes(request: RepairRequest, ctx: m.RepairContext) -> None:
    """Reconcile: the scanned tray and space must equal the step's tray and stated location.
    Cancel: the floor confirmation, when a vehicle may be moving the tray."""
    if request.action == RepairAction.CANCEL_PROPOSE:
        check_floor_confirmation(ctx, request.tray_code, request.space_code)
        return
    if request.action not in RECONCILE or ctx.subject is None:
        return
    step = ctx.subject
    to_source = request.action == RepairAction.RECONCILE_SOURCE
    errors = {}
    tray, space = request.tray_code.strip(), request.space_code.strip()
    if tray != step.tray_code:
        errors["tray_code"] = english(t.WRONG_TRAY, tray=tray or t.EMPTY)
    expected = step.cargo_space_id if to_source else step.target_cargo_space_id
    other = step.target_cargo_space_id if to_source else step.cargo_space_id
    if space != expected:
        hint = " " + t.OTHER_END if space == other else ""
        errors["space_code"] = english(t.WRONG_SOURCE if to_source else t.WRONG_TARGET, space=space or t.EMPTY) + hint
    if errors:
        raise RepairRefused(Refusal.CODES_DO_NOT_MATCH,
                            english(t.CODES_MISMATCH, details=" ".join(errors.values())),
                            field_errors=errors)
