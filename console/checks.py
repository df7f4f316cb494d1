"""The shape of the append-only system checks (run by `manage.py check --database default` and
migrate): each feature with an append-only table declares its check with `append_only_check`,
and ConsoleConfig.ready() registers them."""

from django.core.checks import Error
from django.db import connections
from django.db.utils import DatabaseError

from console.readers.sql import APPEND_ONLY_TABLE_EXISTS, APPEND_ONLY_TRIGGERS


def missing_triggers(*, table: str, expected: tuple[str, ...]) -> list[str]:
    """The expected append-only triggers (docs/architecture.md §10) missing or disabled on a table;
    none while the table does not exist yet (migrate creates table and triggers together).
    A DatabaseError propagates: the caller names the table in its check error."""
    with connections["default"].cursor() as cursor:
        cursor.execute(APPEND_ONLY_TABLE_EXISTS, {"table": table})
        if not cursor.fetchone()[0]:
            return []
        cursor.execute(APPEND_ONLY_TRIGGERS, {"table": table})
        present = {row[0] for row in cursor.fetchall()}
    return [t for t in expected if t not in present]


def append_only_check(*, subject: str, table: str, migration: str, error_id: str, inspect_error_id: str,
                      app: str = "console"):
    """A system check that `table` carries its enabled append-only triggers
    (`<table>_no_update_delete`, `<table>_no_truncate`, docs/architecture.md §10)."""
    expected = (f"{table}_no_update_delete", f"{table}_no_truncate")

    def check(app_configs=None, databases=None, **kwargs):
        if not databases or "default" not in databases:
            return []
        try:
            missing = missing_triggers(table=table, expected=expected)
        except DatabaseError as exc:
            return [Error(f"Could not inspect the {table} table: {exc}", id=inspect_error_id)]
        if missing:
            return [Error(f"{subject} is not append-only: trigger(s) {', '.join(missing)} missing or disabled on "
                          f"{table}.", hint=f"Re-run migration {app} {migration} (or re-create and enable the "
                          "triggers); never disable them.", id=error_id)]
        return []

    return check
