"""`manage.py notify --once`, run as the separate process operations would run: one evaluation
and one delivery run against the database, to a real HTTP receiver; non-zero when the run failed."""

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

from console.models import Notification, NotificationDelivery
from tests.notification_support import WebhookReceiver, free_port, recovery_is_fresh

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[3]


def _test_database_url() -> str:
    """The URL of the database this test run uses (its test database), for a child process."""
    parts = urlsplit(os.environ.get("DATABASE_URL") or os.environ["EMBEDDED_DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


def notify(*args, database_url: str | None = None, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "EMBEDDED_DATABASE_URL", "TIDY_TEST_OWNS_EMBEDDED_DB"}}
    full.update({"DJANGO_SETTINGS_MODULE": "console.settings",
                 "EMBEDDED_DATABASE_URL": database_url or _test_database_url(), **env})
    return subprocess.run([sys.executable, "manage.py", "notify", *args], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=120)


def test_it_evaluates_and_delivers_once_as_the_schedule_does(notify_db):
    recovery_is_fresh()
    built = notify_db.build("paused")
    receiver = WebhookReceiver()
    try:
        result = notify("--once", NOTIFY_WEBHOOK_URL=receiver.url, NOTIFY_GROUP_WAIT_SECONDS="0",
                        NOTIFY_PAUSED_TOO_LONG_MINUTES="10000")
    finally:
        receiver.stop()
    assert result.returncode == 0, result.stderr
    assert "opened 1" in result.stdout and "sent 1" in result.stdout and "failed 0" in result.stdout
    (hook,) = [r.json() for r in receiver.requests]
    assert (hook["event"], hook["workflow_ids"]) == ("paused", [built.workflow_id])
    (n,) = Notification.objects.all()
    assert list(n.deliveries.values_list("channel", "state")) == [("webhook", "sent")]

    again = notify("--once", NOTIFY_WEBHOOK_URL=receiver.url, NOTIFY_GROUP_WAIT_SECONDS="0",
                   NOTIFY_PAUSED_TOO_LONG_MINUTES="10000")
    assert again.returncode == 0 and "opened 0" in again.stdout and "sent 0" in again.stdout


def test_a_receiver_that_is_down_is_a_failed_delivery_not_a_failed_run(notify_db):
    recovery_is_fresh()
    notify_db.build("paused")
    result = notify("--once", NOTIFY_WEBHOOK_URL=f"http://127.0.0.1:{free_port()}/hooks/tidy",
                    NOTIFY_GROUP_WAIT_SECONDS="0", NOTIFY_PAUSED_TOO_LONG_MINUTES="10000")
    assert result.returncode == 0, result.stderr
    assert "failed 1" in result.stdout
    (d,) = NotificationDelivery.objects.all()
    assert (d.state, d.attempts) == ("pending", 1)  # retried by the next run


def test_it_exits_non_zero_when_the_run_itself_failed(notify_db):
    url = urlsplit(_test_database_url())
    unreachable = urlunsplit(url._replace(netloc=f"nobody@127.0.0.1:{free_port()}", query=""))
    result = notify("--once", database_url=unreachable)
    assert result.returncode != 0
    assert "notification run failed: OperationalError" in result.stderr
    assert Notification.objects.count() == 0


def test_without_once_it_says_how_and_does_nothing(notify_db):
    notify_db.build("paused")
    result = notify()
    assert result.returncode != 0 and "--once" in result.stderr
    assert Notification.objects.count() == 0


@pytest.mark.parametrize("value", ["soon", "-1", "3601"])
def test_a_bad_group_wait_stops_the_program_naming_it(value):
    from tests.ops.test_configuration import _manage

    result = _manage("check", SECRET_KEY="x", DATABASE_URL="postgresql://localhost/tidy", WCS_CALLBACK_TOKEN="t" * 24,
                     NOTIFY_GROUP_WAIT_SECONDS=value)
    assert result.returncode != 0
    assert "NOTIFY_GROUP_WAIT_SECONDS" in result.stderr and "ImproperlyConfigured" in result.stderr
