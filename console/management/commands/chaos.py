"""`manage.py chaos --minutes N`: the chaos run of the suite (console/replay/chaos.py), longer, for
a staging install. Exits non-zero when an invariant broke or a cycle failed."""

import signal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from console import devdb
from console.replay.chaos import ChaosOptions, run_chaos, run_restart_command


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = ("Run simulator traffic with faults while web workers, qcluster workers, database connections and the "
            "database itself fail, then check the invariants (no tray in two places, every completed step "
            "archived once with one finish event, no lock on a completed workflow, no failed cycle) and print "
            "the longest gap between successful recovery cycles. It starts its own web server, qcluster and "
            "simulator: stop the console first.")

    def add_arguments(self, parser):
        parser.add_argument("--minutes", type=float, default=2.5, help="how long the faults go on (default 2.5)")
        parser.add_argument("--fault-every", type=float, default=10.0, help="seconds between faults (default 10)")
        parser.add_argument("--interval", type=int, default=2,
                            help="RECOVERY_INTERVAL_SECONDS of the run's qcluster (default 2)")
        parser.add_argument("--seed", type=int, default=None, help="random seed (repeatable fault choices)")
        parser.add_argument("--logs", type=Path, default=Path(settings.BASE_DIR) / "chaos-logs",
                            help="where the processes' logs go (default chaos-logs/)")
        parser.add_argument("--database-restart-command", default=None, metavar="SHELL",
                            help="how to crash-restart a configured database (e.g. \"sudo systemctl kill -s KILL "
                                 "postgresql && sudo systemctl start postgresql\"); without it a configured "
                                 "database is never restarted, the embedded one always is")
        parser.add_argument("--i-understand-this-writes", action="store_true", dest="allowed",
                            help="run on a configured DATABASE_URL: the run creates trays, spaces and tidy "
                                 "workflows there (CHAOS-… names) and terminates every other session")

    def handle(self, *args, **o):
        if o["minutes"] <= 0 or o["fault_every"] <= 0 or o["interval"] <= 0:
            raise CommandError("--minutes, --fault-every and --interval must be positive")
        if not settings.EMBEDDED_DATABASE and not o["allowed"]:
            raise CommandError("DATABASE_URL is configured: the chaos run writes there and cuts every session. Run it "
                               "on a staging database with --i-understand-this-writes. Nothing was written.")
        if o["database_restart_command"]:
            restart = run_restart_command(o["database_restart_command"])
        elif settings.EMBEDDED_DATABASE:
            def restart():
                devdb.crash_stop(settings.EMBEDDED_DB_DIR)
                devdb.restart_after_crash(settings.EMBEDDED_DB_DIR)
        else:
            restart = None
            self.stdout.write("no --database-restart-command: the database is not crash-restarted in this run")
        signal.signal(signal.SIGTERM, _interrupt)
        result = run_chaos(ChaosOptions(minutes=o["minutes"], log_dir=o["logs"], interval=o["interval"],
                                        fault_every=o["fault_every"], seed=o["seed"], restart_database=restart),
                           out=self.stdout.write)
        self.stdout.write(result.summary())
        self.stdout.write(f"logs: {o['logs']}")
        if not result.passed:
            raise CommandError("the chaos run failed (see above)")
