"""Audited operator repair (design §6): preconditions, preview, apply, four eyes, batch re-check.

Services (HackSoft style: keyword-only, the acting user first). Each one:
- checks the role on the server (console.roles) and refuses, audited, when it does not fit;
- validates the reason (a code allowed for the action and pause reason, a written reason of
  at least REASON_MIN_LENGTH characters) and, for reconcile, the scanned tray and space codes;
- locks the workflow row (`lock_workflow(..., skip_locked=False)`), re-reads the evidence and
  checks the preconditions on it;
- preview: runs the mutation of `recovery.transaction.repair` inside a savepoint, snapshots the
  rows it touched, and rolls back -- the preview is computed by the code that applies;
- apply: refuses unless the fingerprint the operator previewed still equals the current one,
  runs the same mutation, writes the audit row in the same transaction, and records what the
  decision table says afterwards;
- a refusal rolls the change back and then writes its own audit row, which commits;
- an idempotency key makes a double submit return the first result.
"""

import contextlib
import re
import time
from dataclasses import dataclass, field, replace

from django.db import IntegrityError, transaction
from django.utils import timezone

from console import repair_codes, roles
from console.models import CancelProposal, RepairAction, RepairAudit, RepairBatch
from recovery.decisions import Action, decide
from recovery.evidence import TidyRecoveryEvidence, evidence_for_workflow
from recovery.transaction import StaleWrite, lock_workflow
from recovery.transaction import repair as m

REASON_MIN_LENGTH = 15
REASON_MAX_LENGTH = 2000
BATCH_LIMIT = 500
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
PAUSED = "PAUSED_RECOVERY"

# Operator actions with a mutation of their own; cancel-and-release is applied on approval.
MUTATIONS = {
    RepairAction.RECHECK: m.recheck_resume,
    RepairAction.REISSUE: m.reissue_job,
    RepairAction.RECONCILE_SOURCE: m.reconcile_to_source,
    RepairAction.RECONCILE_TARGET: m.reconcile_to_target,
    RepairAction.CANCEL_PROPOSE: m.cancel_release,  # previewed at proposal, applied at approval
    RepairAction.CANCEL_APPROVE: m.cancel_release,
}
OFFERED = (RepairAction.RECHECK, RepairAction.REISSUE, RepairAction.RECONCILE_SOURCE,
           RepairAction.RECONCILE_TARGET, RepairAction.CANCEL_PROPOSE)
RECONCILE = (RepairAction.RECONCILE_SOURCE, RepairAction.RECONCILE_TARGET)


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


class RepairRefused(Exception):
    """A refused attempt; `audit` is its (committed) audit row."""

    def __init__(self, code: str, message: str, *, field_errors: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field_errors = field_errors or {}
        self.audit: RepairAudit | None = None
        self.evidence: TidyRecoveryEvidence | None = None

    @property
    def http_status(self) -> int:
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
        data = {}
        if self.action in RECONCILE:
            data = {"tray_code": self.tray_code, "space_code": self.space_code}
        return data


# --- permissions and preconditions (pure on the context) ---------------------------------------


def permitted(user, action: str) -> bool:
    if action in (RepairAction.CANCEL_PROPOSE, RepairAction.CANCEL_APPROVE, RepairAction.CANCEL_REJECT):
        return roles.can_cancel(user)
    return roles.can_repair(user)


def _as_active(evidence: TidyRecoveryEvidence):
    return decide(replace(evidence, workflow_status="ACTIVE"))


def precondition_failures(ctx: m.RepairContext, action: str) -> list[str]:
    """Why `action` does not hold on this evidence (empty: it holds). Design §6 preconditions."""
    ev = ctx.evidence
    if ev.workflow_status != PAUSED:
        return [f"The workflow is {ev.workflow_status}; repairs are only for PAUSED_RECOVERY workflows."]
    if action == RepairAction.RECHECK:
        decision = _as_active(ev)
        if decision.action is Action.PAUSE:
            return [f"The decision table still says pause with {decision.reason.value}: {decision.explanation}"]
        return []
    if action in (RepairAction.CANCEL_PROPOSE, RepairAction.CANCEL_APPROVE):
        return []
    step = ctx.subject
    if action == RepairAction.REISSUE:
        why = []
        if ev.step is None:
            return ["Every step is COMPLETED: there is no step to issue a job for."]
        if ev.active_job is not None:
            why.append(f"The job {ev.expected_job_id} is not missing: it is active (status {ev.active_job.status}).")
        if ev.finish_job is not None or ctx.subject_finish_rows:
            why.append(f"The job {ev.expected_job_id} has a finish row: an archived job id cannot be issued again.")
        if not ev.pre_move_state:
            why.append("The pre-move state does not hold (stock at source, source holds the tray, target does not).")
        return why
    # reconcile
    if step is None:
        if ev.step is None:
            return [f"Every step is COMPLETED and {len(ctx.active_jobs)} job(s) are still active: "
                    "reconcile needs exactly one leftover job."]
        return ["No step to reconcile."]
    why = []
    space = step.cargo_space_id if action == RepairAction.RECONCILE_SOURCE else step.target_cargo_space_id
    where = "source" if action == RepairAction.RECONCILE_SOURCE else "target"
    if not ctx.stock_spaces:
        why.append(f"The tray {step.tray_code} has no stock rows: the WMS must book its goods first.")
    if not ctx.space_exists(space):
        why.append(f"The {where} space {space} does not exist in bas_cargo_space.")
    elif ctx.spaces.get(space) not in (None, step.tray_code):
        why.append(f"The {where} space {space} records another tray ({ctx.spaces[space]}); "
                   "resolve that tray first.")
    if action == RepairAction.RECONCILE_SOURCE:
        if ev.step is None:
            why.append("Every step is COMPLETED: the move cannot be resumed at the source.")
        if ctx.subject_finish_rows:
            why.append(f"The job {m.tidy_job_id(ctx.workflow_id, step.step_id)} is archived (finish row): "
                       "it cannot be un-archived nor issued again. If the tray is at the target, reconcile "
                       "to the target; otherwise a shift lead must cancel the workflow.")
        if ctx.subject_job is not None and not step.matches(ctx.workflow_id, ctx.subject_job):
            why.append(f"The active job {ctx.subject_job.job_id} describes a different move (tray "
                       f"{ctx.subject_job.tray_code}, {ctx.subject_job.cargo_space_id} -> "
                       f"{ctx.subject_job.target_cargo_space_id}): fix it in the WMS and re-check, or cancel.")
    return why


def text_failures(request: RepairRequest) -> tuple[str, str, dict] | None:
    """(refusal code, message, field errors) for a missing, short or overlong written reason."""
    text = request.reason_text.strip()
    if not text:
        return Refusal.REASON_MISSING, "A written reason is required.", {"reason_text": "A written reason is required."}
    if len(text) < REASON_MIN_LENGTH:
        msg = f"Write at least {REASON_MIN_LENGTH} characters: what you saw and why this action fits."
        return Refusal.REASON_TOO_SHORT, msg, {"reason_text": msg}
    if len(text) > REASON_MAX_LENGTH:
        msg = f"Keep the reason under {REASON_MAX_LENGTH} characters."
        return Refusal.BAD_REQUEST, msg, {"reason_text": msg}
    return None


def reason_code_failures(request: RepairRequest, pause_reason: str | None) -> tuple[str, str, dict] | None:
    allowed = {c.code for c in repair_codes.codes_for(request.action, pause_reason)}
    if request.reason_code and request.reason_code in allowed:
        return None
    msg = (f"Reason code {request.reason_code or '(none)'} is not allowed for this action and pause reason "
           f"{pause_reason or '(none)'}.")
    return Refusal.REASON_CODE_NOT_ALLOWED, msg, {"reason_code": msg}


def reason_failures(request: RepairRequest, pause_reason: str | None) -> tuple[str, str, dict] | None:
    return reason_code_failures(request, pause_reason) or text_failures(request)


def code_failures(request: RepairRequest, ctx: m.RepairContext) -> tuple[str, dict] | None:
    """Reconcile: the scanned tray and space must equal the step's tray and stated location."""
    if request.action not in RECONCILE or ctx.subject is None:
        return None
    step = ctx.subject
    errors = {}
    tray, space = request.tray_code.strip(), request.space_code.strip()
    if tray != step.tray_code:
        errors["tray_code"] = f"Scanned tray {tray or '(empty)'} is not the step's tray."
    expected = step.cargo_space_id if request.action == RepairAction.RECONCILE_SOURCE else step.target_cargo_space_id
    other = step.target_cargo_space_id if request.action == RepairAction.RECONCILE_SOURCE else step.cargo_space_id
    if space != expected:
        hint = " That is the other end of the move: choose the other location." if space == other else ""
        errors["space_code"] = f"Scanned space {space or '(empty)'} is not the step's " \
                               f"{'source' if request.action == RepairAction.RECONCILE_SOURCE else 'target'}.{hint}"
    if errors:
        return "The scanned codes do not match the records: " + " ".join(errors.values()), errors
    return None


# --- offers for the workflow page ----------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    action: str
    label: str
    available: bool
    why_not: tuple[str, ...] = ()
    permitted: bool = True


def repair_offers(*, user, workflow_id: int) -> tuple[m.RepairContext | None, list[Offer]]:
    ctx = m.read_context(workflow_id)
    if ctx is None:
        return None, []
    pending = pending_proposal(workflow_id=workflow_id)
    ctx_pause_reason = _pause_reason(ctx)
    offers = []
    for action in OFFERED:
        why = precondition_failures(ctx, action)
        if action == RepairAction.CANCEL_PROPOSE and pending is not None and not why:
            why = [f"A cancel proposal is already waiting for approval (proposal {pending.pk})."]
        if not why and not repair_codes.codes_for(action, ctx_pause_reason):
            why = [f"No reason code fits this action for pause reason {ctx_pause_reason}."]
        ok = permitted(user, action)
        if not ok:
            why = [*why, "Your role may not take this action."]
        offers.append(Offer(action, RepairAction(action).label, ok and not why, tuple(why), ok))
    return ctx, offers


def pending_proposal(*, workflow_id: int) -> CancelProposal | None:
    return CancelProposal.objects.filter(workflow_id=workflow_id, status=CancelProposal.Status.PENDING).first()


# --- running a mutation: the same code for preview and apply --------------------------------------


@dataclass
class RunResult:
    summary: str
    changes: list[dict]
    evidence_after: TidyRecoveryEvidence | None
    decision_after: str
    consistent_after: bool
    warnings: list[str] = field(default_factory=list)


def assess(evidence: TidyRecoveryEvidence | None) -> tuple[str, bool]:
    """What the decision table says about the workflow now, and whether that is consistent."""
    if evidence is None:
        return "workflow not found", False
    if evidence.workflow_status == PAUSED:
        d = _as_active(evidence)
        return (f"still PAUSED_RECOVERY; if it were active the table would say {d.action.value}"
                f"{' ' + d.reason.value if d.reason else ''} ({d.rule.value})"), False
    d = decide(evidence)
    text = f"{evidence.workflow_status}: {d.action.value}{' ' + d.reason.value if d.reason else ''} ({d.rule.value})"
    return text, d.action is not Action.PAUSE


def _warnings(ctx: m.RepairContext, action: str) -> list[str]:
    out = []
    if action in (RepairAction.CANCEL_PROPOSE, RepairAction.CANCEL_APPROVE):
        live = [j for j in ctx.active_jobs if j.status in (2, 3)]
        if live:
            out.append("Active job(s) " + ", ".join(j.job_id for j in live) + " are dispatched or executing: "
                       "make sure the WCS has stopped them before approving.")
    return out


def _run(ctx: m.RepairContext, action: str, payload: dict) -> RunResult:
    scope = m.workflow_scope(ctx.workflow_id)
    before = m.snapshot_scope(scope)
    result = MUTATIONS[action](ctx, payload=payload)
    after = m.snapshot_scope(scope)
    evidence_after = evidence_for_workflow(ctx.workflow_id)
    text, consistent = assess(evidence_after)
    return RunResult(result.summary, m.row_changes(before, after), evidence_after, text, consistent,
                     _warnings(ctx, action))


class _DryRun(Exception):
    def __init__(self, result: RunResult):
        self.result = result


@dataclass
class Preview:
    request: RepairRequest
    context: m.RepairContext
    fingerprint: str
    result: RunResult


def _payload(user, request: RepairRequest, key: str) -> dict:
    return {"source": "operator", "user": user.get_username(), "action": request.action,
            "reason_code": request.reason_code, "idempotency_key": key}


def _validate_outside_lock(user, request: RepairRequest, ctx: m.RepairContext | None) -> None:
    if not permitted(user, request.action):
        raise RepairRefused(Refusal.FORBIDDEN, "Your role may not take this action.")
    if ctx is None:
        raise RepairRefused(Refusal.NOT_FOUND, f"Workflow {request.workflow_id} does not exist.")
    bad = text_failures(request)
    if bad:
        raise RepairRefused(bad[0], bad[1], field_errors=bad[2])


def _pause_reason(ctx: m.RepairContext) -> str | None:
    from recovery.models import TidyWorkflow

    return TidyWorkflow.objects.filter(pk=ctx.workflow_id).values_list("pause_reason", flat=True).first()


def _check_locked(ctx: m.RepairContext, request: RepairRequest) -> None:
    """Under the workflow lock: preconditions, then the reason code, then the scanned codes."""
    why = precondition_failures(ctx, request.action)
    if why:
        raise RepairRefused(Refusal.PRECONDITION, " ".join(why))
    bad = reason_code_failures(request, _pause_reason(ctx))
    if bad:
        raise RepairRefused(bad[0], bad[1], field_errors=bad[2])
    bad = code_failures(request, ctx)
    if bad:
        msg, errors = bad
        raise RepairRefused(Refusal.CODES_DO_NOT_MATCH, msg, field_errors=errors)


def repair_preview(*, user, request: RepairRequest, idempotency_key: str = "preview") -> Preview:
    """Lock, re-read, check, run the mutation in a savepoint, roll back. Refusals are audited."""
    ctx = m.read_context(request.workflow_id)
    try:
        _validate_outside_lock(user, request, ctx)
        with transaction.atomic():
            lock_workflow(request.workflow_id, skip_locked=False)
            ctx = m.read_context(request.workflow_id)
            _check_locked(ctx, request)
            if request.action == RepairAction.CANCEL_PROPOSE and pending_proposal(workflow_id=ctx.workflow_id):
                raise RepairRefused(Refusal.PROPOSAL_PENDING, "A cancel proposal is already waiting for approval.")
            try:
                with transaction.atomic():
                    raise _DryRun(_run(ctx, request.action, _payload(user, request, idempotency_key)))
            except _DryRun as dry:
                return Preview(request, ctx, ctx.fingerprint, dry.result)
    except RepairRefused as refused:
        _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.PREVIEW)
        raise
    except StaleWrite as exc:
        refused = RepairRefused(Refusal.STALE_WRITE, f"The records changed while previewing: {exc}")
        _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.PREVIEW)
        raise refused from exc


# --- audit rows ------------------------------------------------------------------------------------


def _submission_key(idempotency_key: str | None) -> str | None:
    """The form's idempotency key, or None when it is missing or malformed."""
    return idempotency_key if KEY_PATTERN.match(idempotency_key or "") else None


def _first_result(key: str | None, user) -> RepairAudit | None:
    """A double submit's first result (None for a first submit); refuses a missing key and a
    key first submitted by someone else."""
    if not key:
        raise RepairRefused(Refusal.BAD_REQUEST, "The form is missing its submission key; open it again.")
    first = RepairAudit.objects.filter(idempotency_key=key).first()
    if first is not None and first.user_id != user.pk:
        raise RepairRefused(Refusal.BAD_REQUEST, "This form was submitted by someone else; open it again.")
    return first


def _audit_refusal(refused: RepairRefused, *, user, request: RepairRequest, stage: str, key: str | None = None,
                   previewed: str = "", proposal: CancelProposal | None = None,
                   batch: RepairBatch | None = None, started: float | None = None) -> RepairAudit:
    """Write the refusal's own row after the change rolled back (so it commits)."""
    evidence = evidence_for_workflow(request.workflow_id) if request.workflow_id else None
    refused.evidence = evidence
    ev_json = evidence.as_json() if evidence else None
    text, consistent = assess(evidence) if evidence else ("", False)
    fields = {
        "user": user if user.is_authenticated else None,
        "username": user.get_username() or "(anonymous)",
        "action": request.action, "stage": stage, "workflow_id": request.workflow_id or None,
        "step_id": evidence.step.step_id if evidence and evidence.step else None,
        "pause_reason": _pause_reason_of(evidence),
        "reason_code": request.reason_code[:64], "reason_text": request.reason_text[:REASON_MAX_LENGTH],
        "inputs": request.inputs(), "fingerprint_previewed": previewed[:64],
        "fingerprint_before": evidence.fingerprint if evidence else "",
        "fingerprint_after": evidence.fingerprint if evidence else "",
        "evidence_before": ev_json, "evidence_after": ev_json,
        "outcome": f"REFUSED:{refused.code}", "message": refused.message,
        "decision_after": text, "consistent_after": consistent,
        "idempotency_key": key or None, "proposal": proposal, "batch": batch,
        "duration_ms": int((time.monotonic() - started) * 1000) if started else None,
    }
    try:
        with transaction.atomic():
            refused.audit = RepairAudit.objects.create(**fields)
    except IntegrityError:
        # The same key raced us: the first result stands; record this refusal without the key.
        fields["idempotency_key"] = None
        refused.audit = RepairAudit.objects.create(**fields)
    return refused.audit


def _pause_reason_of(evidence: TidyRecoveryEvidence | None) -> str:
    if evidence is None:
        return ""
    from recovery.models import TidyWorkflow

    return TidyWorkflow.objects.filter(pk=evidence.workflow_id).values_list("pause_reason", flat=True).first() or ""


# --- apply ------------------------------------------------------------------------------------------


def repair_apply(*, user, request: RepairRequest, previewed_fingerprint: str, idempotency_key: str,
                 batch: RepairBatch | None = None, proposal: CancelProposal | None = None) -> RepairAudit:
    """Apply once: lock, re-read, compare fingerprints, check, mutate, audit -- one transaction.

    Returns the audit row (APPLIED, or the first result of this idempotency key); raises
    RepairRefused (its audit row committed) otherwise."""
    started = time.monotonic()
    key = _submission_key(idempotency_key)
    try:
        if first := _first_result(key, user):
            return first
        ctx = m.read_context(request.workflow_id)
        _validate_outside_lock(user, request, ctx)
        pause_reason = _pause_reason(ctx)
        with transaction.atomic():
            lock_workflow(request.workflow_id, skip_locked=False)
            if first := RepairAudit.objects.filter(idempotency_key=key).first():
                return first  # a double submit that waited for the first one's lock
            ctx = m.read_context(request.workflow_id)
            if ctx.fingerprint != previewed_fingerprint:
                raise RepairRefused(Refusal.STALE_EVIDENCE,
                                    "The evidence changed since your preview; nothing was applied. "
                                    "Review the current evidence and preview again.")
            _check_locked(ctx, request)
            run = _run(ctx, request.action, _payload(user, request, key))
            return RepairAudit.objects.create(
                user=user, username=user.get_username(), action=request.action, stage=RepairAudit.Stage.APPLY,
                workflow_id=ctx.workflow_id, step_id=ctx.subject.step_id if ctx.subject else None,
                pause_reason=pause_reason or "", reason_code=request.reason_code,
                reason_text=request.reason_text.strip(), inputs=request.inputs(),
                fingerprint_previewed=previewed_fingerprint, fingerprint_before=ctx.fingerprint,
                fingerprint_after=run.evidence_after.fingerprint if run.evidence_after else "",
                evidence_before=ctx.evidence.as_json(),
                evidence_after=run.evidence_after.as_json() if run.evidence_after else None,
                changes=run.changes, outcome="APPLIED", message=run.summary,
                decision_after=run.decision_after, consistent_after=run.consistent_after,
                idempotency_key=key, batch=batch, proposal=proposal,
                duration_ms=int((time.monotonic() - started) * 1000),
            )
    except RepairRefused as refused:
        if refused.audit is None:
            _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                           previewed=previewed_fingerprint or "", batch=batch, proposal=proposal, started=started)
        raise
    except StaleWrite as exc:
        refused = RepairRefused(Refusal.STALE_WRITE, f"The records changed while applying; nothing applied ({exc}).")
        _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                       previewed=previewed_fingerprint or "", batch=batch, proposal=proposal, started=started)
        raise refused from exc


# --- four eyes: cancel and release ----------------------------------------------------------------


def cancel_propose(*, user, request: RepairRequest, previewed_fingerprint: str,
                   idempotency_key: str) -> RepairAudit:
    """A shift lead proposes cancel-and-release; nothing in the WMS changes until approval."""
    started = time.monotonic()
    request = replace(request, action=RepairAction.CANCEL_PROPOSE)
    key = _submission_key(idempotency_key)
    try:
        if first := _first_result(key, user):
            return first
        ctx = m.read_context(request.workflow_id)
        _validate_outside_lock(user, request, ctx)
        with transaction.atomic():
            lock_workflow(request.workflow_id, skip_locked=False)
            if first := RepairAudit.objects.filter(idempotency_key=key).first():
                return first
            ctx = m.read_context(request.workflow_id)
            if ctx.fingerprint != previewed_fingerprint:
                raise RepairRefused(Refusal.STALE_EVIDENCE, "The evidence changed since your preview; "
                                    "nothing was proposed. Review the current evidence and preview again.")
            _check_locked(ctx, request)
            if pending_proposal(workflow_id=ctx.workflow_id):
                raise RepairRefused(Refusal.PROPOSAL_PENDING, "A cancel proposal is already waiting for approval.")
            proposal = CancelProposal.objects.create(
                workflow_id=ctx.workflow_id, proposed_by=user, reason_code=request.reason_code,
                reason_text=request.reason_text.strip(), fingerprint=ctx.fingerprint,
                evidence=ctx.evidence.as_json(), idempotency_key=key)
            text, consistent = assess(ctx.evidence)
            return RepairAudit.objects.create(
                user=user, username=user.get_username(), action=RepairAction.CANCEL_PROPOSE,
                workflow_id=ctx.workflow_id, step_id=ctx.subject.step_id if ctx.subject else None,
                pause_reason=_pause_reason(ctx) or "", reason_code=request.reason_code,
                reason_text=request.reason_text.strip(), fingerprint_previewed=previewed_fingerprint,
                fingerprint_before=ctx.fingerprint, fingerprint_after=ctx.fingerprint,
                evidence_before=ctx.evidence.as_json(), evidence_after=ctx.evidence.as_json(),
                outcome="PROPOSED", message=f"cancel-and-release proposed (proposal {proposal.pk}); "
                "a different shift lead must approve it", decision_after=text, consistent_after=consistent,
                idempotency_key=key, proposal=proposal, duration_ms=int((time.monotonic() - started) * 1000))
    except RepairRefused as refused:
        if refused.audit is None:
            _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                           previewed=previewed_fingerprint or "", started=started)
        raise


def _proposal_request(proposal: CancelProposal, action: str, reason_code: str, reason_text: str) -> RepairRequest:
    return RepairRequest(action=action, workflow_id=proposal.workflow_id, reason_code=reason_code,
                         reason_text=reason_text)


def cancel_preview_for_approval(*, user, proposal: CancelProposal) -> Preview | None:
    """What approving would change now (None when the workflow no longer allows it)."""
    ctx = m.read_context(proposal.workflow_id)
    if ctx is None or precondition_failures(ctx, RepairAction.CANCEL_APPROVE):
        return None
    with transaction.atomic():
        lock_workflow(proposal.workflow_id, skip_locked=False)
        ctx = m.read_context(proposal.workflow_id)
        try:
            with transaction.atomic():
                raise _DryRun(_run(ctx, RepairAction.CANCEL_APPROVE, {"source": "operator", "preview": True}))
        except _DryRun as dry:
            return Preview(_proposal_request(proposal, RepairAction.CANCEL_APPROVE, "", ""), ctx, ctx.fingerprint,
                           dry.result)


def cancel_approve(*, user, proposal_id: int, reason_code: str, reason_text: str, previewed_fingerprint: str,
                   idempotency_key: str) -> RepairAudit:
    """A different shift lead approves: the cancel-and-release is applied in the same transaction."""
    started = time.monotonic()
    proposal = CancelProposal.objects.get(pk=proposal_id)
    request = _proposal_request(proposal, RepairAction.CANCEL_APPROVE, reason_code, reason_text)
    key = _submission_key(idempotency_key)
    try:
        if first := _first_result(key, user):
            return first
        if not permitted(user, RepairAction.CANCEL_APPROVE):
            raise RepairRefused(Refusal.FORBIDDEN, "Only a shift lead may approve cancel-and-release.")
        if proposal.proposed_by_id == user.pk:
            raise RepairRefused(Refusal.SELF_APPROVAL, "Nobody approves their own proposal: a different shift "
                                "lead must approve it.")
        bad = reason_failures(request, None)
        if bad:
            raise RepairRefused(bad[0], bad[1], field_errors=bad[2])
        with transaction.atomic():
            lock_workflow(proposal.workflow_id, skip_locked=False)
            if first := RepairAudit.objects.filter(idempotency_key=key).first():
                return first
            proposal = CancelProposal.objects.select_for_update().get(pk=proposal_id)
            if proposal.status != CancelProposal.Status.PENDING:
                raise RepairRefused(Refusal.PROPOSAL_CLOSED, f"The proposal is {proposal.status}, not pending.")
            ctx = m.read_context(proposal.workflow_id)
            if ctx.fingerprint != proposal.fingerprint:
                refused = RepairRefused(Refusal.STALE_EVIDENCE, "The evidence changed since the proposal; nothing "
                                        "was cancelled and the proposal is closed as STALE. Propose again on the "
                                        "current evidence if cancelling is still right.")
                refused.close_proposal = True
                raise refused
            if ctx.fingerprint != previewed_fingerprint:
                raise RepairRefused(Refusal.STALE_EVIDENCE, "The evidence changed since your preview; nothing was "
                                    "cancelled. Open the proposal again and review the current evidence.")
            why = precondition_failures(ctx, RepairAction.CANCEL_APPROVE)
            if why:
                raise RepairRefused(Refusal.PRECONDITION, " ".join(why))
            run = _run(ctx, RepairAction.CANCEL_APPROVE, {**_payload(user, request, key), "proposal": proposal.pk,
                                                          "proposed_by": proposal.proposed_by.get_username()})
            proposal.status = CancelProposal.Status.APPLIED
            proposal.decided_by, proposal.decided_at = user, timezone.now()
            proposal.save(update_fields=["status", "decided_by", "decided_at"])
            return RepairAudit.objects.create(
                user=user, username=user.get_username(), action=RepairAction.CANCEL_APPROVE,
                workflow_id=ctx.workflow_id, step_id=ctx.subject.step_id if ctx.subject else None,
                pause_reason=_pause_reason(ctx) or "",
                reason_code=reason_code, reason_text=reason_text.strip(),
                fingerprint_previewed=previewed_fingerprint, fingerprint_before=ctx.fingerprint,
                fingerprint_after=run.evidence_after.fingerprint if run.evidence_after else "",
                evidence_before=ctx.evidence.as_json(),
                evidence_after=run.evidence_after.as_json() if run.evidence_after else None,
                changes=run.changes, outcome="APPLIED",
                message=f"approved proposal {proposal.pk} by {proposal.proposed_by.get_username()}: {run.summary}",
                decision_after=run.decision_after, consistent_after=run.consistent_after,
                idempotency_key=key, proposal=proposal, duration_ms=int((time.monotonic() - started) * 1000))
    except RepairRefused as refused:
        if refused.audit is None:
            if getattr(refused, "close_proposal", False):
                CancelProposal.objects.filter(pk=proposal.pk, status=CancelProposal.Status.PENDING).update(
                    status=CancelProposal.Status.STALE, decided_at=timezone.now())
            _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                           previewed=previewed_fingerprint or "", proposal=proposal, started=started)
        raise
    except StaleWrite as exc:
        refused = RepairRefused(Refusal.STALE_WRITE, f"The records changed while applying; nothing applied ({exc}).")
        _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                       previewed=previewed_fingerprint or "", proposal=proposal, started=started)
        raise refused from exc


def cancel_reject(*, user, proposal_id: int, reason_code: str, reason_text: str, idempotency_key: str) -> RepairAudit:
    """A shift lead (the proposer too: a withdrawal) rejects; nothing in the WMS changes."""
    started = time.monotonic()
    proposal = CancelProposal.objects.get(pk=proposal_id)
    request = _proposal_request(proposal, RepairAction.CANCEL_REJECT, reason_code, reason_text)
    key = _submission_key(idempotency_key)
    try:
        if first := _first_result(key, user):
            return first
        if not permitted(user, RepairAction.CANCEL_REJECT):
            raise RepairRefused(Refusal.FORBIDDEN, "Only a shift lead may reject cancel-and-release.")
        bad = reason_failures(request, None)
        if bad:
            raise RepairRefused(bad[0], bad[1], field_errors=bad[2])
        with transaction.atomic():
            lock_workflow(proposal.workflow_id, skip_locked=False)
            if first := RepairAudit.objects.filter(idempotency_key=key).first():
                return first
            proposal = CancelProposal.objects.select_for_update().get(pk=proposal_id)
            if proposal.status != CancelProposal.Status.PENDING:
                raise RepairRefused(Refusal.PROPOSAL_CLOSED, f"The proposal is {proposal.status}, not pending.")
            proposal.status = CancelProposal.Status.REJECTED
            proposal.decided_by, proposal.decided_at = user, timezone.now()
            proposal.save(update_fields=["status", "decided_by", "decided_at"])
            evidence = evidence_for_workflow(proposal.workflow_id)
            text, consistent = assess(evidence)
            ev_json = evidence.as_json() if evidence else None
            return RepairAudit.objects.create(
                user=user, username=user.get_username(), action=RepairAction.CANCEL_REJECT,
                workflow_id=proposal.workflow_id, step_id=evidence.step.step_id if evidence and evidence.step else None,
                pause_reason=_pause_reason_of(evidence), reason_code=reason_code, reason_text=reason_text.strip(),
                fingerprint_before=evidence.fingerprint if evidence else "",
                fingerprint_after=evidence.fingerprint if evidence else "",
                evidence_before=ev_json, evidence_after=ev_json, outcome="REJECTED",
                message=f"rejected proposal {proposal.pk} by {proposal.proposed_by.get_username()}; nothing changed",
                decision_after=text, consistent_after=consistent, idempotency_key=key, proposal=proposal,
                duration_ms=int((time.monotonic() - started) * 1000))
    except RepairRefused as refused:
        if refused.audit is None:
            _audit_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                           proposal=proposal, started=started)
        raise


# --- batch re-check ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchOutcome:
    workflow_id: int
    audit: RepairAudit


def batch_recheck(*, user, fingerprints: dict[int, str], reason_code: str, reason_text: str, selection: dict,
                  idempotency_key: str) -> RepairBatch:
    """Re-check and resume each selected workflow in its own transaction, one audit row each,
    all linked to one RepairBatch. A double submit returns the first batch."""
    key = _submission_key(idempotency_key)
    probe = RepairRequest(RepairAction.RECHECK, 0, reason_code, reason_text)
    try:
        if not key:
            raise RepairRefused(Refusal.BAD_REQUEST, "The form is missing its submission key; open it again.")
        if first := RepairBatch.objects.filter(idempotency_key=key).first():
            if first.created_by_id != user.pk:
                raise RepairRefused(Refusal.BAD_REQUEST, "This form was submitted by someone else; open it again.")
            return first
        if not permitted(user, RepairAction.RECHECK):
            raise RepairRefused(Refusal.FORBIDDEN, "Your role may not re-check workflows.")
        if not fingerprints:
            raise RepairRefused(Refusal.BAD_REQUEST, "Select at least one workflow.")
        if len(fingerprints) > BATCH_LIMIT:
            raise RepairRefused(Refusal.BAD_REQUEST, f"A batch holds at most {BATCH_LIMIT} workflows.")
        # Re-check codes do not depend on the pause reason, so one reason fits the whole batch.
        bad = reason_failures(probe, None)
        if bad:
            raise RepairRefused(bad[0], bad[1], field_errors=bad[2])
        try:
            with transaction.atomic():
                batch = RepairBatch.objects.create(
                    created_by=user, reason_code=reason_code, reason_text=reason_text.strip(),
                    idempotency_key=key, selection=selection, workflow_count=len(fingerprints))
        except IntegrityError:
            return RepairBatch.objects.get(idempotency_key=key)
    except RepairRefused as refused:
        _audit_refusal(refused, user=user, request=probe, stage=RepairAudit.Stage.APPLY)
        raise
    for workflow_id, fingerprint in sorted(fingerprints.items()):
        request = RepairRequest(RepairAction.RECHECK, workflow_id, reason_code, reason_text)
        with contextlib.suppress(RepairRefused):  # audited, linked to the batch
            repair_apply(user=user, request=request, previewed_fingerprint=fingerprint,
                         idempotency_key=f"{key[:40]}-{workflow_id}", batch=batch)
    RepairBatch.objects.filter(pk=batch.pk).update(finished_at=timezone.now())
    batch.refresh_from_db()
    return batch
