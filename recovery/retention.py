"""The path django-q2's schedule rows and queued tasks store for journal retention
("recovery.retention.journal_retention_run", recovery.runtime.retention.TASK_FUNC): rows in existing
databases name it, so it stays, handing on the run of recovery.runtime.retention."""

from recovery.runtime.retention import journal_retention_run

__all__ = ["journal_retention_run"]
