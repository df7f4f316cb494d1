"""The main job: prepare the database, then run the web server and the qcluster side by side.

Without DATABASE_URL everything runs on the embedded PostgreSQL: the WMS schema is applied and
demo data loaded on first start. With DATABASE_URL the WMS schema is never applied implicitly
(docs/architecture.md §1: the WMS owns those tables); the command checks that it exists and says what is missing.
"""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from console import devdb
from console.demo import DEMO_USERS_REFUSED, ensure_demo_note, ensure_demo_users
from console.notifications.schedule import ensure_notification_schedule
from recovery.schedule import ensure_recovery_schedule
from recovery.schema import missing_tables


class Command(BaseCommand):
    help = "Run the console: web server + qcluster with the recovery schedule (+ the demo WCS simulator)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-simulator", action="store_true", help="do not run the demo WCS simulator")
        parser.add_argument("--demo", action="store_true",
                            help="load the demo warehouse into a configured DATABASE_URL (the embedded one always "
                                 "gets it); demo accounts are only ever created on the embedded database")

    def handle(self, *args, **options):
        embedded = settings.EMBEDDED_DATABASE
        demo = embedded or options["demo"]
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)  # whitenoise serves STATIC_ROOT
        if demo:
            call_command("wms_schema", verbosity=0)
        elif missing := missing_tables():
            raise CommandError(f"WMS tables missing in DATABASE_URL: {', '.join(missing)}. "
                               "They belong to the WMS; for a test database run `manage.py wms_schema`.")
        ensure_recovery_schedule()
        ensure_notification_schedule()
        if demo:
            call_command("wms_demo", "--if-empty")
        # Demo warehouse data may go into a configured test database; demo accounts never do.
        credentials = ensure_demo_users() if embedded else []
        if embedded:
            ensure_demo_note()
        elif demo:
            self.stderr.write(self.style.WARNING(DEMO_USERS_REFUSED))

        # Links in notifications point at this server unless CONSOLE_BASE_URL says otherwise.
        os.environ.setdefault("CONSOLE_BASE_URL", f"http://{options['host']}:{options['port']}")
        base = [sys.executable, "manage.py"]
        processes = {
            "web": [sys.executable, "-m", "gunicorn", "console.wsgi:application", "--bind",
                    f"{options['host']}:{options['port']}", "--workers", "2", "--threads", "4",
                    "--access-logfile", "-"],
            "qcluster": [*base, "qcluster"],
        }
        if demo and not options["no_simulator"]:
            processes["simulator"] = [*base, "wcs_simulator", "--console-url",
                                      f"http://{options['host']}:{options['port']}", "--create-workflows",
                                      # the demo's stalled workflow stays stalled (a vehicle fault)
                                      "--leave-stalled-minutes", str(settings.STALLED_AFTER_MINUTES)]

        self.stdout.write(self.style.SUCCESS(
            f"\nTidy Recovery Console on http://{options['host']}:{options['port']}/"))
        for role, username, password in credentials:
            self.stdout.write(f"  sign in as {role:<11} user {username!r:<14} password {password!r}")
        configured = (("e-mail", settings.NOTIFY_EMAIL_TO), ("webhook", settings.NOTIFY_WEBHOOK_URL))
        channels = [name for name, on in configured if on] or ["the log (set NOTIFY_EMAIL_TO or NOTIFY_WEBHOOK_URL)"]
        self.stdout.write(f"  notifications every minute, delivered to {' and '.join(channels)}")
        self.stdout.write(f"  recovery cycle every {settings.RECOVERY_INTERVAL_SECONDS} s; Ctrl-C stops everything\n")
        try:
            _supervise(processes, self.stdout)
        finally:
            if embedded and os.environ.get("KEEP_EMBEDDED_DB") != "1":
                devdb.stop(settings.EMBEDDED_DB_DIR)
                self.stdout.write("embedded database stopped")


def _supervise(commands: dict[str, list[str]], out) -> None:
    """Start every process; when one exits or we are signalled, stop them all."""
    children = {name: subprocess.Popen(cmd, env=os.environ.copy()) for name, cmd in commands.items()}
    stopping = False

    def _stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        while not stopping:
            for name, proc in children.items():
                if proc.poll() is not None:
                    out.write(f"{name} exited with {proc.returncode}; stopping the console")
                    stopping = True
                    break
            time.sleep(0.5)
    finally:
        for proc in children.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in children.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
