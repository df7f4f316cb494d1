"""`manage.py release`: the once-per-deploy step, idempotent."""

import io

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django_q.models import Schedule

from console.analytics.schedule import SCHEDULE_NAME as ANALYTICS
from console.notifications.schedule import SCHEDULE_NAME as NOTIFICATIONS
from recovery.runtime.retention import SCHEDULE_NAME as RETENTION
from recovery.runtime.schedule import SCHEDULE_NAME as RECOVERY

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def test_it_prepares_everything_once_and_says_each_step(transactional_db, settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "static"
    Schedule.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS tidy_cache")
    for _ in range(2):
        out = io.StringIO()
        call_command("release", stdout=out)
    text = out.getvalue()
    for step in ("applying migrations", "creating the cache table", "collecting static files",
                 "declaring the recovery schedule", "declaring the journal retention schedule",
                 "declaring the notification schedule", "declaring the analytics schedule", "complete"):
        assert step in text
    assert sorted(Schedule.objects.values_list("name", flat=True)) == sorted([RECOVERY, RETENTION, NOTIFICATIONS,
                                                                                   ANALYTICS])
    assert (tmp_path / "static" / "console" / "console.css").exists()
    cache.set("release-check", 42)  # the shared database cache works
    assert cache.get("release-check") == 42
