"""System checks for the repair audit (run by `manage.py check --database default` and migrate).
ConsoleConfig.ready() registers them."""

from django.core.checks import Error
from django.db import connections
from django.db.utils import DatabaseError

from console.console_sql import AUDIT_TABLE_EXISTS, AUDIT_TRIGGERS_PRESENT

AUDIT_TRIGGERS = ("console_repairaudit_no_update_delete", "console_repairaudit_no_truncate")


def missing_triggers(*, table_exists: str, triggers_present: str, expected: tuple[str, ...]) -> list[str]:
    """The expected append-only triggers (docs/architecture.md §10) missing or disabled on a table;
    none while the table does not exist yet (migrate creates table and triggers together).
    A DatabaseError propagates: the caller names the table in its check error."""
    with connections["default"].cursor() as cursor:
        cursor.execute(table_exists)
        if not cursor.fetchone()[0]:
            return []
        cursor.execute(triggers_present)
        present = {row[0] for row in cursor.fetchall()}
    return [t for t in expected if t not in present]


def check_audit_is_append_only(app_configs=None, databases=None, **kwargs):
    """The audit table must carry its enabled append-only triggers (migration console 0002)."""
    if not databases or "default" not in databases:
        return []
    try:
        missing = missing_triggers(table_exists=AUDIT_TABLE_EXISTS, triggers_present=AUDIT_TRIGGERS_PRESENT,
                                   expected=AUDIT_TRIGGERS)
    except DatabaseError as exc:
        return [Error(f"Could not inspect the repair audit table: {exc}", id="console.E101")]
    if missing:
        return [Error(f"The repair audit is not append-only: trigger(s) {', '.join(missing)} missing or disabled "
                      "on console_repairaudit.", hint="Re-run migration console 0002 (or re-create and enable the "
                      "triggers); never disable them.", id="console.E100")]
    return []
