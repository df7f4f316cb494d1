"""Cancel and release under four eyes: one shift lead proposes, a different one approves (the
cancel is applied then) or any shift lead rejects (the proposer too: a withdrawal).

Propose, approve and reject are actions of the apply-once frame; viewing a proposal takes no
workflow lock.
"""

from functools import partial

from django.db import OperationalError, transaction
from django.utils import timezone

from console.models import CancelProposal, RepairAudit
from console.repair import frame, registry
from console.repair import texts as t
from console.repair.actions import Preview, check_no_pending_proposal, dry_run
from console.repair.registry import RepairAction
from console.repair.rules import (
    Refusal,
    RepairRefused,
    RepairRequest,
    check_floor_confirmation,
    check_text,
    floor_space,
    needs_floor_confirmation,
)
from recovery.engine.transaction import repair as m
from recovery.engine.transaction import set_lock_timeout
from recovery.messages import Message, message


class Propose(frame.FramedAction):
    """Records the proposal; nothing in the WMS changes until approval."""

    def check_locked(self, ctx, pause_reason):
        super().check_locked(ctx, pause_reason)
        check_no_pending_proposal(ctx.workflow_id)

    def mutate(self, user, ctx, payload) -> frame.Outcome:
        request = self.request
        # The floor confirmation (checked in check_locked) is kept only when a vehicle may be
        # moving the tray; otherwise the cancel changes no inventory record, as always.
        confirmed = needs_floor_confirmation(ctx)
        proposal = CancelProposal.objects.create(
            workflow_id=ctx.workflow_id, proposed_by=user, reason_code=request.reason_code,
            reason_text=request.reason_text.strip(), fingerprint=ctx.fingerprint,
            evidence=ctx.evidence.as_json(), idempotency_key=payload["idempotency_key"],
            floor_tray_code=request.tray_code.strip() if confirmed else None,
            floor_space_code=request.space_code.strip() if confirmed else None)
        text, consistent = frame.assess(ctx.evidence)
        parts = [message(t.PROPOSED, proposal=proposal.pk), Message(t.NEEDS_SECOND_LEAD)]
        if confirmed:
            parts.append(message(t.FLOOR_CONFIRMED, tray=proposal.floor_tray_code, space=proposal.floor_space_code))
        return frame.Outcome("PROPOSED", Message.joined(parts), ctx.evidence, text, consistent, proposal=proposal)


class _Decision(frame.FramedAction):
    """Approve or reject a pending proposal: reason checked up front, the proposal row locked."""

    def check_unlocked(self, user):
        registry.check_reason_code(self.request, None)
        check_text(self.request)

    def lock_rows(self):
        self.proposal = CancelProposal.objects.select_for_update().get(pk=self.proposal.pk)
        if self.proposal.status != CancelProposal.Status.PENDING:
            raise RepairRefused(Refusal.PROPOSAL_CLOSED, message(t.PROPOSAL_CLOSED, wf_status=self.proposal.status))

    def decide(self, user, status: str) -> None:
        self.proposal.status = status
        self.proposal.decided_by, self.proposal.decided_at = user, timezone.now()
        self.proposal.save(update_fields=["status", "decided_by", "decided_at"])


class ProposalStale(RepairRefused):
    """The evidence changed since the proposal: refused, and the proposal closes as STALE."""

    def __init__(self):
        super().__init__(Refusal.STALE_EVIDENCE, t.PROPOSAL_STALE)


class Approve(_Decision):
    def check_unlocked(self, user):
        if self.proposal.proposed_by_id == user.pk:
            raise RepairRefused(Refusal.SELF_APPROVAL, t.SELF_APPROVAL)
        super().check_unlocked(user)

    def check_fingerprint(self, ctx):
        if ctx.fingerprint != self.proposal.fingerprint:
            raise ProposalStale()
        if ctx.fingerprint != self.previewed:
            raise RepairRefused(Refusal.STALE_EVIDENCE, self.spec.stale)

    def context_spaces(self):
        return (self.proposal.floor_space_code,) if self.proposal.floor_space_code else ()

    def check_locked(self, ctx, pause_reason):
        registry.check_preconditions(ctx, self.request.action)
        # Checked again under the lock: the space may have been given another tray since.
        check_floor_confirmation(ctx, self.proposal.floor_tray_code, self.proposal.floor_space_code)

    def mutate(self, user, ctx, payload) -> frame.Outcome:
        proposer = self.proposal.proposed_by.get_username()
        space = floor_space(ctx, self.proposal.floor_space_code)
        payload = {**payload, "proposal": self.proposal.pk, "proposed_by": proposer}
        if space is not None:
            payload["floor_confirmation"] = {"tray_code": self.proposal.floor_tray_code, "space_code": space}
        run = frame.run(ctx, partial(m.cancel_release, floor_space=space), payload, [])
        self.decide(user, CancelProposal.Status.APPLIED)
        return frame.Outcome("APPLIED", message(t.APPROVED, proposal=self.proposal.pk, user=proposer,
                                                summary=run.summary),
                             run.evidence_after, run.decision_after, run.consistent_after, run.changes)

    def refused(self, refused):
        if isinstance(refused, ProposalStale):
            CancelProposal.objects.filter(pk=self.proposal.pk, status=CancelProposal.Status.PENDING).update(
                status=CancelProposal.Status.STALE, decided_at=timezone.now())


class Reject(_Decision):
    def check_fingerprint(self, ctx):
        """Rejecting changes nothing in the WMS, whatever the evidence now."""

    def check_locked(self, ctx, pause_reason):
        """Any pending proposal may be rejected."""

    def mutate(self, user, ctx, payload) -> frame.Outcome:
        self.decide(user, CancelProposal.Status.REJECTED)
        text, consistent = frame.assess(ctx.evidence)
        rejected = message(t.REJECTED, proposal=self.proposal.pk, user=self.proposal.proposed_by.get_username())
        return frame.Outcome("REJECTED", Message.joined([rejected, Message(t.NOTHING_CHANGED)]), ctx.evidence, text,
                             consistent)


def cancel_propose(*, user, request: RepairRequest, previewed_fingerprint: str,
                   idempotency_key: str) -> RepairAudit:
    request = RepairRequest(RepairAction.CANCEL_PROPOSE, request.workflow_id, request.reason_code,
                            request.reason_text, request.tray_code, request.space_code)
    return frame.apply_once(Propose(request, previewed_fingerprint=previewed_fingerprint), user=user,
                            idempotency_key=idempotency_key)


def _decision(cls, action: str, *, user, proposal_id: int, reason_code: str, reason_text: str,
              idempotency_key: str, previewed_fingerprint: str = "") -> RepairAudit:
    proposal = CancelProposal.objects.get(pk=proposal_id)
    request = RepairRequest(action, proposal.workflow_id, reason_code, reason_text)
    return frame.apply_once(cls(request, previewed_fingerprint=previewed_fingerprint, proposal=proposal),
                            user=user, idempotency_key=idempotency_key)


def cancel_approve(*, user, proposal_id: int, reason_code: str, reason_text: str, previewed_fingerprint: str,
                   idempotency_key: str) -> RepairAudit:
    """A different shift lead approves: the cancel-and-release is applied in the same transaction."""
    return _decision(Approve, RepairAction.CANCEL_APPROVE, user=user, proposal_id=proposal_id,
                     reason_code=reason_code, reason_text=reason_text, idempotency_key=idempotency_key,
                     previewed_fingerprint=previewed_fingerprint)


def cancel_reject(*, user, proposal_id: int, reason_code: str, reason_text: str, idempotency_key: str) -> RepairAudit:
    """A shift lead (the proposer too: a withdrawal) rejects; nothing in the WMS changes."""
    return _decision(Reject, RepairAction.CANCEL_REJECT, user=user, proposal_id=proposal_id,
                     reason_code=reason_code, reason_text=reason_text, idempotency_key=idempotency_key)


def cancel_preview_for_approval(*, proposal: CancelProposal) -> Preview | None:
    """What approving would change now; None when the workflow no longer allows it or its rows
    are busy. Viewing takes no workflow lock: the dry run's writes are rolled back, and it waits
    for a row another transaction holds at most the lock timeout."""
    spaces = (proposal.floor_space_code,) if proposal.floor_space_code else ()
    ctx = m.read_context(proposal.workflow_id, extra_spaces=spaces)
    if ctx is None or registry.precondition_failures(ctx, RepairAction.CANCEL_APPROVE):
        return None
    try:
        check_floor_confirmation(ctx, proposal.floor_tray_code, proposal.floor_space_code)
    except RepairRefused:
        return None  # approving is refused, with the reason, and audited
    request = RepairRequest(RepairAction.CANCEL_APPROVE, proposal.workflow_id)
    try:
        with transaction.atomic():
            set_lock_timeout(frame.lock_timeout_ms())
            result = dry_run(ctx, RepairAction.CANCEL_APPROVE, {"source": "operator", "preview": True},
                             floor_space=floor_space(ctx, proposal.floor_space_code))
    except OperationalError as exc:
        if not frame.is_lock_timeout(exc):
            raise
        return None
    return Preview(request, ctx, ctx.fingerprint, result)


def approval_blocker(*, proposal: CancelProposal) -> Message | None:
    """Why approving the proposal would be refused on the current records (None when it would
    not, as far as can be told without the lock): shown where the approval preview would be."""
    spaces = (proposal.floor_space_code,) if proposal.floor_space_code else ()
    ctx = m.read_context(proposal.workflow_id, extra_spaces=spaces)
    if ctx is None:
        return message(t.NOT_FOUND, workflow_id=proposal.workflow_id)
    why = registry.precondition_failures(ctx, RepairAction.CANCEL_APPROVE)
    if why:
        return Message.sentences(why)
    try:
        check_floor_confirmation(ctx, proposal.floor_tray_code, proposal.floor_space_code)
    except RepairRefused as refused:
        return refused.text
    return None
