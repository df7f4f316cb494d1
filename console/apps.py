from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        from console import role_audit, security  # noqa: F401  (signal receivers: role changes, lockout log)
