"""What every repair shares: the refusals, the request, the checks of the written reason, and
the floor confirmation a cancel needs while a vehicle may be moving the tray.

Pure (no reads, no writes). What is particular to one action (who may take it, its
preconditions, its reason codes, its scans) is its spec in console.repair.registry, which
builds on these. A failed check raises RepairRefused; the frame audits it.
"""

from dataclasses import dataclass

from console.repair import texts as t
from recovery.engine.transaction import repair as m
from recovery.errors import Refused
from recovery.messages import Message, message

REASON_MIN_LENGTH = 15
REASON_MAX_LENGTH = 2000
PAUSED = "PAUSED_RECOVERY"


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


def as_message(text: Message | str) -> Message:
    """A message id without values (a module constant of console.repair.texts) as a Message."""
    return text if isinstance(text, Message) else Message(text)


class RepairRefused(Refused):
    """A refused attempt; `audit` is its (committed) audit row, `evidence` the evidence then.

    `text` is the refusal as a message id with values (the audit keeps it as JSON), `message`
    its English (the audit's `message`, logs); `field_errors` maps a form field to a message."""

    def __init__(self, code: str, text: Message | str, *, field_errors: dict | None = None):
        self.text = as_message(text)
        super().__init__(self.text.english())
        self.code = code
        self.field_errors = {name: as_message(why) for name, why in (field_errors or {}).items()}
        self.audit = None
        self.evidence = None

    @property
    def message(self) -> str:
        return self.text.english()

    @property
    def shown_message(self):
        """The refusal in the reader's language (HTML)."""
        return t.shown(self.text, self.message)

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


def not_paused(ctx: m.RepairContext) -> list[Message]:
    """Every action is only for a PAUSED_RECOVERY workflow."""
    status = ctx.evidence.workflow_status
    return [] if status == PAUSED else [message(t.NOT_PAUSED, wf_status=status)]


def check_text(request: RepairRequest) -> None:
    """A written reason of REASON_MIN_LENGTH to REASON_MAX_LENGTH characters."""
    text = request.reason_text.strip()
    if not text:
        msg = Message(t.REASON_MISSING)
        raise RepairRefused(Refusal.REASON_MISSING, msg, field_errors={"reason_text": msg})
    if len(text) < REASON_MIN_LENGTH:
        msg = message(t.REASON_TOO_SHORT, min=REASON_MIN_LENGTH)
        raise RepairRefused(Refusal.REASON_TOO_SHORT, msg, field_errors={"reason_text": msg})
    if len(text) > REASON_MAX_LENGTH:
        msg = message(t.REASON_TOO_LONG, max=REASON_MAX_LENGTH)
        raise RepairRefused(Refusal.BAD_REQUEST, msg, field_errors={"reason_text": msg})


def or_none(value: str | None) -> str | Message:
    """A value shown as "(none)" when it is empty."""
    return value or Message(t.NONE)


def or_empty(value: str | None) -> str | Message:
    """A scanned value shown as "(empty)" when nothing was scanned."""
    return value or Message(t.EMPTY)


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
        raise RepairRefused(Refusal.PRECONDITION, message(t.MOVING_NO_STEP, jobs=jobs))
    tray, space = (tray_code or "").strip(), (space_code or "").strip()
    if not tray or not space:
        errors = {}
        if not tray:
            errors["tray_code"] = Message(t.SCAN_TRAY)
        if not space:
            errors["space_code"] = Message(t.SCAN_SPACE)
        raise RepairRefused(Refusal.FLOOR_CONFIRMATION_REQUIRED,
                            message(t.FLOOR_REQUIRED, jobs=jobs, tray=ctx.subject.tray_code), field_errors=errors)
    errors = {}
    if tray != ctx.subject.tray_code:
        errors["tray_code"] = message(t.FLOOR_WRONG_TRAY, tray=tray, expected=ctx.subject.tray_code)
    if not ctx.space_exists(space):
        errors["space_code"] = message(t.FLOOR_NO_SPACE, space=space)
    elif ctx.spaces.get(space) not in (None, ctx.subject.tray_code):
        errors["space_code"] = message(t.FLOOR_SPACE_TAKEN, space=space, other=ctx.spaces[space])
    if errors:
        raise RepairRefused(Refusal.CODES_DO_NOT_MATCH,
                            message(t.FLOOR_MISFIT, details=Message.sentences(errors.values())),
                            field_errors=errors)
