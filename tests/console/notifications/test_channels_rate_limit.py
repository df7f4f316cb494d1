"""A chat channel's rate limit holds across processes (design §15): 25 groups in one vendor
minute to a 20-a-minute DingTalk robot, delivered by two separate processes each running the
qcluster's notification task in a loop, reach it as 20 in the first minute and 5 in the next, in
the order they were written, none lost and none refused. The vendor minute is shortened for the
test (NOTIFY_CHANNEL_MINUTE_SECONDS=3); the robot counts by its own clock over a sliding window
of the same length and answers 130101 past 20."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from console.models import NotificationDelivery, NotificationDeliveryAttempt
from console.notifications.evaluate import evaluate_notifications
from console.replay.processes import database_url
from tests.chat_receivers import ChatReceiver, configure_channels
from tests.console.notifications.test_groups import pause

pytestmark = [pytest.mark.usefixtures("committed_db"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
MINUTE = 3.0  # seconds: the vendor minute of this test

# Each process runs the scheduled task's function (console.notifications.tasks.run_notifications,
# what the qcluster runs every minute) back to back until nothing is left to send.
LOOP = """
import time, django
django.setup()
from console.models import NotificationDelivery
from console.notifications.tasks import run_notifications
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    run_notifications()
    if not NotificationDelivery.objects.filter(state="pending").exists():
        break
    time.sleep(0.05)
"""


def test_a_burst_of_25_groups_reaches_a_20_a_minute_robot_as_20_then_5_with_two_processes(
        notify_db, settings, tmp_path):
    from tests.notification_support import recovery_is_fresh

    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0
    recovery_is_fresh()
    robot = ChatReceiver("dingtalk", secret="SECburst", window_seconds=MINUTE)
    toml = f"""
[[channel]]
name = "floor-dingtalk"
kind = "dingtalk"
url = "{robot.url}"
secret = "SECburst"
"""
    configure_channels(settings, tmp_path, toml)
    for aisle in range(1, 26):  # 25 aisles, one paused workflow each: 25 groups
        pause(notify_db, 1, aisle_no=aisle)
    assert len(evaluate_notifications().opened) == 25
    assert NotificationDelivery.objects.filter(channel="chat").count() == 25

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "SECRET_KEY": settings.SECRET_KEY,
           "DATABASE_URL": database_url("tidy-qcluster"), "DEBUG": "1", "ALLOW_DEBUG_ON_CONFIGURED_DATABASE": "1",
           "WCS_CALLBACK_TOKEN": "dev-wcs-token-for-the-channels-test",
           "NOTIFY_CHANNELS_FILE": str(tmp_path / "channels.toml"),
           "NOTIFY_CHANNEL_MINUTE_SECONDS": str(int(MINUTE)), "NOTIFY_GROUP_WAIT_SECONDS": "0",
           "NOTIFY_PAUSED_TOO_LONG_MINUTES": "10000", "Q_SYNC": "0"}
    try:
        procs = [subprocess.Popen([sys.executable, "-c", LOOP], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for _ in range(2)]
        outputs = [p.communicate(timeout=60)[0] for p in procs]
    finally:
        robot.stop()
    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-3000:] for o in outputs)

    arrivals = [d.at for d in robot.accepted]
    assert robot.refused == [] and len(arrivals) == 25  # none lost, none refused (no 130101)
    first = arrivals[0]
    assert sum(1 for t in arrivals if t < first + MINUTE) == 20  # at most 20 in the first minute
    assert all(t >= first + MINUTE for t in arrivals[20:])  # the other 5 in the next
    assert arrivals[-1] < first + 2 * MINUTE + 2
    # In the order they were written: aisle A01 first, A25 last.
    titles = [d.body["markdown"]["title"] for d in robot.accepted]
    assert titles == [f"Workflow {w} paused: RECOVERY_JOB_MISSING" for w in range(1, 26)], titles
    assert set(NotificationDelivery.objects.values_list("state", flat=True)) == {"sent"}
    assert not NotificationDeliveryAttempt.objects.filter(ok=False).exists()
    assert NotificationDeliveryAttempt.objects.count() == 25
    assert {o.count("Traceback") for o in outputs} == {0}
    assert time.time() > first
