from django.apps import AppConfig
from django.core.checks import Tags, register

from console.checks import check_audit_is_append_only


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        register(check_audit_is_append_only, Tags.database)
        from console import floor_checks  # noqa: F401  (registers the notes' append-only system check)
