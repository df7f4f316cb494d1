from django.apps import AppConfig
from django.core.checks import Tags, register

from console.checks import check_audit_is_append_only
from console.floor_checks import check_notes_are_append_only
from console.notifications.checks import check_acknowledgements_are_append_only


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        register(check_audit_is_append_only, Tags.database)
        register(check_acknowledgements_are_append_only, Tags.database)
        register(check_notes_are_append_only, Tags.database)
        # Signal receivers (role changes, the lockout log line, each person's language at sign-in)
        # and the database-role checks.
        from console import (  # noqa: F401
            db_role_checks,
            languages,
            role_audit,
            security,
            signals,  # noqa: F401  (logs each repair attempt)
        )
