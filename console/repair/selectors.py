"""Reads for the repair pages (plain functions, keyword-only arguments): the workflow's repair
panel and its offers, the audit trail, the batch re-check's selection."""

import json
from dataclasses import dataclass

from console import roles
from console.models import CancelProposal, RepairAudit, RepairBatch
from console.readers.paused import PausedFilters, paused_workflows_page
from console.repair import registry
from console.repair import texts as t
from console.repair.rules import PAUSED
from recovery.engine.decisions import Action, decide_as_if_active
from recovery.engine.evidence import evidence_for_workflows
from recovery.engine.transaction import repair as m
from recovery.messages import Message, message
from recovery.models import TidyWorkflow

AUDIT_PAGE_SIZE = 50
BATCH_LIMIT = 500  # workflows in one batch re-check

CSV_COLUMNS = ("id", "at", "username", "action", "stage", "workflow_id", "step_id", "pause_reason", "reason_code",
               "reason_text", "inputs", "outcome", "message", "fingerprint_previewed", "fingerprint_before",
               "fingerprint_after", "decision_after", "consistent_after", "idempotency_key", "proposal_id",
               "batch_id", "duration_ms", "changes", "evidence_before", "evidence_after")


def workflow_context(*, workflow_id: int) -> m.RepairContext | None:
    return m.read_context(workflow_id)


def pause_reason(*, workflow_id: int) -> str | None:
    return TidyWorkflow.objects.filter(pk=workflow_id).values_list("pause_reason", flat=True).first()


def with_labels(entries):
    """Each audit row with `action_label`, its action's name in the reader's language (the row
    stores the action's code); returns the same rows."""
    for entry in entries:
        entry.action_label = registry.action_label(entry.action)
    return entries


def workflow_audit_trail(*, workflow_id: int, limit: int = 50) -> list[RepairAudit]:
    return with_labels(list(RepairAudit.objects.filter(workflow_id=workflow_id)
                            .select_related("proposal__proposed_by").order_by("-id")[:limit]))


def proposal_trail(*, proposal: CancelProposal) -> list[RepairAudit]:
    return with_labels(list(RepairAudit.objects.filter(proposal=proposal).order_by("id")))


def shown_message(entry: RepairAudit):
    """An audit row's message in the reader's language; a row written before messages were
    stored shows its stored English."""
    return t.shown(entry.message_json, entry.message)


def shown_decision_after(entry: RepairAudit):
    return t.shown(entry.decision_after_json, entry.decision_after)


# The audit page's filter fields and the lookup each one applies.
AUDIT_FILTERS = {"user": "username__iexact", "action": "action", "reason_code": "reason_code",
                 "outcome": "outcome__startswith", "workflow": "workflow_id", "batch": "batch_id",
                 "since": "at__gte", "until": "at__lt"}


def _filtered(filters: dict):
    qs = RepairAudit.objects.all()
    for name, lookup in AUDIT_FILTERS.items():
        value = filters.get(name)
        if value:
            qs = qs.filter(**{lookup: value.strip() if isinstance(value, str) else value})
    return qs


@dataclass
class AuditPage:
    rows: list[RepairAudit]
    next_before: int | None  # keyset: the id to continue below
    is_first: bool


def audit_page(*, filters: dict, before_id: int | None = None, size: int = AUDIT_PAGE_SIZE) -> AuditPage:
    """Newest first, keyset-paginated on the id (index (…, -id) per filter column)."""
    qs = _filtered(filters)
    if before_id:
        qs = qs.filter(id__lt=before_id)
    rows = list(qs.order_by("-id")[: size + 1])
    more = len(rows) > size
    rows = with_labels(rows[:size])
    return AuditPage(rows, rows[-1].id if more and rows else None, before_id is None)


def audit_csv_rows(*, filters: dict):
    """The header, then every matching row oldest first, streamed from a server-side cursor."""
    yield CSV_COLUMNS
    for row in _filtered(filters).order_by("id").values_list(*CSV_COLUMNS).iterator(chunk_size=500):
        yield [json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else
               (v.isoformat() if hasattr(v, "isoformat") else v) for v in row]


@dataclass(frozen=True)
class ChangeRow:
    table: str
    key: str
    kind: str
    columns: list[tuple[str, object, object]]  # (column, before, after)


def change_rows(changes: list[dict]) -> list[ChangeRow]:
    out = []
    for c in changes or []:
        before, after = c.get("before") or {}, c.get("after") or {}
        out.append(ChangeRow(c["table"], c["key"], c["kind"],
                             [(col, before.get(col), after.get(col)) for col in c.get("columns", [])]))
    return out


def paused_reasons() -> list[str]:
    return sorted(r for r in TidyWorkflow.objects.filter(status=TidyWorkflow.Status.PAUSED_RECOVERY)
                  .values_list("pause_reason", flat=True).distinct() if r)


@dataclass(frozen=True)
class BatchRow:
    workflow_id: int
    origin: str
    pause_reason: str | None
    fingerprint: str
    would_resume: bool
    decision: str


def batch_rows(*, workflow_ids: list[int]) -> list[BatchRow]:
    """Paused workflows among `workflow_ids`, with what a re-check would do now (one query)."""
    reasons = dict(TidyWorkflow.objects.filter(pk__in=workflow_ids).values_list("workflow_id", "pause_reason"))
    rows = []
    for ev in evidence_for_workflows(workflow_ids[:BATCH_LIMIT]):
        if ev.workflow_status != PAUSED:
            continue
        d = decide_as_if_active(ev)
        text = f"{d.action.value}{' ' + d.reason.value if d.reason else ''}"
        rows.append(BatchRow(ev.workflow_id, ev.origin, reasons.get(ev.workflow_id), ev.fingerprint,
                             d.action is not Action.PAUSE, text))
    return rows


@dataclass(frozen=True)
class BatchProgress:
    """How far a batch re-check got: one outcome per workflow re-checked so far (the latest, when
    a busy workflow was tried again), in workflow order."""

    batch: RepairBatch
    entries: list[RepairAudit]
    applied: int
    refused: int

    @property
    def total(self) -> int:
        return self.batch.workflow_count

    @property
    def done(self) -> int:
        return len(self.entries)

    @property
    def finished(self) -> bool:
        return self.batch.finished_at is not None or self.done >= self.total

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, self.done * 100 // self.total)


def batch_progress(*, batch: RepairBatch) -> BatchProgress:
    latest: dict[int, RepairAudit] = {}
    for entry in batch.audit.order_by("id"):
        latest[entry.workflow_id] = entry
    entries = with_labels([latest[w] for w in sorted(latest)])
    applied = sum(1 for e in entries if e.outcome == "APPLIED")
    return BatchProgress(batch, entries, applied, len(entries) - applied)


def batch_candidates(*, reason: str = "", origin: str = "", age: str = "", q: str = "",
                     aisle: str = "") -> tuple[list[BatchRow], int]:
    """Exactly the workflows the paused list shows for these filters (its own selector, oldest
    first), at most BATCH_LIMIT of them, and how many match in all."""
    filters = PausedFilters(reason=reason, origin=origin, age=age, q=q.strip(), aisle=aisle.strip())
    page = paused_workflows_page(filters=filters, page_size=BATCH_LIMIT)
    ids = [row.workflow_id for row in page.rows]
    by_id = {row.workflow_id: row for row in batch_rows(workflow_ids=ids)}
    return [by_id[i] for i in ids if i in by_id], page.total_matching


def pending_proposal(*, workflow_id: int) -> CancelProposal | None:
    return CancelProposal.objects.filter(workflow_id=workflow_id, status=CancelProposal.Status.PENDING).first()


# --- the workflow's repair panel --------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    action: str
    label: str
    available: bool
    why_not: tuple[Message, ...] = ()
    permitted: bool = True

    @property
    def shown_why_not(self) -> list:
        return [t.shown(why) for why in self.why_not]

    @property
    def spec(self) -> registry.ActionSpec:
        return registry.spec(self.action)

    @property
    def slug(self) -> str:
        return self.spec.slug

    @property
    def proposes(self) -> bool:
        return self.spec.proposes


def repair_offers(*, user, workflow_id: int) -> tuple[m.RepairContext | None, list[Offer]]:
    """Every offered action, available only when its preconditions hold on the current evidence,
    a reason code fits and the user's role allows it (else why not)."""
    ctx = m.read_context(workflow_id)
    if ctx is None:
        return None, []
    pending = pending_proposal(workflow_id=workflow_id)
    reason = pause_reason(workflow_id=workflow_id)
    offers = []
    for action in registry.OFFERED:
        spec = registry.spec(action)
        why = registry.precondition_failures(ctx, action)
        if spec.proposes and pending is not None and not why:
            why = [message(t.PENDING_PROPOSAL, proposal=pending.pk)]
        if not why and not spec.codes_for(reason):
            why = [message(t.NO_CODE_FITS, reason=reason)]
        ok = spec.may(user)
        if not ok:
            why = [*why, Message(t.FORBIDDEN)]
        offers.append(Offer(action, spec.label, ok and not why, tuple(why), ok))
    return ctx, offers


@dataclass(frozen=True)
class RepairPanel:
    workflow_id: int
    ctx: m.RepairContext | None
    can_repair: bool
    can_cancel: bool
    offers: list[Offer]
    pending: CancelProposal | None
    trail: list[RepairAudit]

    @property
    def paused(self) -> bool:
        return self.ctx is not None and self.ctx.evidence.workflow_status == PAUSED


def repair_panel(*, user, workflow_id: int) -> RepairPanel:
    """The offers (for a user who may repair: a supervisor gets only the trail) and the trail."""
    ctx, offers = repair_offers(user=user, workflow_id=workflow_id) if roles.can_repair(user) else (None, [])
    # One query for the trail; a pending proposal always has its CANCEL_PROPOSE row there.
    trail = workflow_audit_trail(workflow_id=workflow_id)
    pending = next((e.proposal for e in trail if e.proposal is not None and e.proposal.status == "PENDING"), None)
    return RepairPanel(workflow_id, ctx, ctx is not None, roles.can_cancel(user),
                       [o for o in offers if o.permitted], pending, trail)
