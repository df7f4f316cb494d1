"""System check: acknowledgements stay append-only (migration console 0003's triggers).
ConsoleConfig.ready() registers it."""

from django.core.checks import Error
from django.db.utils import DatabaseError

from console import console_sql
from console.checks import missing_triggers

TRIGGERS = ("console_notificationacknowledgement_no_update_delete",
            "console_notificationacknowledgement_no_truncate")


def check_acknowledgements_are_append_only(app_configs=None, databases=None, **kwargs):
    if not databases or "default" not in databases:
        return []
    try:
        missing = missing_triggers(table_exists=console_sql.ACKNOWLEDGEMENT_TABLE_EXISTS,
                                   triggers_present=console_sql.ACKNOWLEDGEMENT_TRIGGERS, expected=TRIGGERS)
    except DatabaseError as exc:
        return [Error(f"Could not inspect the acknowledgement table: {exc}", id="console.E111")]
    if missing:
        return [Error(f"Notification acknowledgements are not append-only: trigger(s) {', '.join(missing)} missing "
                      "or disabled.", hint="Re-run migration console 0003 (or re-create and enable the triggers).",
                      id="console.E110")]
    return []
