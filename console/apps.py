from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        from console import floor_checks  # noqa: F401  (registers the notes' append-only system check)
