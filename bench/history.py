#!/usr/bin/env python
"""Cost independent of history (design §16): the same live work on a small and a large history.

Builds the live work once (300 active workflows and 60 that one recovery cycle pauses), then a
history of completed workflows as a WMS keeps them: each with a step, an archived job and a
callback event, five callback receipts and the decision that completed it; every 10th an outbound
request; every 50th an observed decision; every 100th paused by recovery on the way (its decision,
its resolved notification and the repair that resumed it); recovery cycles every 30 seconds over
the same span. The history's rate is fixed (10,000 completed workflows a day), so --small
(10,000) is a day of it and --large (1,000,000) a hundred days. Retention's fold then moves the
journals' watermarks as the scheduled task does.

On the small history, then on the large (the same database, the history extended), it times
every console page, /metrics, a recovery cycle and a WCS callback (medians of --requests each,
after a warm-up) and prints a table with the ratio large / small; the goal is <= 1.5x for every
row. `history_bounded_plans()` EXPLAINs the statements bounded by a watermark or a time window;
tests/console/operations/test_history_plans.py runs the builder at a small scale and checks them.

Uses a private embedded database in /tmp unless --database-url names a server; there it
TRUNCATES the WMS tables and the journals: never point it at a real WMS.

    .venv/bin/python bench/history.py [--small 10000] [--large 1000000] [--requests 15]
    .venv/bin/python bench/history.py --database-url postgresql://postgres@127.0.0.1:5439/postgres
"""

import argparse
import math
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# History workflow ids start here (the live work's are small); one completes every PER_DAY-th of a day.
HISTORY_BASE = 10_000_000
PER_DAY = 10_000
RECEIPTS_PER_WORKFLOW = 5
USERNAME = "history-bench"

# The history rows of workflows %(lo)s..%(hi)s (1-based positions in the history: the higher,
# the older), set-based. Position g completed at now() - 1 hour - g days / PER_DAY.
HISTORY_SQL = [
    """INSERT INTO alg.tidy_workflow (workflow_id, origin, status, created_at, updated_at, completed_at)
       SELECT %(base)s + g, CASE WHEN g %% 3 = 0 THEN 'MANUAL' ELSE 'AUTOMATIC' END, 'COMPLETED',
              t - interval '20 minutes', t, t
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g,
            LATERAL (SELECT now() - interval '1 hour' - g * %(step)s::interval AS t) AS x""",
    # A step each, through the live rack's spaces (20,000 of them: a space sees many trays over the months).
    """INSERT INTO alg.tidy_step (step_id, workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id,
                                  status, completed_at)
       SELECT %(base)s + g, %(base)s + g, 1, 'HT-' || (g %% 50000), 'BS-' || (1 + g %% 20000),
              'BD-' || (1 + (g + 7) %% 20000), 'COMPLETED', now() - interval '1 hour' - g * %(step)s::interval
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g""",
    """INSERT INTO public.mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,
                                    created_at, updated_at, finished_at)
       SELECT 'TDY-' || (%(base)s + g) || '-' || (%(base)s + g), 28, 4, 'HT-' || (g %% 50000),
              'BS-' || (1 + g %% 20000), 'BD-' || (1 + (g + 7) %% 20000), t - interval '15 minutes', t, t
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g,
            LATERAL (SELECT now() - interval '1 hour' - g * %(step)s::interval AS t) AS x""",
    """INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage, received_at)
       SELECT %(base)s + g, %(base)s + g, 'TDY-' || (%(base)s + g) || '-' || (%(base)s + g), 'MOVE_FINISHED',
              now() - interval '1 hour' - g * %(step)s::interval
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g""",
    # Five receipts a workflow: three job-status reports, the finish and its duplicate.
    """INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, workflow_id, step_id, stage, job_status,
                                             wcs_event_id, http_status, outcome, message, payload, duration_ms,
                                             request_count, location, tray_code, unknown_fields_rest)
       SELECT now() - interval '1 hour' - g * %(step)s::interval - (5 - k) * interval '2 minutes',
              CASE WHEN k <= 3 THEN 'job-status' ELSE 'job-finish' END,
              'TDY-' || (%(base)s + g) || '-' || (%(base)s + g), %(base)s + g, %(base)s + g,
              CASE WHEN k <= 3 THEN '' ELSE 'MOVE_FINISHED' END, CASE WHEN k <= 3 THEN 1 + k END,
              'h-' || g || '-' || k, 200, CASE WHEN k = 5 THEN 'DUPLICATE' ELSE 'ACCEPTED' END, '', '{}'::jsonb,
              1.0 + (g + k) %% 40, 1, '', '', 0
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, generate_series(1, %(receipts)s) AS k""",
    # The decision that completed it (a callback's); every 100th was paused by recovery first (and
    # resumed by the repair audited below), every 50th has an observed recovery decision too.
    """INSERT INTO recovery_recoverydecision (source, decided_at, workflow_id, step_id, action, reason, rule,
                                              evidence, fingerprint, observed)
       SELECT 'CALLBACK', now() - interval '1 hour' - g * %(step)s::interval, %(base)s + g, %(base)s + g,
              'COMPLETE', '', 'ALL_STEPS_COMPLETED', '{}'::jsonb, md5(g::text), false
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
       UNION ALL
       SELECT 'RECOVERY', now() - interval '1 hour' - g * %(step)s::interval - interval '5 minutes', %(base)s + g,
              %(base)s + g, 'PAUSE', 'RECOVERY_JOB_MISSING', 'NO_JOB', '{}'::jsonb, md5(g::text), true
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
       WHERE g %% 50 = 0
       UNION ALL
       SELECT 'RECOVERY', now() - interval '1 hour' - g * %(step)s::interval - interval '10 minutes', %(base)s + g,
              %(base)s + g, 'PAUSE', 'RECOVERY_JOB_MISSING', 'NO_JOB', '{}'::jsonb, md5(g::text), false
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
       WHERE g %% 100 = 0""",
    # Recovery cycles over the same span, %(cycles_per_day)s a day (2,880: every 30 seconds).
    """INSERT INTO recovery_recoverycycle (started_at, finished_at, outcome, trigger, worker, examined,
                                           decision_counts, skipped, stale, errors, duration_ms, paused_total,
                                           error_text, backlog, shard_count, mode, database_unreachable)
       SELECT t, t + interval '400 ms', 'SUCCEEDED', 'SCHEDULED', 'bench', 300, '{}'::jsonb, 0, 0, 0, 400, 0,
              '', 0, 1, 'apply', false
       FROM generate_series((%(lo)s::bigint - 1) * %(cycles_per_day)s / %(per_day)s + 1,
                            %(hi)s::bigint * %(cycles_per_day)s / %(per_day)s) AS c,
            LATERAL (SELECT now() - interval '1 hour' - c * interval '1 day' / %(cycles_per_day)s AS t) AS x""",
    """INSERT INTO recovery_outboundhttprequest (started_at, purpose, method, url, status, duration_ms, error)
       SELECT now() - interval '1 hour' - g * %(step)s::interval, 'vehicle-snapshot', 'GET',
              'http://wcs.invalid/vehicles', 200, 12.0, ''
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
       WHERE g %% 10 = 0""",
    """INSERT INTO console_notification (event, dedup_key, state, severity, subject, body, workflow_id, reason,
                                        url_path, details, opened_at, last_seen_at, evaluations, resolved_at, aisle)
       SELECT 'paused', 'history:' || g, 'resolved', 'warning', 's', '', %(base)s + g, 'RECOVERY_JOB_MISSING',
              '/', '{}'::jsonb, t - interval '10 minutes', t - interval '5 minutes', 2, t, ''
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g,
            LATERAL (SELECT now() - interval '1 hour' - g * %(step)s::interval AS t) AS x
       WHERE g %% 100 = 0""",
    # Every notification acknowledged five minutes after it opened.
    """INSERT INTO console_notificationacknowledgement (notification_id, at, user_id, username)
       SELECT n.id, n.opened_at + interval '5 minutes', %(user_id)s, 'operator'
       FROM console_notification AS n
       WHERE n.dedup_key = ANY(ARRAY(SELECT 'history:' || g
                                     FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
                                     WHERE g %% 100 = 0))""",
    """INSERT INTO console_repairaudit (at, username, action, stage, workflow_id, step_id, pause_reason, reason_code,
                                       reason_text, inputs, fingerprint_previewed, fingerprint_before,
                                       fingerprint_after, changes, outcome, message, decision_after,
                                       consistent_after)
       SELECT now() - interval '1 hour' - g * %(step)s::interval - interval '5 minutes', 'operator', 'RECHECK', 'APPLY',
              %(base)s + g,
              %(base)s + g, 'RECOVERY_JOB_MISSING', 'verified_on_floor', '', '{}'::jsonb, '', '', '', '[]'::jsonb,
              'APPLIED', '', '', true
       FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
       WHERE g %% 100 = 0""",
]

# The history's tables: vacuumed and analysed after each build, as autovacuum would leave them.
HISTORY_TABLES = ("alg.tidy_workflow", "alg.tidy_step", "public.mydo_job_finish", "alg.tidy_callback_event",
                  "recovery_callbackreceipt", "recovery_recoverydecision", "recovery_recoverycycle",
                  "recovery_outboundhttprequest", "console_notification", "console_notificationacknowledgement",
                  "console_repairaudit")

TRUNCATE_JOURNALS = """
TRUNCATE recovery_callbackreceipt, recovery_recoverydecision, recovery_recoverycycle, recovery_outboundhttprequest,
         recovery_journaltotal, recovery_journalfold, console_notification CASCADE
"""

# The live work: (kind, count) through recovery.demo.warehouse.BulkSeeder; `missing` are paused
# by the first recovery cycle (the product's own path).
LIVE = (("healthy", 300), ("missing", 60))


def history_extend(lo: int, hi: int, *, per_day: int = PER_DAY, cycles_per_day: int = 2880) -> None:
    """Add history positions lo..hi (1-based), `per_day` completed workflows and `cycles_per_day`
    recovery cycles a day, and let retention fold the journals."""
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.db import connection

    from recovery.runtime.retention import journal_fold

    user, _ = User.objects.get_or_create(username=USERNAME)  # the acknowledgements' person
    params = {"lo": lo, "hi": hi, "user_id": user.pk, "base": HISTORY_BASE, "step": timedelta(days=1) / per_day,
              "receipts": RECEIPTS_PER_WORKFLOW, "per_day": per_day, "cycles_per_day": cycles_per_day}
    with connection.cursor() as cursor:
        for statement in HISTORY_SQL:
            cursor.execute(statement, params)
    journal_fold()
    # VACUUM cannot run in a transaction (a test's): there the statistics alone.
    maintenance = "ANALYZE" if connection.in_atomic_block else "VACUUM (ANALYZE)"
    with connection.cursor() as cursor:
        for table in HISTORY_TABLES:
            cursor.execute(f"{maintenance} {table}")


def live_work_build() -> None:
    """The live work, on emptied WMS tables and journals, and the user that reads the pages."""
    from django.contrib.auth.models import Group, User
    from django.db import connection

    from recovery.demo.warehouse import BulkSeeder, truncate_wms_tables
    from recovery.engine.cycle import run_cycle

    truncate_wms_tables()
    with connection.cursor() as cursor:
        cursor.execute(TRUNCATE_JOURNALS)
    seeder = BulkSeeder()
    for kind, count in LIVE:
        seeder.seed(kind, count)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    run_cycle()  # pauses the `missing` ones
    user, _ = User.objects.get_or_create(username=USERNAME)
    user.is_active = True
    user.save()
    user.groups.set(Group.objects.all())


def history_bounded_plans() -> dict[str, str]:
    """EXPLAIN of every statement bounded by a watermark or a time window, with the parameters the
    product gives it: statement name -> plan text."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from console.analytics import sql as analytics_sql
    from console.analytics.selectors import _params
    from console.operations import sql as operations_sql
    from console.operations.metrics import NEVER_FOLDED
    from console.readers import sql as readers_sql
    from console.repair.registry import resolving_actions
    from recovery.engine.callbacks import DURATION_BUCKETS
    from recovery.runtime import retention_sql

    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(operations_sql.JOURNAL_WATERMARKS)
        marks = dict(cursor.fetchall())
    since = {j: marks.get(j, NEVER_FOLDED) for j in ("callbacks", "decisions", "outbound")}
    statements = {
        "CALLBACK_COUNTS": (operations_sql.CALLBACK_COUNTS, {"since": since["callbacks"]}),
        "CALLBACK_DURATION_BUCKETS": (operations_sql.CALLBACK_DURATION_BUCKETS,
                                      {"since": since["callbacks"], "bounds": list(DURATION_BUCKETS)}),
        "RECOVERY_DECISION_COUNTS": (operations_sql.RECOVERY_DECISION_COUNTS, {"since": since["decisions"]}),
        "OUTBOUND_REQUEST_COUNTS": (operations_sql.OUTBOUND_REQUEST_COUNTS, {"since": since["outbound"]}),
        "WCS_LAST_HEARD_AGE": (operations_sql.WCS_LAST_HEARD_AGE, {}),
        "OBSERVED_OUTCOME_COUNTS": (operations_sql.OBSERVED_OUTCOME_COUNTS,
                                    {"since": now - timedelta(hours=24), "resolving_actions": resolving_actions()}),
        "READY_RECOVERY_FACTS": (readers_sql.READY_RECOVERY_FACTS, {"stale_after_seconds": 120}),
        "FOLD_CALLBACKS": (retention_sql.FOLD_CALLBACKS, {"since": since["callbacks"], "until": now}),
        "ANALYTICS_PERCENTILES": (analytics_sql.ANALYTICS_PERCENTILES,
                                  _params(now=now, since=now - timedelta(days=30), spaces=[])),
        "ANALYTICS_WEEKLY": (analytics_sql.ANALYTICS_WEEKLY,
                             _params(now=now, since=now - timedelta(weeks=12), spaces=[])),
        "ANALYTICS_SPACES": (analytics_sql.ANALYTICS_SPACES, {"since": now - timedelta(days=30)}),
        "COMPLETED_JOB_DURATIONS": (readers_sql.COMPLETED_JOB_DURATIONS, {"since": now - timedelta(hours=1)}),
    }
    plans = {}
    with connection.cursor() as cursor:
        for name, (sql, params) in statements.items():
            cursor.execute("EXPLAIN " + sql, params)
            plans[name] = "\n".join(row[0] for row in cursor.fetchall())
    return plans


# --- timing ------------------------------------------------------------------------------------


def pages() -> dict[str, tuple[str, dict]]:
    """Every console page a person reads, as (path, headers); the live work's ids."""
    from recovery.models import TidyWorkflow

    paused = TidyWorkflow.objects.filter(status="PAUSED_RECOVERY").order_by("workflow_id").first().workflow_id
    htmx = {"HX-Request": "true"}
    return {
        "dashboard": ("/", {}),
        "paused list": ("/paused/", {}),
        "paused list fragment": ("/paused/", htmx),
        "active list": ("/active/", {}),
        "workflow page": (f"/workflows/{paused}/", {}),
        "workflow live fragment": (f"/workflows/{paused}/", htmx),
        "case file (HTML)": (f"/workflows/{paused}/case-file.html", {}),
        "case file (JSON)": (f"/workflows/{paused}/case-file.json", {}),
        "locks": ("/locks/", {}),
        "search by tray": ("/search/?q=BT-5", {}),
        "search by space": ("/search/?q=BS-7", {}),
        "handover": ("/handover/", {}),
        "rack map": ("/map/", {}),
        "analytics": ("/analytics/", {}),
        "recovery": ("/recovery/", {}),
        "observe": ("/recovery/observe/", {}),
        "recovery processes": ("/recovery/processes/", {}),
        "flow": ("/flow/", {}),
        "notifications": ("/notifications/", {}),
        "silences": ("/notifications/silences/", {}),
        "thresholds": ("/notifications/thresholds/", {}),
        "cordons": ("/cordons/", {}),
        "repair panel": (f"/repair/workflow/{paused}/", {}),
        "repair audit": ("/repair/audit/", {}),
        "proposals": ("/repair/proposals/", {}),
        "security": ("/security/", {}),
        "reason codes": ("/reason-codes/", {}),
        "health/ready": ("/health/ready", {}),
        "/metrics": ("/metrics", {}),
    }


@dataclass(frozen=True)
class Timing:
    wall_ms: float  # median wall-clock time of one
    cpu_ms: float  # CPU per one: this process (Django) plus its database backend and parallel workers


def _server_processes():
    """The PostgreSQL server's postmaster and the pid of this connection's backend, when the server
    runs on this machine and may be read, else None (the CPU column is then this process's only)."""
    from django.db import connection

    from bench._setup import postmaster_process

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('data_directory'), pg_backend_pid()")
            data_directory, backend = cursor.fetchone()
        postmaster = postmaster_process(data_directory)
    except Exception:  # noqa: BLE001 - no superuser, another machine: Django's CPU only
        return None
    return None if postmaster is None else (postmaster, backend)


def _tree_cpu_seconds(server) -> float:
    """CPU seconds of the backend serving this process and of its parallel workers, from
    /proc/<pid>/schedstat (nanoseconds, exact). Not the server's background processes: after a
    bulk load the checkpointer and autovacuum run for minutes, whatever the page."""
    if server is None:
        return 0.0
    postmaster, backend = server
    total = 0
    for p in postmaster.children(recursive=True):
        try:
            if p.pid != backend and f"parallel worker for PID {backend}" not in " ".join(p.cmdline()):
                continue
            with open(f"/proc/{p.pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, Exception):  # noqa: BLE001 - a worker that ended while being read
            pass
    return total / 1e9


def _timed(action, requests: int, server) -> Timing:
    for _ in range(3):  # warm-up: caches, buffers, connections
        action()
    times = []
    cpu_before = time.process_time() + _tree_cpu_seconds(server)
    for _ in range(requests):
        t = time.perf_counter()
        action()
        times.append((time.perf_counter() - t) * 1000)
    cpu = time.process_time() + _tree_cpu_seconds(server) - cpu_before
    return Timing(statistics.median(times), cpu * 1000 / requests)


# Timed, but not a page: the scheduled work whose cost may follow the history it summarises.
OFF_THE_REQUEST_PATH = {"analytics refresh (task)"}


def measure(requests: int, only: set[str] | None = None) -> dict[str, Timing]:
    """Every page, /metrics, a recovery cycle and a callback: the median wall-clock time and the
    CPU (Django and PostgreSQL) per request. On a busy machine the wall-clock time varies with the
    load; the CPU far less."""
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.test import Client

    from console.analytics.tasks import refresh_analytics
    from recovery.engine.cycle import run_cycle

    client = Client()
    client.force_login(User.objects.get(username=USERNAME))
    metrics_headers = {"Authorization": f"Bearer {settings.METRICS_TOKEN}"} if settings.METRICS_TOKEN else {}
    server = _server_processes()
    out, failed = {}, set()
    # The analytics are computed off the request path (schedule tidy-analytics): the page reads the
    # snapshot; the computation itself is timed apart, as the task the qcluster runs.
    refresh_analytics()
    for name, (path, headers) in pages().items():
        if only and name not in only:
            continue
        headers = metrics_headers if path == "/metrics" else headers

        def get(path=path, headers=headers, name=name):
            response = client.get(path, headers=headers, secure=True)  # as behind the TLS proxy
            if response.status_code not in (200, 302):  # a code naming one workflow redirects to it
                failed.add(name)
                print(f"{name}: {path} answered {response.status_code}: {response.content[:300]!r}")

        run_cycle()  # recovery stays fresh for /health/ready however slow the machine
        out[name] = _timed(get, requests, server)
        if name in failed:
            out[name] = Timing(math.nan, math.nan)
    if not only or "analytics refresh (task)" in only:
        out["analytics refresh (task)"] = _timed(refresh_analytics, requests, server)
    if only:
        return out
    out["recovery cycle"] = _timed(run_cycle, requests, server)
    wcs = Client()
    token = {"Authorization": f"Bearer {settings.WCS_CALLBACK_TOKEN}"}
    job = iter(range(10**9))

    def callback():
        g = 1 + next(job) % 300  # the healthy live workflows' jobs, reported in progress again
        response = wcs.post("/api/wcs/job-status", {"job_id": f"TDY-{g}-{g}", "status": 2},
                            content_type="application/json", headers=token, secure=True)
        if response.status_code != 200:
            raise SystemExit(f"callback answered {response.status_code}: {response.content[:200]}")

    out["callback (job-status)"] = _timed(callback, requests, server)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=10_000, help="completed workflows in the small history")
    parser.add_argument("--large", type=int, default=1_000_000, help="completed workflows in the large history")
    parser.add_argument("--requests", type=int, default=15, help="timed requests per page and history")
    parser.add_argument("--database-url", help="run against this server (its WMS tables and journals are emptied)")
    parser.add_argument("--plans", action="store_true", help="print the history-bounded statements' plans")
    parser.add_argument("--pages", help="time only these pages, comma-separated names as printed (e.g. "
                                        "'analytics,search by space,notifications'); default every page, "
                                        "/metrics, a cycle and a callback")
    args = parser.parse_args()
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
        os.environ.setdefault("SECRET_KEY", "bench-only")
        os.environ.setdefault("WCS_CALLBACK_TOKEN", "bench-only-callback-token-" + "x" * 24)
        os.environ.setdefault("METRICS_TOKEN", "bench-only-metrics-token-" + "x" * 24)
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("STATIC_MANIFEST", "false")
    from bench._setup import django_on_private_database, stop_private_database

    django_on_private_database("history")
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()  # lets the test client's host in
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('server_version'), current_setting('jit')")
            version, jit = cursor.fetchone()
        print(f"PostgreSQL {version} (jit={jit}); load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
        live_work_build()
        results = {}
        built = 0
        for label, size in (("small", args.small), ("large", args.large)):
            started = time.monotonic()
            history_extend(built + 1, size)
            built = size
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM recovery_callbackreceipt")
                receipts = cursor.fetchone()[0]
            print(f"{label} history: {size:,} completed workflows, {receipts:,} receipts "
                  f"(built in {time.monotonic() - started:.0f} s)")
            if args.plans:
                for name, text in history_bounded_plans().items():
                    print(f"--- {name}\n{text}")
            results[label] = measure(args.requests, {p.strip() for p in args.pages.split(",")} if args.pages
                                     else None)
        print(f"\n{args.requests} requests each; small = {args.small:,}, large = {args.large:,} completed "
              f"workflows; wall: median ms, CPU: ms per request (Django + PostgreSQL); goal large/small <= 1.5")
        print(f"{'':<24}{'wall small':>11}{'large':>8}{'ratio':>7}{'CPU small':>11}{'large':>8}{'ratio':>7}")
        worst = 0.0
        for name in results["small"]:
            s, g = results["small"][name], results["large"][name]
            wall, cpu = g.wall_ms / s.wall_ms, g.cpu_ms / s.cpu_ms
            off_path = name in OFF_THE_REQUEST_PATH
            worst = worst if off_path else max(worst, cpu)
            print(f"{name:<24}{s.wall_ms:>11.1f}{g.wall_ms:>8.1f}{wall:>6.2f}x{s.cpu_ms:>11.1f}{g.cpu_ms:>8.1f}"
                  f"{cpu:>6.2f}x" + ("  (off the request path)" if off_path else "  OVER" if cpu > 1.5 else ""))
        print(f"worst CPU ratio {worst:.2f}x; load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        stop_private_database()
        from django.conf import settings

        if settings.EMBEDDED_DATABASE:  # a million rows of history: not kept for the next run
            shutil.rmtree(settings.EMBEDDED_DB_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
