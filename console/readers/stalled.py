"""Stalled workflows (docs/user-guide.md, "Active and stalled workflows"): an ACTIVE workflow whose current
step's job, at status 1, 2 or 3, has not changed for STALLED_AFTER_MINUTES. A derived flag: the
decision table still leaves such a workflow alone; the pages, metrics and notifications show it."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from console.readers import fetch_dicts
from console.readers import sql as readers_sql

# --- stalled ---------------------------------------------------------------------------------


def stalled_after() -> timedelta:
    return timedelta(minutes=settings.STALLED_AFTER_MINUTES)


def stalled_before(now: datetime | None = None) -> datetime:
    """A job whose updated_at is at or before this instant is stalled."""
    return (now or timezone.now()) - stalled_after()


@dataclass(frozen=True)
class StalledRow:
    workflow_id: int
    origin: str
    step_id: int
    step_no: int
    tray_code: str
    cargo_space_id: str
    target_cargo_space_id: str
    job_id: str
    job_status: int
    job_updated_at: datetime
    last_callback_at: datetime | None


def stalled_workflows(*, now: datetime | None = None) -> list[StalledRow]:
    rows = fetch_dicts(readers_sql.STALLED_WORKFLOWS, {"stalled_before": stalled_before(now)})
    return [StalledRow(**r) for r in rows]


@dataclass(frozen=True)
class ActiveCounts:
    active: int
    stalled: int


def active_counts(*, now: datetime | None = None) -> ActiveCounts:
    (row,) = fetch_dicts(readers_sql.ACTIVE_COUNTS, {"stalled_before": stalled_before(now)})
    return ActiveCounts(active=row["active"], stalled=row["stalled"])
