"""The apply-once frame: the one path every repair write takes.

`apply_once(action, user=..., idempotency_key=...)` owns, in this order:
1. the idempotency key: a missing key is refused, a key already used returns its first result
   (refused when someone else submitted it);
2. validation that needs no lock (the role, then the action's own checks such as the reason);
3. the workflow row lock, waited for at most WCS_CALLBACK_LOCK_TIMEOUT_MS (the callbacks'
   setting): a longer wait is refused as BUSY (HTTP 503) and nothing changes;
4. the key again, under the lock (a double submit that waited for the first one's lock);
5. the evidence re-read under the lock and the fingerprint check;
6. the action's preconditions, then its mutation;
7. the audit row: APPLIED/PROPOSED/REJECTED in the same transaction, or, after the rollback,
   the refusal's own row (which commits).
An action (FramedAction) supplies only its checks and its mutation.

Preview runs the same mutation inside a savepoint that is rolled back (`dry_run`), so what an
operator confirms is computed by the code that applies.
"""

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction

from console.models import CancelProposal, RepairAudit, RepairBatch
from console.repair import registry
from console.repair import texts as t
from console.repair.rules import PAUSED, REASON_MAX_LENGTH, Refusal, RepairRefused, RepairRequest, check_text
from recovery.engine.decisions import Action, decide, decide_as_if_active
from recovery.engine.evidence import TidyRecoveryEvidence, evidence_for_workflow
from recovery.engine.transaction import StaleWrite, lock_workflow, set_lock_timeout
from recovery.engine.transaction import repair as m
from recovery.messages import Message, message
from recovery.models import TidyWorkflow

KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL: lock_timeout expired


def lock_timeout_ms() -> int:
    return settings.WCS_CALLBACK_LOCK_TIMEOUT_MS


def is_lock_timeout(exc: BaseException) -> bool:
    return getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE


@contextmanager
def locked_workflow(workflow_id: int):
    """A transaction holding the workflow row lock; refused as BUSY when the row (or any row the
    action writes) stays locked longer than the lock timeout."""
    try:
        with transaction.atomic():
            set_lock_timeout(lock_timeout_ms())
            lock_workflow(workflow_id, skip_locked=False)
            yield
    except OperationalError as exc:
        if not is_lock_timeout(exc):
            raise
        raise RepairRefused(Refusal.BUSY, message(t.BUSY, workflow_id=workflow_id, ms=lock_timeout_ms())) from exc


def pause_reason(workflow_id: int) -> str:
    return TidyWorkflow.objects.filter(pk=workflow_id).values_list("pause_reason", flat=True).first() or ""


def assess(evidence: TidyRecoveryEvidence | None) -> tuple[Message, bool]:
    """What the decision table says about the workflow now, and whether that is consistent."""
    if evidence is None:
        return Message(t.NOT_FOUND_ASSESSED), False
    if evidence.workflow_status == PAUSED:
        d = decide_as_if_active(evidence)
        return message(t.STILL_PAUSED, wf_status=PAUSED, decision=_decision(d)), False
    d = decide(evidence)
    text = message(t.DECIDED, wf_status=evidence.workflow_status, decision=_decision(d))
    return text, d.action is not Action.PAUSE


def _decision(d) -> str:
    return f"{d.action.value}{' ' + d.reason.value if d.reason else ''} ({d.rule.value})"


# --- running a mutation: the same code for preview and apply --------------------------------------


@dataclass
class RunResult:
    summary: Message
    changes: list[dict]
    evidence_after: TidyRecoveryEvidence | None
    decision_after: Message
    consistent_after: bool
    warnings: list[Message] = field(default_factory=list)

    # The messages in the reader's language, for the pages.
    @property
    def shown_summary(self):
        return t.shown(self.summary)

    @property
    def shown_decision(self):
        return t.shown(self.decision_after)

    @property
    def shown_warnings(self) -> list:
        return [t.shown(w) for w in self.warnings]


def run(ctx: m.RepairContext, mutation, payload: dict, warnings: list[Message]) -> RunResult:
    """Run a mutation of recovery.engine.transaction.repair and record every row it changed."""
    scope = m.workflow_scope(ctx.workflow_id, extra_spaces=tuple(ctx.spaces))
    before = m.snapshot_scope(scope)
    result = mutation(ctx, payload=payload)
    after = m.snapshot_scope(scope)
    evidence_after = evidence_for_workflow(ctx.workflow_id)
    text, consistent = assess(evidence_after)
    return RunResult(result.summary, m.row_changes(before, after), evidence_after, text, consistent, warnings)


class _DryRun(Exception):
    def __init__(self, result: RunResult):
        self.result = result


def dry_run(ctx: m.RepairContext, mutation, payload: dict, warnings: list[Message]) -> RunResult:
    """`run` inside a savepoint that is always rolled back."""
    try:
        with transaction.atomic():
            raise _DryRun(run(ctx, mutation, payload, warnings))
    except _DryRun as dry:
        return dry.result


# --- the frame ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What an action's mutation did, for its audit row."""

    outcome: str  # APPLIED, PROPOSED or REJECTED
    message: Message
    evidence_after: TidyRecoveryEvidence | None
    decision_after: Message
    consistent_after: bool
    changes: list[dict] = field(default_factory=list)
    proposal: CancelProposal | None = None


class FramedAction:
    """One repair action as the frame runs it, by its spec (console.repair.registry). Subclasses
    supply `mutate` and, where they differ from the defaults, their checks."""

    def __init__(self, request: RepairRequest, *, previewed_fingerprint: str = "",
                 proposal: CancelProposal | None = None, batch: RepairBatch | None = None):
        self.request = request
        self.spec = registry.spec(request.action)
        self.previewed = previewed_fingerprint or ""
        self.proposal = proposal
        self.batch = batch

    def check_unlocked(self, user) -> None:
        """Checks that need no lock (after the role)."""
        check_text(self.request)

    def lock_rows(self) -> None:
        """Under the workflow lock, before the evidence is read: rows of the action's own."""

    def context_spaces(self) -> tuple[str, ...]:
        """Spaces the context reads beside the move's own: the space an operator scanned."""
        space = self.request.space_code.strip()
        return (space,) if space else ()

    def check_fingerprint(self, ctx: m.RepairContext) -> None:
        if ctx.fingerprint != self.previewed:
            raise RepairRefused(Refusal.STALE_EVIDENCE, self.spec.stale)

    def check_locked(self, ctx: m.RepairContext, pause_reason: str) -> None:
        """Under the lock: preconditions, then the reason code, then the scanned codes."""
        registry.check_preconditions(ctx, self.request.action)
        registry.check_reason_code(self.request, pause_reason)
        registry.check_scans(self.request, ctx)

    def mutate(self, user, ctx: m.RepairContext, payload: dict) -> Outcome:
        raise NotImplementedError

    def refused(self, refused: RepairRefused) -> None:
        """After a refusal rolled back, before its audit row is written."""


def payload(user, request: RepairRequest, key: str) -> dict:
    """What the mutation records in its callback events: who, what, why."""
    return {"source": "operator", "user": user.get_username(), "action": request.action,
            "reason_code": request.reason_code, "idempotency_key": key}


def submission_key(idempotency_key: str | None) -> str | None:
    """The form's idempotency key, or None when it is missing or malformed."""
    return idempotency_key if KEY_PATTERN.match(idempotency_key or "") else None


def first_result(key: str | None, user, *, model=RepairAudit, owner: str = "user_id"):
    """A double submit's first result (a RepairAudit, or a RepairBatch for a batch; None for a
    first submit); refuses a missing key and a key first submitted by someone else."""
    if not key:
        raise RepairRefused(Refusal.BAD_REQUEST, t.KEY_MISSING)
    first = model.objects.filter(idempotency_key=key).first()
    if first is not None and getattr(first, owner) != user.pk:
        raise RepairRefused(Refusal.BAD_REQUEST, t.KEY_OTHERS)
    return first


def apply_once(action: FramedAction, *, user, idempotency_key: str) -> RepairAudit:
    """Run `action` once (see the module docstring). Returns its audit row, or the first result
    of this idempotency key; raises RepairRefused, its audit row committed, otherwise."""
    started = time.monotonic()
    request = action.request
    key = submission_key(idempotency_key)
    try:
        if first := first_result(key, user):
            return first
        if not registry.permitted(user, request.action):
            raise RepairRefused(Refusal.FORBIDDEN, action.spec.forbidden)
        action.check_unlocked(user)
        with locked_workflow(request.workflow_id):
            if first := RepairAudit.objects.filter(idempotency_key=key).first():
                return first
            action.lock_rows()
            ctx = m.read_context(request.workflow_id, extra_spaces=action.context_spaces())
            if ctx is None:
                raise RepairRefused(Refusal.NOT_FOUND, message(t.NOT_FOUND, workflow_id=request.workflow_id))
            action.check_fingerprint(ctx)
            reason_before = pause_reason(ctx.workflow_id)
            action.check_locked(ctx, reason_before)
            done = action.mutate(user, ctx, payload(user, request, key))
            after = done.evidence_after
            return RepairAudit.objects.create(
                user=user, username=user.get_username(), action=request.action, stage=RepairAudit.Stage.APPLY,
                workflow_id=ctx.workflow_id, step_id=ctx.subject.step_id if ctx.subject else None,
                pause_reason=reason_before, reason_code=request.reason_code,
                reason_text=request.reason_text.strip(), inputs=registry.inputs(request),
                fingerprint_previewed=action.previewed, fingerprint_before=ctx.fingerprint,
                fingerprint_after=after.fingerprint if after else "", evidence_before=ctx.evidence.as_json(),
                evidence_after=after.as_json() if after else None, changes=done.changes, outcome=done.outcome,
                message=done.message.english(), message_json=done.message.as_json(),
                decision_after=done.decision_after.english(), decision_after_json=done.decision_after.as_json(),
                consistent_after=done.consistent_after,
                idempotency_key=key, batch=action.batch, proposal=done.proposal or action.proposal,
                duration_ms=int((time.monotonic() - started) * 1000))
    except StaleWrite as exc:
        refused = RepairRefused(Refusal.STALE_WRITE, message(t.STALE_WRITE_APPLY, error=str(exc)))
        action.refused(refused)
        record_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY, key=key,
                       previewed=action.previewed, batch=action.batch, proposal=action.proposal, started=started)
        raise refused from exc
    except RepairRefused as refused:
        action.refused(refused)
        # A busy workflow is worth trying again with the same form: its refusal keeps no key.
        record_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.APPLY,
                       key=None if refused.code == Refusal.BUSY else key, previewed=action.previewed,
                       batch=action.batch, proposal=action.proposal, started=started)
        raise


def record_refusal(refused: RepairRefused, *, user, request: RepairRequest, stage: str, key: str | None = None,
                   previewed: str = "", proposal: CancelProposal | None = None,
                   batch: RepairBatch | None = None, started: float | None = None) -> RepairAudit:
    """Write the refusal's own row after the change rolled back (so it commits)."""
    evidence = evidence_for_workflow(request.workflow_id) if request.workflow_id else None
    refused.evidence = evidence
    ev_json = evidence.as_json() if evidence else None
    decision, consistent = assess(evidence) if evidence else (None, False)
    fields = {
        "user": user, "username": user.get_username(),
        "action": request.action, "stage": stage, "workflow_id": request.workflow_id or None,
        "step_id": evidence.step.step_id if evidence and evidence.step else None,
        "pause_reason": pause_reason(evidence.workflow_id) if evidence else "",
        "reason_code": request.reason_code[:64], "reason_text": request.reason_text[:REASON_MAX_LENGTH],
        "inputs": registry.inputs(request), "fingerprint_previewed": previewed[:64],
        "fingerprint_before": evidence.fingerprint if evidence else "",
        "fingerprint_after": evidence.fingerprint if evidence else "",
        "evidence_before": ev_json, "evidence_after": ev_json,
        "outcome": f"REFUSED:{refused.code}", "message": refused.message, "message_json": refused.text.as_json(),
        "decision_after": decision.english() if decision else "",
        "decision_after_json": decision.as_json() if decision else None, "consistent_after": consistent,
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
