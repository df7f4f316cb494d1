"""Where a process's count of dropped log lines goes: one row per process in `LogDrops`, written
from the log module's own reporting thread (recovery.logs.logcontext), summed by /metrics as
`tidy_log_records_dropped_total` so every web worker answers the same (docs/architecture.md,
"Logging never blocks")."""

from django.db import connection
from django.utils import timezone

from recovery.models import LogDrops


def record_log_drops(process: str, dropped: int) -> None:
    """Store `process`'s running total. Runs on the reporting thread, so its connection is that
    thread's own and is closed here: the thread wakes only every few seconds."""
    try:
        LogDrops.objects.update_or_create(process=process, defaults={"dropped": dropped,
                                                                     "updated_at": timezone.now()})
    finally:
        connection.close()
