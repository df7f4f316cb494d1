"""The notification schedule, declared in one place and idempotently (like recovery's)."""

from django_q.models import Schedule

SCHEDULE_NAME = "tidy-notifications"
TASK_FUNC = "console.notifications.tasks.run_notifications"


def ensure_notification_schedule(schedule_model=None):
    """Create or correct the one schedule row that evaluates and delivers every minute."""
    schedule_model = schedule_model or Schedule
    rows = list(schedule_model.objects.filter(name=SCHEDULE_NAME).order_by("id"))
    for extra in rows[1:]:
        extra.delete()
    fields = {"func": TASK_FUNC, "schedule_type": "I", "minutes": 1, "repeats": -1}
    if rows:
        row = rows[0]
        changed = [k for k, v in fields.items() if getattr(row, k) != v]
        for key in changed:
            setattr(row, key, fields[key])
        if changed:
            row.save(update_fields=changed)
        return row
    return schedule_model.objects.create(name=SCHEDULE_NAME, **fields)
