"""Reads for the repair pages (plain functions, keyword-only arguments)."""

from dataclasses import dataclass, replace

from console.models import RepairAudit
from recovery.decisions import Action, decide
from recovery.evidence import evidence_for_workflows
from recovery.models import TidyWorkflow
from recovery.transaction import repair as m

AUDIT_PAGE_SIZE = 50
BATCH_LIMIT = 500

CSV_COLUMNS = ("id", "at", "username", "action", "stage", "workflow_id", "step_id", "pause_reason", "reason_code",
               "reason_text", "inputs", "outcome", "message", "fingerprint_previewed", "fingerprint_before",
               "fingerprint_after", "decision_after", "consistent_after", "idempotency_key", "proposal_id",
               "batch_id", "duration_ms", "changes", "evidence_before", "evidence_after")


def workflow_context(*, workflow_id: int) -> m.RepairContext | None:
    return m.read_context(workflow_id)


def pause_reason(*, workflow_id: int) -> str | None:
    return TidyWorkflow.objects.filter(pk=workflow_id).values_list("pause_reason", flat=True).first()


def workflow_audit_trail(*, workflow_id: int, limit: int = 50) -> list[RepairAudit]:
    return list(RepairAudit.objects.filter(workflow_id=workflow_id).select_related("proposal__proposed_by")
                .order_by("-id")[:limit])


def _filtered(filters: dict):
    qs = RepairAudit.objects.all()
    if filters.get("user"):
        qs = qs.filter(username__iexact=filters["user"].strip())
    if filters.get("action"):
        qs = qs.filter(action=filters["action"])
    if filters.get("reason_code"):
        qs = qs.filter(reason_code=filters["reason_code"])
    if filters.get("outcome"):
        qs = qs.filter(outcome__startswith=filters["outcome"])
    if filters.get("workflow"):
        qs = qs.filter(workflow_id=filters["workflow"])
    if filters.get("batch"):
        qs = qs.filter(batch_id=filters["batch"])
    if filters.get("since"):
        qs = qs.filter(at__gte=filters["since"])
    if filters.get("until"):
        qs = qs.filter(at__lt=filters["until"])
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
    rows = rows[:size]
    return AuditPage(rows, rows[-1].id if more and rows else None, before_id is None)


def audit_csv_rows(*, filters: dict):
    """The header, then every matching row oldest first, streamed from a server-side cursor."""
    import json

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
        if ev.workflow_status != "PAUSED_RECOVERY":
            continue
        d = decide(replace(ev, workflow_status="ACTIVE"))
        text = f"{d.action.value}{' ' + d.reason.value if d.reason else ''}"
        rows.append(BatchRow(ev.workflow_id, ev.origin, reasons.get(ev.workflow_id), ev.fingerprint,
                             d.action is not Action.PAUSE, text))
    return rows


def batch_candidates(*, reason: str = "", origin: str = "", age: str = "", q: str = "") -> tuple[list[BatchRow], int]:
    """Paused workflows matching the paused list's filters (same parameter names), oldest first."""

    from django.db.models import Exists, OuterRef, Q
    from django.utils import timezone

    from console.selectors import AGE_BUCKETS
    from recovery.models import TidyStep

    qs = TidyWorkflow.objects.filter(status=TidyWorkflow.Status.PAUSED_RECOVERY)
    if reason:
        qs = qs.filter(pause_reason=reason)
    if origin:
        qs = qs.filter(origin=origin)
    now = timezone.now()
    for key, _, low, high in AGE_BUCKETS:
        if key == age:
            if low is not None:
                qs = qs.filter(updated_at__lte=now - low)
            if high is not None:
                qs = qs.filter(updated_at__gt=now - high)
    q = q.strip()
    if q:
        step = TidyStep.objects.filter(workflow_id=OuterRef("pk")).filter(
            Q(tray_code=q) | Q(cargo_space_id=q) | Q(target_cargo_space_id=q))
        cond = Exists(step)
        if q.isdigit():
            cond = cond | Q(workflow_id=int(q))
        qs = qs.filter(cond)
    total = qs.count()
    ids = list(qs.order_by("updated_at", "workflow_id").values_list("workflow_id", flat=True)[:BATCH_LIMIT])
    return batch_rows(workflow_ids=ids), total
