"""System checks on the database roles (run by `manage.py check --database default`).

On a configured database the console and the qcluster run as a runtime role that cannot alter
the audit tables (deploy/sql/roles.sql, `manage.py db_roles`); a role that could is reported.
It is a warning, not an error, so that the owner role can still run `migrate` (which runs these
checks too); `check --database default --fail-level WARNING` as the runtime role fails on it.
"""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import connections
from django.db.utils import DatabaseError

from console.checks import append_only_check
from console.security.sql import AUDIT_TABLE_ALTERABLE

# Every append-only table (the ones that exist are checked): repair audit, role changes,
# workflow notes, notification acknowledgements, silences and their endings, cordons and their
# lifts, break-glass sign-ins. deploy/sql/roles.sql lists the same.
AUDIT_TABLES = ("console_repairaudit", "console_rolechangeaudit", "console_workflownote",
                "console_notificationacknowledgement", "console_silence", "console_silenceending",
                "recovery_cordon", "recovery_cordonlift", "console_breakglasssignin")
_WAYS = (("superuser", "is a superuser"), ("owner", "owns it (or may act as its owner)"),
         ("can_update", "may UPDATE"), ("can_delete", "may DELETE"), ("can_truncate", "may TRUNCATE"),
         ("can_trigger", "may create triggers on it"), ("audit_test_role", "is a member of tidy_audit_test"))


def audit_alteration_problems(cursor) -> list[str]:
    """One line per audit table the connected role could change or empty, naming how."""
    cursor.execute(AUDIT_TABLE_ALTERABLE, {"tables": list(AUDIT_TABLES)})
    columns = [c.name for c in cursor.description]
    problems = []
    for values in cursor.fetchall():
        row = dict(zip(columns, values, strict=True))
        ways = [text for key, text in _WAYS if row[key]]
        if ways:
            problems.append(f"role {row['role_name']!r} {', '.join(ways)} on {row['table_name']}")
    return problems


@register(Tags.database)
def check_runtime_role_cannot_alter_the_audit(app_configs=None, databases=None, **kwargs):
    if not databases or "default" not in databases or settings.EMBEDDED_DATABASE:
        return []  # the embedded development database runs as its superuser on purpose
    try:
        with connections["default"].cursor() as cursor:
            problems = audit_alteration_problems(cursor)
    except DatabaseError as exc:
        return [Error(f"Could not inspect the database roles: {exc}", id="console.E111")]
    if not problems:
        return []
    return [Warning("The database role could alter the audit: " + "; ".join(problems) + ".",
                    hint="Run the console and the qcluster as the runtime role that `manage.py db_roles` "
                         "(deploy/sql/roles.sql) sets up; only migrations run as the owner role.",
                    id="console.W110")]


check_role_change_audit_is_append_only = register(append_only_check(
    subject="The role-change audit", table="console_rolechangeaudit", migration="0005_role_change_audit",
    error_id="console.E102", inspect_error_id="console.E103"), Tags.database)
