from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Tidy Recovery Console"

    def ready(self):
        from console import signals  # noqa: F401  (logs each repair attempt)
