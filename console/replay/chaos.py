"""Chaos: real traffic while the processes and the database fail, then the invariants
(docs/architecture.md §7, "Chaos").

The web server (gunicorn, two workers), a qcluster (two workers, the recovery schedule) and the
WCS simulator (creating workflows and driving their jobs, with dropped acknowledgements,
duplicates and late reports) run as their own processes, as `run_console` starts them. Every
`fault_every` seconds one fault, in turn: a web worker SIGKILLed, a qcluster worker SIGKILLed,
every database connection terminated, the database crash-restarted (when the run may do that).
Meanwhile /metrics is scraped twice a second. At the end the traffic stops, recovery settles,
and the run checks:

- no tray booked in two places, none standing in two spaces (or where its stock is not);
- every completed step archived exactly once, with one finish event;
- no lock left on a completed workflow;
- no failed cycle: a cycle that started and ended with an error other than the database being
  unreachable (`RecoveryCycle.database_unreachable`). A cycle whose process was SIGKILLed never
  ended; it is counted, not failed;

and reports the longest gap between successful cycles (from the cycles' rows) and the oldest
`tidy_recovery_last_success_age_seconds` /metrics showed.
"""

import contextlib
import os
import random
import secrets
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from console.replay import database as db
from console.replay.journal import Timeline
from console.replay.processes import Child, Processes, _children_of, free_port
from recovery.models import CallbackReceipt, RecoveryCycle
from recovery.runtime.lease import connect_direct

FAULTS = ("web worker SIGKILL", "qcluster worker SIGKILL", "every connection terminated", "database crash-restart")


@dataclass
class ChaosOptions:
    minutes: float = 2.5
    log_dir: Path = Path("chaos-logs")
    interval: int = 2  # RECOVERY_INTERVAL_SECONDS of the qcluster
    fault_every: float = 10.0
    seed: int | None = None
    trays: int = 40
    # Stops the database as a crash would and starts it again; None: that fault is left out.
    restart_database: Callable[[], None] | None = None
    simulator_rate: float = 15.0


@dataclass
class ChaosResult:
    started_at: object = None
    traffic_ended_at: object = None
    finished_at: object = None
    faults: list[str] = field(default_factory=list)
    workflows: dict[str, int] = field(default_factory=dict)
    callbacks: int = 0
    cycles_succeeded: int = 0
    cycles_unreachable: int = 0  # ended failed because the database could not be reached
    cycles_never_ended: int = 0  # their process was SIGKILLed mid-cycle
    failed_cycles: list[dict] = field(default_factory=list)
    longest_gap_seconds: float = 0.0
    longest_metrics_age_seconds: float = 0.0
    metrics_scrapes: int = 0
    violations: dict[str, list] = field(default_factory=dict)
    dead_processes: list[str] = field(default_factory=list)
    timeline: Timeline = field(default_factory=Timeline)

    @property
    def passed(self) -> bool:
        return not self.failed_cycles and not any(self.violations.values()) and not self.dead_processes

    def summary(self) -> str:
        lines = [
            f"chaos {'PASSED' if self.passed else 'FAILED'}: {len(self.faults)} faults, workflows {self.workflows}, "
            f"{self.callbacks} callbacks",
            f"cycles: {self.cycles_succeeded} succeeded, {self.cycles_unreachable} ended for want of the database, "
            f"{self.cycles_never_ended} never ended (process killed), {len(self.failed_cycles)} failed",
            f"longest gap between successful cycles: {self.longest_gap_seconds:.1f} s; oldest "
            f"tidy_recovery_last_success_age_seconds on /metrics: {self.longest_metrics_age_seconds:.1f} s "
            f"({self.metrics_scrapes} scrapes)",
        ]
        lines += [f"  fault: {fault}" for fault in self.faults]
        for name, rows in self.violations.items():
            if rows:
                lines.append(f"  VIOLATED {name}: {rows[:10]}")
        lines += [f"  FAILED cycle {cycle}" for cycle in self.failed_cycles[:10]]
        lines += [f"  DEAD {name}" for name in self.dead_processes]
        return "\n".join(lines)


def _seed_trays(count: int, run: str) -> None:
    """`count` trays with stock in their own spaces, and as many empty spaces: what the simulator
    creates its tidy workflows from."""
    full = [f"CHAOS-{run}-A{i:03d}" for i in range(count)]
    empty = [f"CHAOS-{run}-B{i:03d}" for i in range(count)]
    trays = [f"CHAOS-{run}-T{i:03d}" for i in range(count)]
    with connection.cursor() as cursor:
        cursor.execute(db.INSERT_SPACES, {"spaces": full + empty, "trays": trays + [None] * count})
        cursor.execute(db.INSERT_STOCK, {"trays": trays, "spaces": full, "skus": ["SKU-CHAOS"] * count,
                                         "qtys": [10] * count})


def _one_row(sql: str, params: dict | None = None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params or {})
        return cursor.fetchone()


class _Scraper(threading.Thread):
    """Scrapes /metrics twice a second and keeps the oldest last-success age it saw."""

    def __init__(self, url: str, token: str):
        super().__init__(name="chaos-metrics", daemon=True)
        self.url, self.token = url, token
        self.stop = threading.Event()
        self.oldest = 0.0
        self.scrapes = 0

    def run(self) -> None:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while not self.stop.wait(0.5):
            request = urllib.request.Request(self.url, headers={"Authorization": f"Bearer {self.token}"})
            try:
                with opener.open(request, timeout=2) as response:
                    body = response.read().decode()
            except OSError:
                continue  # the web worker or the database is down for a moment
            for family in text_string_to_metric_families(body):
                if family.name == "tidy_recovery_last_success_age_seconds":
                    self.oldest = max(self.oldest, family.samples[0].value)
                    self.scrapes += 1


def _kill_a_qcluster_worker(procs: Processes, qcluster: Child, rng: random.Random, *, the_runner: bool) -> str:
    """SIGKILL one process under the qcluster's sentinel (a worker, the monitor or the pusher, as
    an OOM killer would pick it), or with `the_runner` the worker running the recovery runner
    (the newest cycle names its process)."""
    processes = [pid for child in _children_of(qcluster.pid) for pid in _children_of(child)]
    if the_runner:
        newest = RecoveryCycle.objects.order_by("-started_at").values_list("worker", flat=True).first() or ""
        runner = int(newest.rsplit(":", 1)[1]) if newest.rsplit(":", 1)[-1].isdigit() else None
        if runner in processes:
            processes = [runner]
    if not processes:
        return "qcluster worker SIGKILL: no process found"
    pid = rng.choice(processes)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    procs.timeline.add(f"SIGKILL qcluster process {pid}")
    return f"qcluster {'recovery runner ' if the_runner else ''}process {pid} SIGKILLed"


def _terminate_every_connection() -> str:
    cutter = connect_direct("tidy-chaos-cutter")
    try:
        cut = cutter.execute(db.CHAOS_TERMINATE_EVERY_SESSION).fetchone()[0]
    finally:
        cutter.close()
    connection.close()
    return f"every connection terminated ({cut} sessions)"


def run_chaos(options: ChaosOptions, *, out=print) -> ChaosResult:
    """Run the chaos for `options.minutes` and check the invariants (module docstring)."""
    rng = random.Random(options.seed)
    result = ChaosResult(started_at=timezone.now())
    run = secrets.token_hex(3)
    since = _one_row(db.CHAOS_HIGHEST_WORKFLOW)[0]
    _seed_trays(options.trays, run)
    procs = Processes(log_dir=Path(options.log_dir), timeline=result.timeline, token=secrets.token_urlsafe(24),
                      snapshot_url=f"http://127.0.0.1:{free_port()}/wcs/vehicle-snapshot")
    faults = [f for f in FAULTS if f != "database crash-restart" or options.restart_database is not None]
    scraper = None
    try:
        web = procs.start_web(workers=2, timeout=60)
        qcluster = procs.start_qcluster(extra_env={"RECOVERY_INTERVAL_SECONDS": str(options.interval),
                                                   "Q_WORKERS": "2"})
        procs.wait_startup_cycle(qcluster, timeout=120)
        simulator = procs.start_simulator(web, rate=options.simulator_rate, extra_args=[
            "--create-workflows", "--create-every", "1", "--max-active", str(max(4, options.trays // 3)),
            "--drop-ack", "0.15", "--duplicate", "0.15", "--late", "0.15", "--late-seconds", "2",
            *(["--seed", str(options.seed)] if options.seed is not None else [])])
        scraper = _Scraper(f"http://127.0.0.1:{web.port}/metrics", procs.metrics_token)
        scraper.start()
        out(f"chaos for {options.minutes} min: faults every {options.fault_every:.0f} s ({', '.join(faults)})")
        started = time.monotonic()
        end = started + options.minutes * 60
        turn = rng.randrange(len(faults))
        kills = 0
        while time.monotonic() < end:
            time.sleep(min(end - time.monotonic(), options.fault_every * rng.uniform(0.7, 1.3)))
            if time.monotonic() >= end:
                break
            fault = faults[turn % len(faults)]
            turn += 1
            at = time.monotonic() - started
            if fault == "web worker SIGKILL":
                done = f"web worker {procs.kill_worker(web)} SIGKILLed"
            elif fault == "qcluster worker SIGKILL":
                kills += 1
                done = _kill_a_qcluster_worker(procs, qcluster, rng, the_runner=kills % 2 == 1)
            elif fault == "every connection terminated":
                done = _terminate_every_connection()
            else:
                connection.close()
                options.restart_database()
                connection.close()
                done = "database crash-restarted"
            result.faults.append(f"{at:6.1f} s: {done}")
            out(f"  {at:6.1f} s: {done}")
        # The traffic stops; recovery gets a few intervals to settle what the last faults left.
        procs.stop(simulator)
        result.traffic_ended_at = timezone.now()
        time.sleep(4 * options.interval)
        result.dead_processes = [f"{c.name} exited with {c.popen.returncode}: {c.log_tail(5)}"
                                 for c in (web, qcluster) if not c.alive()]
    finally:
        if scraper is not None:
            scraper.stop.set()
            scraper.join(5)
            result.longest_metrics_age_seconds, result.metrics_scrapes = scraper.oldest, scraper.scrapes
        procs.stop_all()
        connection.close()
    result.finished_at = timezone.now()
    _check(result, since=since)
    return result


def _check(result: ChaosResult, *, since: int) -> None:
    params = {"since": since}
    with connection.cursor() as cursor:
        for name, sql in (("no tray booked in two places", db.CHAOS_TRAY_BOOKED_TWICE),
                          ("no tray standing in two spaces", db.CHAOS_TRAY_IN_TWO_SPACES),
                          ("every completed step archived once with one finish event",
                           db.CHAOS_COMPLETED_STEP_NOT_ONCE),
                          ("no lock left on a completed workflow", db.CHAOS_LOCK_ON_COMPLETED)):
            cursor.execute(sql, params)
            result.violations[name] = [list(row) for row in cursor.fetchall()]
        cursor.execute(db.CHAOS_WORKFLOW_COUNTS, params)
        result.workflows = dict(cursor.fetchall())
    cycles = RecoveryCycle.objects.filter(started_at__gte=result.started_at)
    result.cycles_succeeded = cycles.filter(outcome=RecoveryCycle.Outcome.SUCCEEDED).count()
    result.cycles_unreachable = cycles.filter(outcome=RecoveryCycle.Outcome.FAILED, database_unreachable=True).count()
    result.cycles_never_ended = cycles.filter(outcome=RecoveryCycle.Outcome.RUNNING).count()
    result.failed_cycles = list(cycles.filter(outcome=RecoveryCycle.Outcome.FAILED, database_unreachable=False)
                                .values("id", "worker", "started_at", "error_text"))
    # From the first successful cycle to the end of the traffic: a recovery that stopped for good
    # before the end is a gap up to the end.
    ends = list(cycles.filter(outcome=RecoveryCycle.Outcome.SUCCEEDED).order_by("finished_at")
                .values_list("finished_at", flat=True))
    if ends and result.traffic_ended_at is not None:
        ends.append(max(ends[-1], result.traffic_ended_at))
    result.longest_gap_seconds = max(((b - a).total_seconds() for a, b in zip(ends, ends[1:], strict=False)),
                                     default=0.0)
    result.callbacks = CallbackReceipt.objects.filter(received_at__gte=result.started_at).count()


def run_restart_command(command: str) -> Callable[[], None]:
    """A crash-restart of a staging database by a command the operator gives (e.g.
    `sudo systemctl kill -s KILL postgresql && sudo systemctl start postgresql`)."""

    def restart() -> None:
        subprocess.run(command, shell=True, check=True, timeout=120)  # noqa: S602 - the operator's own command

    return restart
