"""The schedules, declared in one place and idempotently (docs/architecture.md §7)."""

from django.conf import settings
from django_q.models import Schedule

SCHEDULE_NAME = "tidy-recovery-runner"
SHARD_SCHEDULE_PREFIX = f"{SCHEDULE_NAME}-shard-"
RUNNER_FUNC = "recovery.tasks.run_recovery_runner"


def ensure_recovery_schedule(schedule_model=None, shards: int | None = None):
    """Create or correct the schedule row that fires the runner every minute, plus one more row
    per further shard (RECOVERY_SHARDS): as many runners start each minute as there are shards,
    on whichever clusters pick them up, and each takes its share of the shard leases."""
    schedule_model = schedule_model or Schedule
    shards = settings.RECOVERY_SHARDS if shards is None else shards
    wanted = {f"{SHARD_SCHEDULE_PREFIX}{n}" for n in range(1, shards)}
    schedule_model.objects.filter(name__startswith=SHARD_SCHEDULE_PREFIX).exclude(name__in=wanted).delete()
    for name in sorted(wanted):
        ensure_schedule(name=name, func=RUNNER_FUNC, schedule_model=schedule_model)
    return ensure_schedule(name=SCHEDULE_NAME, func=RUNNER_FUNC, schedule_model=schedule_model)


def ensure_schedule(*, name: str, func: str, minutes: int = 1, schedule_model=None):
    """Create or correct the one schedule row `name` that runs `func` every `minutes`, forever.

    django-q2 schedule names are not unique, so extra rows of the name are deleted; a migration
    passes its historical model (`apps.get_model("django_q", "Schedule")`)."""
    schedule_model = schedule_model or Schedule
    rows = list(schedule_model.objects.filter(name=name).order_by("id"))
    for extra in rows[1:]:
        extra.delete()
    fields = {"func": func, "schedule_type": "I", "minutes": minutes, "repeats": -1}
    if rows:
        row = rows[0]
        changed = [k for k, v in fields.items() if getattr(row, k) != v]
        for key in changed:
            setattr(row, key, fields[key])
        if changed:
            row.save(update_fields=changed)
        return row
    return schedule_model.objects.create(name=name, **fields)
