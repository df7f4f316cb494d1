"""System check: workflow notes stay append-only (migration console 0003_workflow_notes's triggers).
ConsoleConfig.ready() registers it."""

from django.core.checks import Error
from django.db.utils import DatabaseError

from console import console_sql
from console.checks import missing_triggers

NOTE_TRIGGERS = ("console_workflownote_no_update_delete", "console_workflownote_no_truncate")


def check_notes_are_append_only(app_configs=None, databases=None, **kwargs):
    if not databases or "default" not in databases:
        return []
    try:
        missing = missing_triggers(table_exists=console_sql.NOTE_TABLE_EXISTS,
                                   triggers_present=console_sql.NOTE_TRIGGERS_PRESENT, expected=NOTE_TRIGGERS)
    except DatabaseError as exc:
        return [Error(f"Could not inspect the workflow notes table: {exc}", id="console.E121")]
    if missing:
        return [Error(f"Workflow notes are not append-only: trigger(s) {', '.join(missing)} missing or disabled "
                      "on console_workflownote.", hint="Re-run migration console 0003_workflow_notes (or re-create "
                      "and enable the triggers); never disable them.", id="console.E120")]
    return []
