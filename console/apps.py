from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        # Signal receivers (role changes, the lockout log line) and the database-role checks.
        from console import db_role_checks, role_audit, security  # noqa: F401
