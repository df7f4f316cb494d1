"""The main job: prepare the database, then run the web server and the qcluster side by side.

Without DATABASE_URL everything runs on the embedded PostgreSQL: the WMS schema is applied and
demo data loaded on first start, and the release step (`manage.py release`: migrations, cache
table, static files, schedules) runs at every start, since there is no separate deploy. With
DATABASE_URL the release step runs only with --release (production runs it once per deploy) and
the WMS schema is never applied implicitly (docs/architecture.md §1: the WMS owns those tables);
the command checks that it exists and says what is missing. Each start-up step is printed as it runs.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from console import devdb
from console.management.demo import DEMO_USERS_REFUSED, ensure_demo_note, ensure_demo_users
from recovery.engine.schema import missing_tables

GUNICORN_CONF = Path(settings.BASE_DIR) / "deploy" / "gunicorn.conf.py"
# How long the processes get to stop after Ctrl-C before they are killed.
STOP_GRACE_SECONDS = 15


class Command(BaseCommand):
    help = "Run the console: web server + qcluster with the recovery schedule (+ the demo WCS simulator)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-simulator", action="store_true", help="do not run the demo WCS simulator")
        parser.add_argument("--demo", action="store_true",
                            help="load the demo warehouse into a configured DATABASE_URL (the embedded one always "
                                 "gets it); demo accounts are only ever created on the embedded database")
        parser.add_argument("--release", action="store_true",
                            help="run the release step on a configured DATABASE_URL first (the embedded one always)")

    def handle(self, *args, **options):
        embedded = settings.EMBEDDED_DATABASE
        demo = embedded or options["demo"]
        if embedded or options["release"]:
            call_command("release", stdout=self.stdout._out)
        else:
            self._step("checking that the release step ran (migrations applied)", _require_release_done)
        if demo:
            self._step("applying the WMS schema (demo database)", lambda: call_command("wms_schema", verbosity=0))
        else:
            self._step("checking the WMS tables", _require_wms_tables)
        if demo:
            self._step("loading the demo warehouse (first start only)",
                       lambda: call_command("wms_demo", "--if-empty", stdout=self.stdout._out))
        # Demo warehouse data may go into a configured test database; demo accounts never do.
        credentials = self._step("creating the demo users", ensure_demo_users) if embedded else []
        if embedded:
            self._step("writing the demo's shift note (first start only)", ensure_demo_note)
        elif demo:
            self.stderr.write(self.style.WARNING(DEMO_USERS_REFUSED))

        # Links in notifications point at this server unless CONSOLE_BASE_URL says otherwise.
        os.environ.setdefault("CONSOLE_BASE_URL", f"http://{options['host']}:{options['port']}")

        base = [sys.executable, "manage.py"]
        processes = {
            "web": [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF),
                    "--bind", f"{options['host']}:{options['port']}"],
            "qcluster": [*base, "qcluster"],
        }
        if demo and not options["no_simulator"]:
            processes["simulator"] = [*base, "wcs_simulator", "--console-url",
                                      f"http://{options['host']}:{options['port']}", "--create-workflows",
                                      # the demo's stalled workflow stays stalled (a vehicle fault)
                                      "--leave-stalled-minutes", str(settings.STALLED_AFTER_MINUTES)]
        self.stdout.write(f"starting {', '.join(processes)} ...")

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


    def _step(self, what: str, step):
        self.stdout.write(f"{what} ...", ending="")
        self.stdout.flush()
        started = time.monotonic()
        result = step()
        self.stdout.write(f" done ({time.monotonic() - started:.1f} s)")
        return result


def _require_release_done() -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        raise CommandError("migrations are not applied: run `manage.py release` once per deploy "
                           "(or `run_console --release`)")


def _require_wms_tables() -> None:
    if missing := missing_tables():
        raise CommandError(f"WMS tables missing in DATABASE_URL: {', '.join(missing)}. "
                           "They belong to the WMS; for a test database run `manage.py wms_schema`.")


def _supervise(commands: dict[str, list[str]], out) -> None:
    """Start every process; when one exits or we are signalled, stop them all.

    Each child runs in its own process group and is stopped as a terminal's Ctrl-C would stop
    it, SIGINT to the whole group, whatever stopped us: the qcluster's workers (which ignore
    SIGINT) keep their tasks, but a recovery runner among them ends after its cycle in hand
    (docs/architecture.md §7), so the cluster ends within the grace period. A group still alive
    after it is killed whole, so no worker outlives the embedded database."""
    children = {name: subprocess.Popen(cmd, env=os.environ.copy(), start_new_session=True)
                for name, cmd in commands.items()}
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
            _signal_group(proc, signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for name, proc in children.items():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                out.write(f"{name} did not stop within {STOP_GRACE_SECONDS} s; killing it")
            _signal_group(proc, signal.SIGKILL)  # whatever of its group is left (none, normally)


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)
