#!/usr/bin/env python
"""Benchmark: the classification query, the classification and a full recovery cycle, with targets.

Seeds N active tidy workflows (10,000 by default, 100,000 with --large) of which about 1%
need action each run (a third missing their job, a third with a proven finish, a third
finished), then prints medians over several runs: the classification query alone (SQL + fetch, as the
cycle reads it), the classification (query + evidence objects + decide), the full cycle, their
ratios and the cycle's peak RSS growth, beside the targets.

--backlog SHARE instead seeds N workflows of which SHARE (e.g. 0.3) need a decision, as after an
outage, and runs bounded cycles back to back, as the runner does while a backlog is left, until
none is: it prints the time to drain, the longest cycle and the peak RSS growth.

Uses a private embedded database in /tmp unless --database-url (or DATABASE_URL) names a server;
there it TRUNCATES the WMS tables: never point it at a real WMS.

    .venv/bin/python bench/recovery_cycle.py [--workflows N | --large] [--runs 5]
    .venv/bin/python bench/recovery_cycle.py --large --backlog 0.3
    .venv/bin/python bench/recovery_cycle.py --database-url postgresql://postgres@127.0.0.1:5439/postgres
"""

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._setup import django_on_private_database, stop_private_database  # noqa: E402

# Targets (issue 14), by workflow count: classification and full cycle, in ms.
TARGETS = {10_000: {"classify": None, "cycle": 300}, 100_000: {"classify": 800, "cycle": 1500}}
BACKLOG_TARGETS = {"drain_s": 30, "longest_cycle_s": 5, "rss_mb": 50}


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRss:
    """Samples this process's resident set every few ms while the block runs: the peak growth
    over the RSS at its start."""

    def __enter__(self):
        self.start = self.peak = _rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss_bytes())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflows", type=int, default=10_000)
    parser.add_argument("--large", action="store_true", help="100,000 workflows")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backlog", type=float, metavar="SHARE",
                        help="share of the workflows needing a decision (0 < SHARE <= 1): time the drain")
    parser.add_argument("--runners", type=int, default=0, metavar="K",
                        help="with --backlog: K runner processes share RECOVERY_SHARDS=K leases")
    parser.add_argument("--database-url", help="run against this server (its WMS tables are truncated)")
    args = parser.parse_args()
    n = 100_000 if args.large else args.workflows
    if n < 100 or args.runs < 1:
        parser.error("--workflows must be at least 100 and --runs at least 1")
    if args.backlog is not None and not 0 < args.backlog <= 1:
        parser.error("--backlog must be a share between 0 and 1, e.g. 0.3")
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
        os.environ.setdefault("SECRET_KEY", "bench-only")
        # A configured database requires a callback token of full length; the bench sends none.
        os.environ.setdefault("WCS_CALLBACK_TOKEN", "bench-only-callback-token-" + "x" * 24)
        os.environ.setdefault("METRICS_TOKEN", "bench-only-metrics-token-" + "x" * 24)

    django_on_private_database("recovery-cycle")
    try:
        _server_line()
        if args.backlog is not None and args.runners:
            drain_with_runners(n, args.backlog, args.runners)
        elif args.backlog is not None:
            drain(n, args.backlog)
        else:
            run(n, args.runs)
    finally:
        stop_private_database()


def _server_line() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version'), current_setting('jit'), pg_jit_available()")
        version, jit, jit_available = cursor.fetchone()
    load = os.getloadavg()
    print(f"PostgreSQL {version}, server jit={jit} (available: {jit_available}); "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def _bare_query(sql: str, *, jit_off: bool) -> int:
    """The classification query as the cycle reads it (streamed, a chunk at a time), rows thrown away;
    with jit_off False, under the server's own JIT setting."""
    from django.db import connection, transaction

    from recovery.engine import evidence, wms_sql

    rows = 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(wms_sql.CLASSIFICATION_SETTINGS)
        if not jit_off:
            cursor.execute("SELECT set_config('jit', 'on', true)")
        for _ in cursor.cursor.stream(sql, size=evidence._STREAM_CHUNK):
            rows += 1
    return rows


def run(n: int, runs: int) -> None:
    from django.conf import settings
    from django.db import connection

    from recovery.demo.warehouse import BulkSeeder, truncate_wms_tables
    from recovery.engine import wms_sql
    from recovery.engine.cycle import ApplyWorkers, classify, run_cycle

    needing = max(3, n // 100)
    truncate_wms_tables()
    seeder = BulkSeeder()
    started = time.monotonic()
    seeder.seed("healthy", n - needing)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SELECT pg_jit_available()")
        jit_available = cursor.fetchone()[0]
    print(f"seeded {n - needing:,} healthy active workflows in {time.monotonic() - started:.1f} s; "
          f"each run adds {needing} needing action (1%)")

    query_ms, jit_ms, classify_ms, cycle_ms, rss_mb = [], [], [], [], []
    sql = wms_sql.classification()
    apply_workers = ApplyWorkers(settings.RECOVERY_APPLY_WORKERS)  # as a runner keeps them between its cycles
    for i in range(runs):
        seeder.seed_needing_action(needing)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        t = time.perf_counter()
        rows = _bare_query(sql, jit_off=True)
        query_ms.append((time.perf_counter() - t) * 1000)
        if jit_available:
            t = time.perf_counter()
            _bare_query(sql, jit_off=False)
            jit_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        changes = len(classify(keep=n, workers=apply_workers).needing)
        classify_ms.append((time.perf_counter() - t) * 1000)
        with PeakRss() as rss:
            t = time.perf_counter()
            report = run_cycle(max_decisions=n, max_seconds=600, apply_workers=apply_workers)
            cycle_ms.append((time.perf_counter() - t) * 1000)
        rss_mb.append(rss.growth_mb)
        applied = sum(report.decisions.values())
        print(f"run {i + 1}: {rows:,} active, {changes} need action, applied {applied}, "
              f"query {query_ms[-1]:.0f} ms" + (f" (server jit: {jit_ms[-1]:.0f} ms)" if jit_ms else "")
              + f", classify {classify_ms[-1]:.0f} ms, cycle {cycle_ms[-1]:.0f} ms, RSS +{rss_mb[-1]:.1f} MB")
        if applied != changes or not report.succeeded:
            raise SystemExit(f"cycle applied {applied} of {changes} decisions (errors={report.errors})")
    apply_workers.close()

    q, c, y, m = (statistics.median(x) for x in (query_ms, classify_ms, cycle_ms, rss_mb))
    target = TARGETS.get(n, {})
    print()
    print(f"workflows {n:,}, medians of {runs} runs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'figure':<34}{'measured':>12}   target")
    print(f"{'classification query (jit off)':<34}{q:>9.0f} ms")
    if jit_ms:
        j = statistics.median(jit_ms)
        print(f"{'classification query (jit on)':<34}{j:>9.0f} ms   (jit on / off: {j / q:.2f}x)")
    print(f"{'classification':<34}{c:>9.0f} ms   {_target(target.get('classify'), 'ms')}")
    print(f"{'full cycle (1% needing action)':<34}{y:>9.0f} ms   {_target(target.get('cycle'), 'ms')}")
    print(f"{'cycle peak RSS growth':<34}{m:>9.1f} MB   <= 50 MB")
    print(f"{'classification / query':<34}{c / q:>10.2f}x")
    print(f"{'cycle / query':<34}{y / q:>10.2f}x")
    print(f"{'decisions applied per second':<34}{needing / max(0.001, (y - c) / 1000):>10.0f}   >= 1000")


def _target(value, unit: str) -> str:
    return f"<= {value} {unit}" if value is not None else "-"


def drain(n: int, share: float) -> None:
    from django.conf import settings
    from django.db import connection

    from recovery.demo.warehouse import BulkSeeder, truncate_wms_tables
    from recovery.engine.cycle import ApplyWorkers, CarriedBacklog, run_cycle

    needing = max(3, round(n * share))
    truncate_wms_tables()
    seeder = BulkSeeder()
    started = time.monotonic()
    seeder.seed("healthy", n - needing)
    seeder.seed_needing_action(needing)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"seeded {n:,} active workflows, {needing:,} needing a decision ({share:.0%}), in "
          f"{time.monotonic() - started:.1f} s; budget per cycle: {settings.RECOVERY_CYCLE_MAX_DECISIONS} "
          f"decisions, {settings.RECOVERY_CYCLE_MAX_SECONDS} s")

    durations, applied_total = [], 0
    carried = CarriedBacklog()  # as the runner holding the lease keeps them between cycles
    apply_workers = ApplyWorkers(settings.RECOVERY_APPLY_WORKERS)
    with PeakRss() as rss:
        t0 = time.perf_counter()
        while True:
            t = time.perf_counter()
            report = run_cycle(carried=carried, apply_workers=apply_workers)
            durations.append(time.perf_counter() - t)
            applied = sum(report.decisions.values())
            applied_total += applied
            print(f"cycle {len(durations)}: {durations[-1]:.2f} s, applied {applied}, backlog {report.backlog}")
            if not report.succeeded:
                raise SystemExit(f"cycle failed: {report.error_text}")
            if report.backlog == 0:
                break
        drained = time.perf_counter() - t0
    apply_workers.close()
    print()
    print(f"workflows {n:,}, {share:.0%} needing a decision, load average {os.getloadavg()[0]:.2f}")
    print(f"{'figure':<34}{'measured':>12}   target")
    print(f"{'time to drain':<34}{drained:>10.1f} s   <= {BACKLOG_TARGETS['drain_s']} s")
    print(f"{'longest cycle':<34}{max(durations):>10.2f} s   <= {BACKLOG_TARGETS['longest_cycle_s']} s")
    print(f"{'cycles':<34}{len(durations):>10}")
    print(f"{'decisions applied':<34}{applied_total:>10,}")
    print(f"{'decisions per second':<34}{applied_total / drained:>10.0f}")
    print(f"{'peak RSS growth':<34}{rss.growth_mb:>9.1f} MB   <= {BACKLOG_TARGETS['rss_mb']} MB")
    if applied_total != needing:
        raise SystemExit(f"applied {applied_total} of {needing} decisions")


RUNNER = """
import os, sys
import django
django.setup()
with open("/proc/self/statm") as fh:
    print("rss", int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"), flush=True)
from recovery.runtime.tasks import run_recovery_runner
print(run_recovery_runner(seconds=float(sys.argv[1]), interval=float(sys.argv[2]), shards=int(sys.argv[3])),
      flush=True)
"""


def _vm(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def drain_with_runners(n: int, share: float, runners: int) -> None:
    """K real runner processes (recovery.runtime.tasks.run_recovery_runner, RECOVERY_SHARDS=K) drain the
    backlog; then every workflow must have exactly one decision."""
    import signal
    import subprocess
    from collections import Counter

    from django.db import connection

    from console.replay.processes import database_url
    from recovery.demo.warehouse import BulkSeeder, truncate_wms_tables
    from recovery.models import RecoveryCycle, RecoveryDecision

    needing = max(3, round(n * share))
    truncate_wms_tables()
    RecoveryDecision.objects.all().delete()
    RecoveryCycle.objects.all().delete()
    seeder = BulkSeeder()
    seeder.seed("healthy", n - needing)
    seeder.seed_needing_action(needing)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"seeded {n:,} active workflows, {needing:,} needing a decision ({share:.0%}); {runners} runner processes, "
          f"RECOVERY_SHARDS={runners}")
    # A configured database needs the production secrets at start-up (console/settings.py); the
    # runners never answer a callback, so any token of the required length will do.
    env = {**os.environ, "DATABASE_URL": database_url("tidy-bench-runner"),
           "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only"),
           "WCS_CALLBACK_TOKEN": os.environ.get("WCS_CALLBACK_TOKEN", "bench-only-" + "t" * 24),
           "METRICS_TOKEN": os.environ.get("METRICS_TOKEN", "bench-only-" + "m" * 24),
           "LOG_LEVEL": "WARNING", "RECOVERY_SHARDS": str(runners)}
    env.pop("EMBEDDED_DATABASE_URL", None)
    procs = [subprocess.Popen([sys.executable, "-c", RUNNER, "600", "10", str(runners)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(runners)]
    baseline = {p.pid: int(p.stdout.readline().split()[1]) for p in procs}
    t0 = time.perf_counter()
    while RecoveryDecision.objects.count() < needing:
        if any(p.poll() is not None for p in procs):
            raise SystemExit("a runner process ended early")
        time.sleep(0.1)
    drained = time.perf_counter() - t0
    growth = max(_vm(p.pid, "VmHWM") - baseline[p.pid] for p in procs) / 2**20
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        p.wait(timeout=30)
    cycles = list(RecoveryCycle.objects.exclude(duration_ms=None))
    decided = Counter(RecoveryDecision.objects.values_list("workflow_id", flat=True))
    twice = sum(1 for v in decided.values() if v > 1)
    # Unsharded (one runner) a cycle covers every workflow and records no shard.
    sample = RecoveryDecision.objects.select_related("cycle").only("workflow_id", "cycle__shard")[:5000]
    shards_ok = all(d.cycle.shard == (None if runners == 1 else d.workflow_id % runners) for d in sample)
    print()
    print(f"workflows {n:,}, {share:.0%} needing a decision, {runners} runners, load average {os.getloadavg()[0]:.2f}")
    print(f"{'figure':<34}{'measured':>12}   target")
    print(f"{'time to drain':<34}{drained:>10.1f} s   <= {BACKLOG_TARGETS['drain_s']} s")
    print(f"{'longest cycle':<34}{max(c.duration_ms for c in cycles) / 1000:>10.2f} s   "
          f"<= {BACKLOG_TARGETS['longest_cycle_s']} s")
    print(f"{'cycles':<34}{len(cycles):>10}")
    print(f"{'decisions per second':<34}{needing / drained:>10.0f}")
    print(f"{'peak RSS growth (largest runner)':<34}{growth:>9.1f} MB   <= {BACKLOG_TARGETS['rss_mb']} MB")
    print(f"{'workflows decided twice':<34}{twice:>10}   0")
    print(f"{'workflows decided':<34}{len(decided):>10,}   {needing:,}")
    print(f"{'decisions from their own shard':<34}{'yes' if shards_ok else 'NO':>10}")
    if twice or len(decided) != needing or not shards_ok:
        raise SystemExit("exactly-once check failed")


if __name__ == "__main__":
    main()
