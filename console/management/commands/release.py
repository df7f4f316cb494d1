"""The release step: run once per deploy (not at every process start), before the new web
servers and qclusters start. Idempotent, so running it twice is harmless.

Applies migrations, creates the shared cache table, collects static files (hashed names when
DEBUG is off) and declares the recovery, retention and notification schedules.
"""

import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from console.analytics.schedule import ensure_analytics_schedule
from console.notifications.schedule import ensure_notification_schedule
from recovery.runtime.retention import ensure_retention_schedule
from recovery.runtime.schedule import ensure_recovery_schedule


class Command(BaseCommand):
    help = "Release step of a deploy: migrations, cache table, static files, schedules (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--skip-static", action="store_true",
                            help="do not collect static files (e.g. they are built into the image)")

    def handle(self, *args, **options):
        steps = [
            ("applying migrations", lambda: call_command("migrate", interactive=False, verbosity=0)),
            ("creating the cache table", lambda: call_command("createcachetable", verbosity=0)),
        ]
        if not options["skip_static"]:
            steps.append((f"collecting static files into {settings.STATIC_ROOT}",
                          lambda: call_command("collectstatic", interactive=False, verbosity=0)))
        steps += [
            ("declaring the recovery schedule", ensure_recovery_schedule),
            ("declaring the journal retention schedule", ensure_retention_schedule),
            ("declaring the notification schedule", ensure_notification_schedule),
            ("declaring the analytics schedule", ensure_analytics_schedule),
        ]
        for what, step in steps:
            self.stdout.write(f"release: {what} ...", ending="")
            self.stdout.flush()
            started = time.monotonic()
            step()
            self.stdout.write(f" done ({time.monotonic() - started:.1f} s)")
        self.stdout.write(self.style.SUCCESS("release: complete"))
