"""The repair actions, each declared once (docs/architecture.md §9, §14).

An action's spec is everything the console needs to offer, route, label, check and apply it:
its code (stored in RepairAudit.action), URL slug and label; the runbook correction it belongs
to (its family: label, effect, role text); who may take it; whether the workflow's panel offers
it; what it asks for besides the reason code and the written reason (the codes scanned on the
floor, and when); its preconditions on the evidence; its mutation in
recovery.engine.transaction.repair; whether applying it resolves a pause; the operator reason codes it
allows, per pause reason; the refusals it audits in its own words; and its row in the user guide
(docs/user-guide.md). Everything else derives from the specs: the offers, the routing by slug, the
mutations, the labels, `permitted`, the form's fields, the labels, effects and roles of the runbook's corrections
(console.runbook names them by value), the actions the observe-mode agreement and the analytics'
time to resolve count as ending a pause (`resolving_actions`), and the user guide's table.

The preconditions and scan checks are pure on a RepairContext, so the panel's offers, the
preview and the apply-once frame ask the very same questions.
"""

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from console import roles
from console.repair import texts as t
from console.repair.rules import (
    Refusal,
    RepairRefused,
    RepairRequest,
    check_floor_confirmation,
    needs_floor_confirmation,
    not_paused,
    or_empty,
    or_none,
)
from console.runbook import Correction
from recovery.engine.decisions import Action, decide_as_if_active
from recovery.engine.decisions import Reason as R
from recovery.engine.transaction import repair as m
from recovery.messages import Message, message

Text = str | Promise  # a translatable text: shown in the reader's language when rendered
Failures = Callable[[m.RepairContext], list[Message]]


@dataclass(frozen=True)
class Family:
    """A correction of the runbook (console.runbook.Correction): the actions that do one kind
    of correction (both reconciles are one, the three cancel steps another)."""

    correction: Correction
    label: Text
    effect: Text
    role: Text  # who may apply it, as the runbook says it


@dataclass(frozen=True)
class ReasonCode:
    """An operator reason code: why an operator takes the action. Allowed for the pause reasons
    named (None: whatever the pause reason)."""

    code: str
    label: Text  # the human description, translated; the code itself never is
    pause_reasons: frozenset[str] | None = None

    def allows(self, pause_reason: str | None) -> bool:
        return self.pause_reasons is None or pause_reason in self.pause_reasons


def _code(code: str, label: Text, pause_reasons=None) -> ReasonCode:
    return ReasonCode(code, label, frozenset(pause_reasons) if pause_reasons else None)


@dataclass(frozen=True)
class Scans:
    """The codes an action asks the operator to read on the floor: the tray's and the space's
    where it stands (form fields `tray_code` and `space_code`, kept in the audit's inputs)."""

    check: Callable[[RepairRequest, m.RepairContext], None]  # raises RepairRefused when they do not fit
    instruction: Text = ""  # what the form tells the operator to scan (HTML of the catalogue)
    # Asked only while a vehicle may be moving the tray (a job in status 2 or 3), with the form's
    # floor-confirmation warning; otherwise asked always.
    while_moving: bool = False

    def asked(self, ctx: m.RepairContext | None) -> bool:
        return not self.while_moving or (ctx is not None and needs_floor_confirmation(ctx))


def _holds(ctx: m.RepairContext) -> list[Message]:
    return []


@dataclass(frozen=True)
class ActionSpec:
    """One repair action. A scanned confirmation is one field away: `scans=Scans(check, instruction)`
    makes the form ask for the tray and space codes, the audit keep them and the frame run `check`
    under the workflow lock, after the preconditions and the reason code."""

    code: str
    slug: str  # its URL segment (/repair/workflow/<id>/<slug>/)
    label: Text
    family: Family
    may: Callable[[object], bool]  # the role predicate of console.roles
    reason_codes: tuple[ReasonCode, ...]
    # Whether applying it ends the workflow's pause (it resumes or cancels the workflow): the
    # observe-mode agreement counts the workflow as repaired, and the analytics' time to resolve
    # ends there. Said by every spec: a new action is never silently left out.
    resolves_pause: bool
    # Why the action does not hold on this evidence (besides "the workflow is paused"): [] = it holds.
    preconditions: Failures = _holds
    mutation: Callable | None = None  # recovery.engine.transaction.repair; None: nothing in the WMS changes
    offered: bool = True  # on the workflow's repair panel (approve and reject: on the proposal page)
    scans: Scans | None = None
    proposes: bool = False  # taken as a proposal that a different shift lead approves (four eyes)
    # It releases the workflow's spaces: it warns while a vehicle may be moving the tray, and a
    # floor confirmation corrects the records to where the tray stands (`floor_space`).
    frees_spaces: bool = False
    # The refusals it audits in its own words.
    forbidden: str = t.FORBIDDEN
    stale: str = t.STALE_APPLIED
    # The user guide's table's cells (English, Markdown): when it is offered, what it does.
    offered_when: str = ""
    does: str = ""

    def codes_for(self, pause_reason: str | None) -> list[ReasonCode]:
        return [c for c in self.reason_codes if c.allows(pause_reason)]

    def guide_row(self) -> str:
        """Its row of the user guide's repair-action table (tests/console/repair/test_repair_registry.py
        compares them)."""
        with translation.override("en"):
            label = str(self.label)
        return f"| `{self.code}` | {label} | {self.offered_when} | {self.does} |"


# --- the runbook's corrections ----------------------------------------------------------------

RECHECK_FAMILY = Family(
    Correction.RECHECK, _("Re-check and resume"),
    _("Re-evaluate the evidence now; resume only if the decision table no longer pauses."),
    _("operator"))
REISSUE_FAMILY = Family(
    Correction.REISSUE, _("Re-issue job"),
    _("Create the deterministic job TDY-<workflow>-<step> again (status 1); step DISPATCHED, workflow ACTIVE."),
    _("operator"))
RECONCILE_FAMILY = Family(
    Correction.RECONCILE, _("Reconcile to physical location"),
    _("Correct stock and space records to where the tray physically is (source or target), archive or re-issue "
      "the job accordingly, advance or resume the step."),
    _("operator"))
CANCEL_FAMILY = Family(
    Correction.CANCEL, _("Cancel workflow and release locks"),
    _("Remaining steps and the workflow CANCELLED, locks released; jobs archived, never deleted. Proposed by one "
      "shift lead, applied when another approves."),
    _("shift lead"))
FAMILIES: dict[str, Family] = {f.correction: f for f in (RECHECK_FAMILY, REISSUE_FAMILY, RECONCILE_FAMILY,
                                                         CANCEL_FAMILY)}


# --- preconditions and scans (pure on a RepairContext) -----------------------------------------


def _table_still_pauses(ctx: m.RepairContext) -> list[Message]:
    decision = decide_as_if_active(ctx.evidence)
    if decision.action is Action.PAUSE:
        return [message(t.STILL_PAUSES, reason=decision.reason.value, explanation=Message(decision.explanation))]
    return []


def _job_not_reissuable(ctx: m.RepairContext) -> list[Message]:
    ev = ctx.evidence
    if ev.step is None:
        return [Message(t.NO_STEP_TO_ISSUE)]
    why = []
    if ev.active_job is not None:
        why.append(message(t.JOB_NOT_MISSING, job_id=ev.expected_job_id, job_status=ev.active_job.status))
    if ev.finish_job is not None or ctx.subject_finish_rows:
        why.append(message(t.JOB_HAS_FINISH, job_id=ev.expected_job_id))
    if not ev.pre_move_state:
        why.append(Message(t.NOT_PRE_MOVE))
    return why


def _not_reconcilable(*, to_source: bool) -> Failures:
    def failures(ctx: m.RepairContext) -> list[Message]:
        ev, step = ctx.evidence, ctx.subject
        if step is None:
            if ev.step is None:
                return [message(t.LEFTOVER_JOBS, count=len(ctx.active_jobs))]
            return [Message(t.NO_STEP_TO_RECONCILE)]
        why = []
        space = step.cargo_space_id if to_source else step.target_cargo_space_id
        if not ctx.stock_spaces:
            why.append(message(t.NO_STOCK, tray=step.tray_code))
        if not ctx.space_exists(space):
            why.append(message(t.SOURCE_MISSING if to_source else t.TARGET_MISSING, space=space))
        elif ctx.spaces.get(space) not in (None, step.tray_code):
            why.append(message(t.SOURCE_TAKEN if to_source else t.TARGET_TAKEN, space=space, other=ctx.spaces[space]))
        if to_source:
            if ev.step is None:
                why.append(Message(t.NO_RESUME_AT_SOURCE))
            if ctx.subject_finish_rows:
                why.append(message(t.JOB_ARCHIVED, job_id=m.tidy_job_id(ctx.workflow_id, step.step_id)))
            if ctx.subject_job is not None and not step.matches(ctx.workflow_id, ctx.subject_job):
                job = ctx.subject_job
                why.append(message(t.OTHER_MOVE, job_id=job.job_id, tray=job.tray_code, source=job.cargo_space_id,
                                   target=job.target_cargo_space_id))
        return why

    return failures


def _scanned_at(*, source: bool) -> Callable[[RepairRequest, m.RepairContext], None]:
    """The scanned tray and space must be the step's tray and the stated end of its move."""

    def check(request: RepairRequest, ctx: m.RepairContext) -> None:
        step = ctx.subject
        if step is None:
            return
        errors = {}
        tray, space = request.tray_code.strip(), request.space_code.strip()
        if tray != step.tray_code:
            errors["tray_code"] = message(t.WRONG_TRAY, tray=or_empty(tray))
        expected = step.cargo_space_id if source else step.target_cargo_space_id
        other = step.target_cargo_space_id if source else step.cargo_space_id
        if space != expected:
            wrong = message(t.WRONG_SOURCE if source else t.WRONG_TARGET, space=or_empty(space))
            errors["space_code"] = Message.sentences([wrong, Message(t.OTHER_END)]) if space == other else wrong
        if errors:
            raise RepairRefused(Refusal.CODES_DO_NOT_MATCH,
                                message(t.CODES_MISMATCH, details=Message.sentences(errors.values())),
                                field_errors=errors)

    return check


def _floor_confirmation(request: RepairRequest, ctx: m.RepairContext) -> None:
    check_floor_confirmation(ctx, request.tray_code, request.space_code)


AT_SOURCE = Scans(_scanned_at(source=True), _("Go to the tray and scan (or type) the <strong>tray code</strong> and "
                                              "the code of the <strong>space it stands in</strong>. Both must match "
                                              "the records: the step's tray, and its source space."))
AT_TARGET = Scans(_scanned_at(source=False), _("Go to the tray and scan (or type) the <strong>tray code</strong> and "
                                               "the code of the <strong>space it stands in</strong>. Both must match "
                                               "the records: the step's tray, and its target space."))
FLOOR_CONFIRMATION = Scans(_floor_confirmation, while_moving=True)


# --- the actions ---------------------------------------------------------------------------------

_STOCK_BOOKED_AT_WRONG_SPACE = _code("STOCK_BOOKED_AT_WRONG_SPACE", _("Stock or space records disagree with the floor"),
                                     [R.ACTIVE_EVIDENCE_INVALID, R.FINISH_EVIDENCE_INVALID, R.JOB_MISSING])

SPECS: tuple[ActionSpec, ...] = (
    ActionSpec(
        code="RECHECK", slug="recheck", label=_("Re-check and resume"), family=RECHECK_FAMILY,
        may=roles.can_repair,
        resolves_pause=True,
        reason_codes=(
            _code("WMS_RECORDS_FIXED", _("The records were corrected in the WMS")),
            _code("FINISH_RECORDED_LATE", _("The job's finish was recorded after the pause")),
        ),
        preconditions=_table_still_pauses, mutation=m.recheck_resume,
        offered_when=("the decision table, run as if the workflow were active, no longer pauses it (someone fixed the "
                      "data in the WMS)"),
        does=("workflow `ACTIVE`, the step back to `DISPATCHED`/`PENDING`, then the table's decision: advance "
              "(stage `OPERATOR_RESUMED`, no inventory move), complete, or leave it running"),
    ),
    ActionSpec(
        code="REISSUE", slug="reissue", label=_("Re-issue job"), family=REISSUE_FAMILY, may=roles.can_repair,
        resolves_pause=True,
        reason_codes=(
            _code("JOB_LOST_AT_RESTART", _("The move job was lost at a restart"), [R.JOB_MISSING]),
            _code("JOB_NEVER_CREATED", _("The move job was never created"), [R.JOB_MISSING]),
            _code("JOB_NOT_IN_WMS", _("No job exists for the step; the tray waits at its source")),
            _code("WRONG_JOB_REMOVED_IN_WMS", _("A wrong job was removed in the WMS; issue the right one"),
                  [R.JOB_MISMATCH, R.ACTIVE_EVIDENCE_INVALID]),
        ),
        # A lost acknowledgement looks like a missing job in the pre-move state: the floor decides.
        preconditions=_job_not_reissuable, mutation=m.reissue_job, scans=AT_SOURCE,
        offered_when="no active job, no finish row, pre-move state holds; the tray scanned at its source",
        does="job `TDY-<workflow>-<step>` created again (status 1), step `DISPATCHED`, workflow `ACTIVE`",
    ),
    ActionSpec(
        code="RECONCILE_SOURCE", slug="reconcile-source", label=_("Reconcile: tray is at the source"),
        family=RECONCILE_FAMILY, may=roles.can_repair,
        resolves_pause=True,
        reason_codes=(
            _code("TRAY_FOUND_AT_SOURCE", _("Tray found at the source space on the floor")),
            _STOCK_BOOKED_AT_WRONG_SPACE,
            _code("JOB_STATUS_INVALID", _("The job's status is not a live status; the move has not happened"),
                  [R.ACTIVE_EVIDENCE_INVALID]),
        ),
        preconditions=_not_reconcilable(to_source=True), mutation=m.reconcile_to_source, scans=AT_SOURCE,
        offered_when=("the tray has stock rows, the source space exists and holds no other tray, the job id is not "
                      "archived and not taken by another move; the tray scanned at its source"),
        does=("stock and space records corrected to the source; the job created, kept, or its invalid status "
              "reset to 1; step `DISPATCHED`, workflow `ACTIVE`"),
    ),
    ActionSpec(
        code="RECONCILE_TARGET", slug="reconcile-target", label=_("Reconcile: tray is at the target"),
        family=RECONCILE_FAMILY, may=roles.can_repair,
        resolves_pause=True,
        reason_codes=(
            _code("TRAY_FOUND_AT_TARGET", _("Tray found at the target space on the floor")),
            _STOCK_BOOKED_AT_WRONG_SPACE,
            _code("MOVE_DONE_NOT_RECORDED", _("The move was done but the WMS did not record it"),
                  [R.JOB_MISSING, R.ACTIVE_EVIDENCE_INVALID, R.FINISH_EVIDENCE_INVALID, R.JOB_MISMATCH]),
        ),
        preconditions=_not_reconcilable(to_source=False), mutation=m.reconcile_to_target, scans=AT_TARGET,
        offered_when=("the tray has stock rows, the target exists and holds no other tray; the tray scanned at its "
                      "target"),
        does=("records corrected to the target; the active job archived (status 4 if it matches the step, its "
              "own status if it describes another move); the step advanced with stage "
              "`OPERATOR_RECONCILED_TARGET` (next job dispatched or workflow completed)"),
    ),
    ActionSpec(
        code="CANCEL_PROPOSE", slug="cancel", label=_("Propose cancel and release"), family=CANCEL_FAMILY,
        may=roles.can_cancel,
        resolves_pause=False,
        reason_codes=(
            _code("TIDY_NO_LONGER_NEEDED", _("The tidy is no longer needed")),
            _code("TRAY_MISSING_OR_DAMAGED", _("The tray is missing or damaged")),
            _code("JOB_ID_TAKEN_BY_OTHER_MOVE", _("The job id is taken by a different move; re-plan the tidy"),
                  [R.JOB_MISMATCH, R.FINISH_EVIDENCE_INVALID, R.ACTIVE_EVIDENCE_INVALID]),
        ),
        # Previewed at the proposal, applied at the approval.
        mutation=m.cancel_release, scans=FLOOR_CONFIRMATION, proposes=True, frees_spaces=True,
        stale=t.STALE_PROPOSED,
        offered_when=("shift leads; the workflow is paused (with a job in status 2 or 3: only with a floor "
                      "confirmation, below)"),
        does=("a proposal to cancel and release, with its preview; nothing changes until a **different** shift "
              "lead approves it"),
    ),
    ActionSpec(
        code="CANCEL_APPROVE", slug="cancel-approve", label=_("Approve cancel and release"), family=CANCEL_FAMILY,
        may=roles.can_cancel,
        resolves_pause=True,
        reason_codes=(_code("CANCEL_CHECKED_ON_FLOOR", _("Checked on the floor: cancelling is right")),),
        mutation=m.cancel_release, offered=False, frees_spaces=True,
        forbidden=t.APPROVE_FORBIDDEN, stale=t.STALE_APPROVAL,
        offered_when=("shift leads, on the proposal's page: a pending proposal by someone else (four eyes), its "
                      "evidence unchanged"),
        does=("open steps and the workflow `CANCELLED`, locks released, active jobs archived with their own "
              "status; with a floor confirmation the stock and space records are also corrected to the "
              "confirmed space"),
    ),
    ActionSpec(
        code="CANCEL_REJECT", slug="cancel-reject", label=_("Reject cancel and release"), family=CANCEL_FAMILY,
        may=roles.can_cancel,
        resolves_pause=False,
        reason_codes=(
            _code("CANCEL_NOT_JUSTIFIED", _("Cancelling is not justified by the evidence")),
            _code("REPAIRABLE_INSTEAD", _("The workflow can be repaired instead")),
        ),
        offered=False, forbidden=t.REJECT_FORBIDDEN,
        offered_when="shift leads, on the proposal's page: a pending proposal",
        does="the proposal closed as rejected; nothing in the WMS changes",
    ),
)


# --- derived ---------------------------------------------------------------------------------------

BY_CODE: dict[str, ActionSpec] = {s.code: s for s in SPECS}
# The one vocabulary of repair actions: RepairAction.RECHECK == "RECHECK", ...
RepairAction = StrEnum("RepairAction", [(s.code, s.code) for s in SPECS])
OFFERED: tuple[str, ...] = tuple(s.code for s in SPECS if s.offered)
ACTIONS_BY_SLUG: dict[str, str] = {s.slug: s.code for s in SPECS if s.offered}
MUTATIONS: dict[str, Callable] = {s.code: s.mutation for s in SPECS if s.mutation is not None}
ACTION_LABELS: dict[str, Text] = {s.code: s.label for s in SPECS}
RECONCILE: tuple[str, ...] = tuple(s.code for s in SPECS if s.family is RECONCILE_FAMILY)
# Every operator reason code once, in the specs' order (the audit page filters by them).
REASON_CODES: tuple[ReasonCode, ...] = tuple({c.code: c for s in SPECS for c in s.reason_codes}.values())
REASON_CODE_LABELS: dict[str, Text] = {c.code: c.label for c in REASON_CODES}


def resolving_actions() -> list[str]:
    """The codes of the actions that end a pause when applied (the observe-mode agreement's
    `repaired`, the analytics' time to resolve: the %(resolving_actions)s of console/operations/sql.py
    and console/analytics/sql.py)."""
    return [s.code for s in SPECS if s.resolves_pause]


def spec(action: str) -> ActionSpec:
    return BY_CODE[action]


def action_label(action: str) -> Text:
    """An action's name as the pages show it (a stored action the registry no longer knows: its code)."""
    return ACTION_LABELS.get(action, action)


def reason_label(code: str) -> Text:
    return REASON_CODE_LABELS.get(code, code)


def permitted(user, action: str) -> bool:
    return action in BY_CODE and BY_CODE[action].may(user)


def codes_for(action: str, pause_reason: str | None) -> list[ReasonCode]:
    """The reason codes the form offers for `action` on a workflow paused with `pause_reason`."""
    return BY_CODE[action].codes_for(pause_reason) if action in BY_CODE else []


def precondition_failures(ctx: m.RepairContext, action: str) -> list[Message]:
    """Why `action` does not hold on this evidence (empty: it holds)."""
    return not_paused(ctx) or BY_CODE[action].preconditions(ctx)


def check_preconditions(ctx: m.RepairContext, action: str) -> None:
    why = precondition_failures(ctx, action)
    if why:
        raise RepairRefused(Refusal.PRECONDITION, Message.sentences(why))


def check_reason_code(request: RepairRequest, pause_reason: str | None) -> None:
    """Only a code the form offers for this action and pause reason (codes_for)."""
    allowed = {c.code for c in codes_for(request.action, pause_reason)}
    if request.reason_code and request.reason_code in allowed:
        return
    msg = message(t.CODE_NOT_ALLOWED, code=or_none(request.reason_code), reason=or_none(pause_reason))
    raise RepairRefused(Refusal.REASON_CODE_NOT_ALLOWED, msg, field_errors={"reason_code": msg})


def scans_asked(action: str, ctx: m.RepairContext | None) -> bool:
    """Whether the action's form asks for the scanned codes on this evidence."""
    scans = BY_CODE[action].scans
    return scans is not None and scans.asked(ctx)


def check_scans(request: RepairRequest, ctx: m.RepairContext) -> None:
    scans = BY_CODE[request.action].scans
    if scans is not None:
        scans.check(request, ctx)


def inputs(request: RepairRequest) -> dict:
    """What the operator scanned, as the audit keeps it: always for an action that always asks,
    else when something was scanned."""
    scans = BY_CODE[request.action].scans if request.action in BY_CODE else None
    if scans is not None and (not scans.while_moving or request.tray_code or request.space_code):
        return {"tray_code": request.tray_code, "space_code": request.space_code}
    return {}
