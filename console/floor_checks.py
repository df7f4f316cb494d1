"""System check: workflow notes stay append-only (migration console 0003's triggers)."""

from django.core.checks import Error, Tags, register
from django.db import connections
from django.db.utils import DatabaseError

NOTE_TRIGGERS = ("console_workflownote_no_update_delete", "console_workflownote_no_truncate")

NOTE_TRIGGERS_PRESENT = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = 'console_workflownote'::regclass
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""


@register(Tags.database)
def check_notes_are_append_only(app_configs=None, databases=None, **kwargs):
    if not databases or "default" not in databases:
        return []
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT to_regclass('console_workflownote') IS NOT NULL")
            if not cursor.fetchone()[0]:
                return []  # not migrated yet: migrate creates table and triggers together
            cursor.execute(NOTE_TRIGGERS_PRESENT)
            present = {row[0] for row in cursor.fetchall()}
    except DatabaseError as exc:
        return [Error(f"Could not inspect the workflow notes table: {exc}", id="console.E111")]
    missing = [t for t in NOTE_TRIGGERS if t not in present]
    if missing:
        return [Error(f"Workflow notes are not append-only: trigger(s) {', '.join(missing)} missing or disabled "
                      "on console_workflownote.", hint="Re-run migration console 0003 (or re-create and enable "
                      "the triggers); never disable them.", id="console.E110")]
    return []
