from django.apps import AppConfig


class RecoveryConfig(AppConfig):
    name = "recovery"
    verbose_name = "Tidy recovery"

    def ready(self):
        # Connect the receivers: the cluster start-up cycle; a qcluster task's id on its log lines.
        from recovery.logs import oplog  # noqa: F401
        from recovery.logs.logcontext import set_drop_reporter
        from recovery.logs.logdrops import record_log_drops
        from recovery.runtime import signals  # noqa: F401

        # Dropped log lines are counted per process and written for /metrics (recovery.logs.logdrops).
        set_drop_reporter(record_log_drops)
