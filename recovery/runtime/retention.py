"""Journal retention: a scheduled task deletes journal rows older than JOURNAL_RETENTION_DAYS
in small batches (recovery cycles and decisions, callback receipts, outbound requests). The
repair audit and the WMS's own rows are never touched.

Before deleting, each run folds the counts of journal rows older than FOLD_LAG into
recovery_journaltotal and moves a watermark; the metric counters read "totals + rows newer than
the watermark", and only folded rows are ever deleted, so the counters stay monotonic
(docs/operations.md "Monitoring"). The lag leaves room for transactions still in flight
(a receipt's time is its transaction's start; callbacks and cycles commit within seconds).
"""

import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from recovery.engine.callbacks import DURATION_BUCKETS
from recovery.runtime import retention_sql
from recovery.runtime.schedule import ensure_schedule

log = logging.getLogger("recovery.retention")  # the logger's name as log readers know it

SCHEDULE_NAME = "tidy-journal-retention"
TASK_FUNC = "recovery.retention.journal_retention_run"
SCHEDULE_MINUTES = 10
FOLD_LAG = timedelta(minutes=10)
BATCH_SIZE = 1000
# Stop deleting after this long (well under the cluster's task timeout); the next run goes on.
RUN_BUDGET_SECONDS = 30.0

# Per journal, the statements that fold it, all under its one watermark: a callback receipt is
# counted in its outcome and its duration before it can be deleted (its unknown fields were
# counted when it was read: recovery/engine/callback_fields.py).
FOLDS = {"callbacks": (retention_sql.FOLD_CALLBACKS, retention_sql.FOLD_CALLBACK_DURATIONS),
         "decisions": (retention_sql.FOLD_DECISIONS,),
         "outbound": (retention_sql.FOLD_OUTBOUND,)}


@dataclass
class RetentionReport:
    folded_before: dict = field(default_factory=dict)
    deleted: dict = field(default_factory=dict)
    finished: bool = True


def journal_fold(*, now=None) -> dict:
    """Count every journal row older than now - FOLD_LAG into the totals, once."""
    until = (now or timezone.now()) - FOLD_LAG
    marks = {}
    for journal, statements in FOLDS.items():
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(retention_sql.ENSURE_FOLD_ROW, {"journal": journal})
            cursor.execute(retention_sql.LOCK_FOLD_ROW, {"journal": journal})
            since = cursor.fetchone()[0]
            if since < until:
                for statement in statements:
                    cursor.execute(statement, {"since": since, "until": until, "bounds": list(DURATION_BUCKETS)})
                cursor.execute(retention_sql.MOVE_FOLD_MARK, {"journal": journal, "until": until})
                since = until
            marks[journal] = since
    return marks


def _delete_batches(statement: str, before, *, deadline: float, batch: int) -> tuple[int, bool]:
    deleted = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, {"before": before, "batch": batch})
            count = cursor.rowcount
        deleted += count
        if count < batch:
            return deleted, True
        if time.monotonic() > deadline:
            return deleted, False


def journal_retention_run(*, now=None, days: int | None = None, batch: int = BATCH_SIZE,
                          budget_seconds: float = RUN_BUDGET_SECONDS) -> dict:
    """The scheduled task: fold, then delete what is past retention and already folded."""
    now = now or timezone.now()
    days = settings.JOURNAL_RETENTION_DAYS if days is None else days
    cutoff = now - timedelta(days=days)
    marks = journal_fold(now=now)
    report = RetentionReport(folded_before={k: v.isoformat() for k, v in marks.items()})
    deadline = time.monotonic() + budget_seconds
    plan = [
        ("decisions", retention_sql.DELETE_DECISIONS, min(cutoff, marks["decisions"])),
        ("cycles", retention_sql.DELETE_CYCLES, cutoff),
        ("callback_receipts", retention_sql.DELETE_CALLBACK_RECEIPTS, min(cutoff, marks["callbacks"])),
        ("outbound_requests", retention_sql.DELETE_OUTBOUND_REQUESTS, min(cutoff, marks["outbound"])),
    ]
    for name, statement, before in plan:
        if not report.finished:
            break
        report.deleted[name], report.finished = _delete_batches(statement, before, deadline=deadline, batch=batch)
    log.info("journal retention: deleted %s rows older than %s days%s", report.deleted, days,
             "" if report.finished else " (time budget used up; the next run goes on)",
             extra={"deleted": report.deleted, "retention_days": days})
    return {"deleted": report.deleted, "finished": report.finished, "folded_before": report.folded_before}


def ensure_retention_schedule(schedule_model=None):
    """Create or correct the one schedule row of the retention task (idempotent)."""
    return ensure_schedule(name=SCHEDULE_NAME, func=TASK_FUNC, minutes=SCHEDULE_MINUTES, schedule_model=schedule_model)
