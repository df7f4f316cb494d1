"""The notification schedule, declared in one place and idempotently (like recovery's)."""

from recovery.runtime.schedule import ensure_schedule

SCHEDULE_NAME = "tidy-notifications"
TASK_FUNC = "console.notifications.tasks.run_notifications"


def ensure_notification_schedule(schedule_model=None):
    """Create or correct the one schedule row that evaluates and delivers every minute."""
    return ensure_schedule(name=SCHEDULE_NAME, func=TASK_FUNC, schedule_model=schedule_model)
