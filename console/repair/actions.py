"""The direct repairs (re-check, re-issue, reconcile to source or target: every action whose spec
neither proposes nor decides a proposal): preview and apply.

Apply goes through the apply-once frame; preview takes the same lock, runs the same checks
and the same mutation in a savepoint that is rolled back, and audits a refusal.
"""

from dataclasses import dataclass
from functools import partial

from console.models import RepairAudit, RepairBatch
from console.repair import frame, registry
from console.repair import texts as t
from console.repair.rules import Refusal, RepairRefused, RepairRequest, check_text, floor_space, moving_jobs
from console.repair.selectors import pending_proposal
from recovery.engine.transaction import StaleWrite
from recovery.engine.transaction import repair as m
from recovery.messages import Message, message

MUTATIONS = registry.MUTATIONS  # each action's mutation in recovery.engine.transaction.repair


def warnings_for(ctx: m.RepairContext, action: str) -> list[Message]:
    if not registry.spec(action).frees_spaces:
        return []
    live = moving_jobs(ctx)
    if not live:
        return []
    return [message(t.MOVING_WARNING, jobs=", ".join(j.job_id for j in live))]


def mutation_for(action: str, *, floor_space: str | None = None):
    """The action's mutation; one that frees the spaces, with a floor confirmation, also corrects
    the records to where the tray stands."""
    if floor_space is not None and registry.spec(action).frees_spaces:
        return partial(MUTATIONS[action], floor_space=floor_space)
    return MUTATIONS[action]


def dry_run(ctx: m.RepairContext, action: str, payload: dict, *, floor_space: str | None = None) -> frame.RunResult:
    return frame.dry_run(ctx, mutation_for(action, floor_space=floor_space), payload, warnings_for(ctx, action))


def check_no_pending_proposal(workflow_id: int) -> None:
    if pending_proposal(workflow_id=workflow_id):
        raise RepairRefused(Refusal.PROPOSAL_PENDING, t.PROPOSAL_PENDING)


@dataclass
class Preview:
    request: RepairRequest
    context: m.RepairContext
    fingerprint: str
    result: frame.RunResult


def repair_preview(*, user, request: RepairRequest, idempotency_key: str = "preview") -> Preview:
    """Lock, re-read, check, run the mutation in a savepoint, roll back. Refusals are audited."""
    try:
        if not registry.permitted(user, request.action):
            raise RepairRefused(Refusal.FORBIDDEN, registry.spec(request.action).forbidden)
        check_text(request)
        action = Repair(request)
        with frame.locked_workflow(request.workflow_id):
            ctx = m.read_context(request.workflow_id, extra_spaces=action.context_spaces())
            if ctx is None:
                raise RepairRefused(Refusal.NOT_FOUND, message(t.NOT_FOUND, workflow_id=request.workflow_id))
            action.check_locked(ctx, frame.pause_reason(ctx.workflow_id))
            if action.spec.proposes:
                check_no_pending_proposal(ctx.workflow_id)
            result = dry_run(ctx, request.action, frame.payload(user, request, idempotency_key),
                             floor_space=floor_space(ctx, request.space_code))
            return Preview(request, ctx, ctx.fingerprint, result)
    except RepairRefused as refused:
        frame.record_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.PREVIEW)
        raise
    except StaleWrite as exc:
        refused = RepairRefused(Refusal.STALE_WRITE, message(t.STALE_WRITE_PREVIEW, error=str(exc)))
        frame.record_refusal(refused, user=user, request=request, stage=RepairAudit.Stage.PREVIEW)
        raise refused from exc


class Repair(frame.FramedAction):
    """A direct repair: the default checks, the action's own mutation."""

    def mutate(self, user, ctx, payload) -> frame.Outcome:
        run = frame.run(ctx, MUTATIONS[self.request.action], payload, [])
        return frame.Outcome("APPLIED", run.summary, run.evidence_after, run.decision_after, run.consistent_after,
                             run.changes)


def repair_apply(*, user, request: RepairRequest, previewed_fingerprint: str, idempotency_key: str,
                 batch: RepairBatch | None = None) -> RepairAudit:
    """Apply once (console.repair.frame): the audit row, APPLIED or the key's first result."""
    return frame.apply_once(Repair(request, previewed_fingerprint=previewed_fingerprint, batch=batch),
                            user=user, idempotency_key=idempotency_key)
