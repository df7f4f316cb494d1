from django.apps import AppConfig


class RecoveryConfig(AppConfig):
    name = "recovery"
    verbose_name = "Tidy recovery"

    def ready(self):
        from recovery import signals  # noqa: F401  (connects the cluster start-up cycle)
