from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.core.checks import Tags, register


class ConsoleConfig(AppConfig):
    default = True  # this module also holds ConsoleAdminConfig
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        # The entry point of the app (the top of the console's layers, docs/architecture.md §2):
        # the append-only checks, and the signal receivers (role changes, the lockout log line,
        # each person's language at sign-in, the break-glass record, sign-in as a terminal's
        # activity, the log line of each repair attempt) and the database-role and sign-in source
        # checks, which register themselves when imported.
        from console import languages  # noqa: F401
        from console.cordons.checks import check_cordon_lifts_are_append_only, check_cordons_are_append_only
        from console.database import schema  # noqa: F401  (the search_path before migrating, on connecting)
        from console.identity import backends as identity_backends  # noqa: F401
        from console.identity import checks as identity_checks  # noqa: F401
        from console.notes.checks import check_notes_are_append_only
        from console.notifications.checks import (
            check_acknowledgements_are_append_only,
            check_chat_channels,
            check_silence_endings_are_append_only,
            check_silences_are_append_only,
        )
        from console.repair import signals  # noqa: F401
        from console.repair.checks import check_audit_is_append_only
        from console.replica.checks import check_replica_settings
        from console.security import checks, role_audit, terminals, throttling  # noqa: F401

        register(schema.check_console_schema_in_use, Tags.database)
        register(check_audit_is_append_only, Tags.database)
        register(check_acknowledgements_are_append_only, Tags.database)
        register(check_notes_are_append_only, Tags.database)
        register(check_cordons_are_append_only, Tags.database)
        register(check_cordon_lifts_are_append_only, Tags.database)
        register(check_silences_are_append_only, Tags.database)
        register(check_silence_endings_are_append_only, Tags.database)
        register(check_chat_channels)
        register(check_replica_settings)


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the console's admin site (superusers only, console/admin_site.py)."""

    default = False  # ConsoleConfig is the app's own
    default_site = "console.admin_site.ConsoleAdminSite"
