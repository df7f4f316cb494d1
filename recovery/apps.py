from django.apps import AppConfig


class RecoveryConfig(AppConfig):
    name = "recovery"
    verbose_name = "Tidy recovery"

    def ready(self):
        # Connect the receivers: the cluster start-up cycle; a qcluster task's id on its log lines.
        from recovery import oplog, signals  # noqa: F401
