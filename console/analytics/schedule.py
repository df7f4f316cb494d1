"""The analytics schedule, declared in one place and idempotently (like recovery's and the
notifications'): the figures are recomputed every ANALYTICS_REFRESH_MINUTES in the qcluster."""

from django.conf import settings
from django.utils import timezone

from recovery.runtime.schedule import ensure_schedule

SCHEDULE_NAME = "tidy-analytics"
TASK_FUNC = "console.analytics.tasks.refresh_analytics"


def ensure_analytics_schedule(schedule_model=None, minutes: int | None = None):
    """Create or correct the one schedule row that recomputes the analytics."""
    minutes = settings.ANALYTICS_REFRESH_MINUTES if minutes is None else minutes
    return ensure_schedule(name=SCHEDULE_NAME, func=TASK_FUNC, minutes=minutes, schedule_model=schedule_model)


def bring_forward(schedule_model=None) -> bool:
    """Queue one computation now (the page without a snapshot): the schedule's next run moves to
    now, so the cluster's scheduler runs it at its next look. One schedule row: never more than one
    computation pending, however many times the page asks. True when it moved."""
    from django_q.models import Schedule

    schedule_model = schedule_model or Schedule
    now = timezone.now()
    moved = schedule_model.objects.filter(name=SCHEDULE_NAME, next_run__gt=now).update(next_run=now)
    if not moved and not schedule_model.objects.filter(name=SCHEDULE_NAME).exists():
        row = ensure_analytics_schedule(schedule_model)
        schedule_model.objects.filter(pk=row.pk).update(next_run=now)
        return True
    return bool(moved)
