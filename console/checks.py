"""System checks for the repair audit (run by `manage.py check --database default` and migrate).
ConsoleConfig.ready() registers them."""

from django.core.checks import Error
from django.db import connections
from django.db.utils import DatabaseError

from console.console_sql import AUDIT_TABLE_EXISTS, AUDIT_TRIGGERS_PRESENT

AUDIT_TRIGGERS = ("console_repairaudit_no_update_delete", "console_repairaudit_no_truncate")


def check_audit_is_append_only(app_configs=None, databases=None, **kwargs):
    """The audit table must carry its enabled append-only triggers (migration console 0002)."""
    if not databases or "default" not in databases:
        return []
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute(AUDIT_TABLE_EXISTS)
            if not cursor.fetchone()[0]:
                return []  # not migrated yet: migrate creates table and triggers together
            cursor.execute(AUDIT_TRIGGERS_PRESENT)
            present = {row[0] for row in cursor.fetchall()}
    except DatabaseError as exc:
        return [Error(f"Could not inspect the repair audit table: {exc}", id="console.E101")]
    missing = [t for t in AUDIT_TRIGGERS if t not in present]
    if missing:
        return [Error(f"The repair audit is not append-only: trigger(s) {', '.join(missing)} missing or disabled "
                      "on console_repairaudit.", hint="Re-run migration console 0002 (or re-create and enable the "
                      "triggers); never disable them.", id="console.E100")]
    return []
