"""The recovery schedule, declared in one place and idempotently (docs/architecture.md §7)."""

from django_q.models import Schedule

SCHEDULE_NAME = "tidy-recovery-runner"
RUNNER_FUNC = "recovery.tasks.run_recovery_runner"


def ensure_recovery_schedule(schedule_model=None):
    """Create or correct the one schedule row that fires the runner every minute."""
    return ensure_minutely_schedule(name=SCHEDULE_NAME, func=RUNNER_FUNC, schedule_model=schedule_model)


def ensure_minutely_schedule(*, name: str, func: str, schedule_model=None):
    """Create or correct the one schedule row `name` that runs `func` every minute, forever.

    django-q2 schedule names are not unique, so extra rows of the name are deleted; a migration
    passes its historical model (`apps.get_model("django_q", "Schedule")`)."""
    schedule_model = schedule_model or Schedule
    rows = list(schedule_model.objects.filter(name=name).order_by("id"))
    for extra in rows[1:]:
        extra.delete()
    fields = {"func": func, "schedule_type": "I", "minutes": 1, "repeats": -1}
    if rows:
        row = rows[0]
        changed = [k for k, v in fields.items() if getattr(row, k) != v]
        for key in changed:
            setattr(row, key, fields[key])
        if changed:
            row.save(update_fields=changed)
        return row
    return schedule_model.objects.create(name=name, **fields)
