"""Reads for the console pages (plain functions, keyword-only arguments)."""

from dataclasses import dataclass
from datetime import datetime

from recovery.models import RecoveryCycle, TidySpaceLock, TidyWorkflow


@dataclass(frozen=True)
class PausedWorkflowRow:
    workflow_id: int
    origin: str
    pause_reason: str | None
    paused_since: datetime
    lock_count: int


def paused_workflows_list(*, limit: int = 200) -> list[PausedWorkflowRow]:
    from django.db.models import Count

    rows = (
        TidyWorkflow.objects.filter(status=TidyWorkflow.Status.PAUSED_RECOVERY)
        .annotate(lock_count=Count("locks"))
        .order_by("updated_at", "workflow_id")[:limit]
    )
    return [
        PausedWorkflowRow(r.workflow_id, r.origin, r.pause_reason, r.updated_at, r.lock_count) for r in rows
    ]


def last_cycle() -> RecoveryCycle | None:
    return RecoveryCycle.objects.exclude(outcome=RecoveryCycle.Outcome.RUNNING).order_by("-started_at").first()


def retained_lock_count() -> int:
    return TidySpaceLock.objects.filter(workflow__status=TidyWorkflow.Status.PAUSED_RECOVERY).count()
