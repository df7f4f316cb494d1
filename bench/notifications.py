"""The notification evaluation after a crash: --workflows paused workflows in --aisles aisles
with one reason (a recovery storm), then one evaluation that opens what they cause and
--runs evaluations that only see them again (the every-minute steady state). Prints how many
notifications and outbox rows the storm made, and the evaluations' p50/max.

Builds its own embedded PostgreSQL in /tmp (never the development database).

    .venv/bin/python bench/notifications.py [--workflows 2000] [--aisles 40] [--runs 10]
"""

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._setup import django_on_private_database, stop_private_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workflows", type=int, default=2000)
    parser.add_argument("--aisles", type=int, default=40)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    django_on_private_database("notifications")
    try:
        run(args)
    finally:
        stop_private_database()


def run(args) -> None:
    from django.conf import settings
    from django.utils import timezone

    from console.models import Notification, NotificationDelivery
    from console.notifications.evaluate import evaluate_notifications
    from recovery.demo.warehouse import WarehouseBuilder, truncate_wms_tables
    from recovery.models import RecoveryCycle

    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    truncate_wms_tables()
    NotificationDelivery.objects.all().delete()
    Notification.objects.all().delete()
    builder = WarehouseBuilder()
    per_aisle = -(-args.workflows // args.aisles)
    for aisle in range(args.aisles):  # 200 spaces an aisle, 4 a workflow: at most 50 an aisle
        builder._space_no = itertools.count(1 + 200 * aisle)
        for _ in range(min(per_aisle, 50)):
            builder.build("paused")
    paused = min(per_aisle, 50) * args.aisles
    now = timezone.now()
    RecoveryCycle.objects.create(started_at=now, finished_at=now, outcome=RecoveryCycle.Outcome.SUCCEEDED)

    t0 = time.perf_counter()
    evaluate_notifications(now=now)
    storm_ms = (time.perf_counter() - t0) * 1000
    steady = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        evaluate_notifications(now=now)
        steady.append((time.perf_counter() - t0) * 1000)
    print(f"{paused} workflows paused in {args.aisles} aisles with one reason")
    print(f"  notifications opened: {Notification.objects.count()}, "
          f"outbox rows: {NotificationDelivery.objects.count()}")
    print(f"  first evaluation (opens them): {storm_ms:.0f} ms")
    print(f"  steady evaluation over {args.runs} runs: p50 {statistics.median(steady):.0f} ms, "
          f"max {max(steady):.0f} ms")


if __name__ == "__main__":
    main()
