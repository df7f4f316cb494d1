"""`manage.py replay`: run the recovery replay (console/replay) and write its report."""

import signal
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from console.replay.database import ReplayRefused
from console.replay.report import write_report
from console.replay.runner import ReplayOptions, restore_backup, run_replay
from console.replay.scenarios import PROFILES, SCENARIOS, ScenarioFailed


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = ("Replay every failure boundary with the real processes (web server, qcluster, WCS simulator) on a "
            "verified backup of the database, restore it and compare it row by row (mismatches=[]). Exits "
            "non-zero when a scenario fails or the restored database differs from its baseline.")

    def add_arguments(self, parser):
        parser.add_argument("--scenario", action="append", dest="scenarios", metavar="NAME",
                            help="run only this scenario (repeatable); --list shows the names")
        parser.add_argument("--profile", choices=sorted(PROFILES), default="full",
                            help="short: fastest variant of every scenario (CI); full (default): also waits for "
                                 "the scheduled recovery runner and drives the simulator with faults")
        parser.add_argument("--report", type=Path, default=None, metavar="DIR",
                            help="where to write report.html, report.json and logs/ "
                                 "(default: replay-reports/<timestamp>/)")
        parser.add_argument("--web-port", type=int, default=None,
                            help="port of the replay's web server (default: a free one)")
        parser.add_argument("--snapshot-port", type=int, default=None,
                            help="port of the simulator's vehicle snapshot (default: free)")
        parser.add_argument("--i-understand-this-writes", action="store_true", dest="allow_configured",
                            help="allow a run against a configured DATABASE_URL (it is restored afterwards)")
        parser.add_argument("--allow-other-sessions", action="store_true",
                            help="run although other sessions are connected (their writes would be undone)")
        parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
        parser.add_argument("--restore-backup", metavar="SCHEMA",
                            help="restore the backup schema an interrupted run kept, compare, and exit")

    def handle(self, *args, **o):
        if o["list"]:
            for s in SCENARIOS:
                self.stdout.write(f"{s.name:40} {s.title} ({s.window})")
            return
        out = self.stdout.write
        try:
            if o["restore_backup"]:
                if restore_backup(o["restore_backup"], out=out):
                    raise CommandError("the restored database still differs from the backup (listed above)")
                return
            # A SIGTERM (a CI timeout, a supervisor) ends the run like Ctrl-C: the processes are
            # stopped, the database restored and compared, and the report written.
            signal.signal(signal.SIGTERM, _interrupt)
            result = run_replay(ReplayOptions(
                scenarios=o["scenarios"], profile=o["profile"], report_dir=o["report"], web_port=o["web_port"],
                snapshot_port=o["snapshot_port"], allow_configured_database=o["allow_configured"],
                allow_other_sessions=o["allow_other_sessions"]), out=out)
        except (ReplayRefused, ScenarioFailed) as exc:
            raise CommandError(str(exc)) from None
        html, json_path = write_report(result)
        out(result.outbound_statement)
        out(f"report: {html}\n        {json_path}")
        if not result.passed:
            reasons = []
            if result.error:
                reasons.append(result.error)
            if result.failed_scenarios:
                reasons.append(f"failed scenarios: {', '.join(result.failed_scenarios)}")
            if result.mismatches != []:
                reasons.append("the restored database differs from its baseline" if result.mismatches
                               else "the database was not compared with its baseline")
            if result.task_state_requests or result.unexpected_requests:
                reasons.append("unexpected outbound requests (see the report)")
            raise CommandError("replay FAILED: " + "; ".join(reasons))
        self.stdout.write(self.style.SUCCESS(f"replay passed in {result.duration_s} s"))
