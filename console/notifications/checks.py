"""System check: acknowledgements stay append-only (migration console 0003's triggers)."""

from django.core.checks import Error, Tags, register
from django.db import connections
from django.db.utils import DatabaseError

from console import console_sql

TRIGGERS = ("console_notificationacknowledgement_no_update_delete",
            "console_notificationacknowledgement_no_truncate")


@register(Tags.database)
def check_acknowledgements_are_append_only(app_configs=None, databases=None, **kwargs):
    if not databases or "default" not in databases:
        return []
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute(console_sql.ACKNOWLEDGEMENT_TABLE_EXISTS)
            if not cursor.fetchone()[0]:
                return []  # not migrated yet: migrate creates table and triggers together
            cursor.execute(console_sql.ACKNOWLEDGEMENT_TRIGGERS)
            present = {row[0] for row in cursor.fetchall()}
    except DatabaseError as exc:
        return [Error(f"Could not inspect the acknowledgement table: {exc}", id="console.E111")]
    missing = [t for t in TRIGGERS if t not in present]
    if missing:
        return [Error(f"Notification acknowledgements are not append-only: trigger(s) {', '.join(missing)} missing "
                      "or disabled.", hint="Re-run migration console 0003 (or re-create and enable the triggers).",
                      id="console.E110")]
    return []
