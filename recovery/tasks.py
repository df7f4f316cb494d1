"""The path django-q2's schedule rows and queued tasks store for the recovery runner
("recovery.tasks.run_recovery_runner", recovery.runtime.schedule.RUNNER_FUNC): rows in existing
databases name it, so it stays, handing on the runner of recovery.runtime.tasks."""

from recovery.runtime.tasks import run_recovery_runner

__all__ = ["run_recovery_runner"]
