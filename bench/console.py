"""Server-side latency of the supervisor console with 20,000 paused workflows, and of the
rack map with 20,000 cargo spaces.

Builds its own embedded PostgreSQL in /tmp (never the development database), fills it with
paused workflows whose evidence is real (every pause reason, journaled decisions, locks).
First it counts the queries of every console page with --small-workflows paused and again with
--workflows paused, and flags a page whose count grows with the data (a query per row). Then
it times the paused-list fragment, the paused-list page, the workflow page and its live
fragment through the Django test client (the whole Django stack, no network). Prints p50/p95
per run and the median over the runs. Targets: p95 <= 20 ms for the paused-list fragment and
the workflow page, < 60 ms for the full paused list.

Then it replaces the WMS rows with a rack of --spaces cargo spaces (50 aisles, codes matching
SPACE_CODE_PATTERN; trays, paused, active and stalled locks) and times /map/ (the whole map) and
/map/?aisle=... (one aisle), printing the page size. Targets: p95 <= 150 ms for the whole map,
less for one aisle.

    .venv/bin/python bench/console.py [--workflows 20000] [--small-workflows 1000] [--runs 5] [--requests 200]
                                      [--spaces 20000]
    .venv/bin/python bench/console.py --map-only       # just the rack map
    .venv/bin/python bench/console.py --no-map         # just the console pages

"whole workflow page" is /workflows/<id>/ as a browser first loads it: status, both evidence
cards, the repair panel, notes, retained locks and what they block, the steps timeline,
callbacks and the decision journal; "workflow live fragment" is its status and evidence, which
htmx refreshes every few seconds.
"""

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._setup import postmaster_process, tree_cpu_seconds  # noqa: E402

# p95 targets (issue 14: the fragment measured 31 ms before).
TARGETS_MS = {"paused-list fragment": 20.0, "whole workflow page": 20.0, "workflow live fragment": 20.0,
              "paused-list page": 60.0}
# The page whose queries (count_queries) each timed scenario runs.
SCENARIO_PAGES = {"paused-list fragment": "paused list fragment", "whole workflow page": "workflow page",
                  "workflow live fragment": "workflow live fragment", "paused-list page": "paused list"}
MAP_TARGETS_MS = {"rack map, whole": 150.0, "rack map, one aisle": 50.0}


def setup_django(db_dir: str | None) -> str:
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("EMBEDDED_DATABASE_URL", None)
    os.environ["EMBEDDED_DB_DIR"] = db_dir or tempfile.mkdtemp(prefix="tidy-bench-console-", dir="/tmp")
    os.environ.setdefault("DEBUG", "false")  # production-like: cached templates, no query log
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("STATIC_MANIFEST", "false")  # no collectstatic here: plain static names
    os.environ["DJANGO_SETTINGS_MODULE"] = "console.settings"
    import django

    django.setup()
    from django.test.utils import setup_test_environment

    setup_test_environment()  # lets the test client's host in
    return os.environ["EMBEDDED_DB_DIR"]


# --- the data: set-based SQL, as a WMS would have left it ------------------------------------

BUILD_SQL = [
    # N active workflows, ages spread over two days, one in three manual.
    """INSERT INTO alg.tidy_workflow (workflow_id, origin, status, created_at, updated_at)
       SELECT g, CASE WHEN mod(g, 3) = 0 THEN 'MANUAL' ELSE 'AUTOMATIC' END, 'ACTIVE',
              now() - (mod(g, 2880)) * interval '1 minute' - interval '5 minutes',
              now() - (mod(g, 2880)) * interval '1 minute'
       FROM generate_series(1, %(n)s) AS g""",
    # Two steps each: step 1 dispatched, step 2 pending.
    """INSERT INTO alg.tidy_step (step_id, workflow_id, step_no, tray_code, cargo_space_id,
                                  target_cargo_space_id, status)
       SELECT 2 * g - 2 + s, g, s, 'T' || g || '-' || s, 'S' || g || '-' || s || 'a', 'S' || g || '-' || s || 'b',
              CASE s WHEN 1 THEN 'DISPATCHED' ELSE 'PENDING' END
       FROM generate_series(1, %(n)s) AS g, generate_series(1, 2) AS s""",
    """INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
       SELECT cargo_space_id, tray_code FROM alg.tidy_step
       UNION ALL
       SELECT target_cargo_space_id, NULL FROM alg.tidy_step""",
    """INSERT INTO public.bas_stock (tray_code, cargo_space_id, sku, qty)
       SELECT tray_code, cargo_space_id, 'SKU-' || k, 10 * k FROM alg.tidy_step, generate_series(1, 2) AS k""",
    """INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id, locked_at)
       SELECT s.workflow_id, x.space, w.created_at
       FROM alg.tidy_step AS s
       JOIN alg.tidy_workflow AS w USING (workflow_id)
       CROSS JOIN LATERAL (VALUES (s.cargo_space_id), (s.target_cargo_space_id)) AS x(space)""",
    # mod(g, 4) = 1: an active job naming another tray (RECOVERY_JOB_MISMATCH).
    """INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,
                                    created_at)
       SELECT 'TDY-' || workflow_id || '-' || step_id, 28, 2, 'X' || workflow_id, cargo_space_id,
              target_cargo_space_id, now() - interval '1 hour'
       FROM alg.tidy_step WHERE step_no = 1 AND mod(workflow_id, 4) = 1""",
    # mod(g, 4) = 2: a matching active job, but the tray already moved (RECOVERY_ACTIVE_EVIDENCE_INVALID).
    """INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,
                                    created_at)
       SELECT 'TDY-' || workflow_id || '-' || step_id, 28, 3, tray_code, cargo_space_id,
              target_cargo_space_id, now() - interval '2 hours'
       FROM alg.tidy_step WHERE step_no = 1 AND mod(workflow_id, 4) = 2""",
    """UPDATE public.bas_stock AS b SET cargo_space_id = s.target_cargo_space_id
       FROM alg.tidy_step AS s WHERE s.step_no = 1 AND mod(s.workflow_id, 4) = 2 AND b.tray_code = s.tray_code""",
    """UPDATE public.bas_cargo_space AS c SET tray_code = NULL
       FROM alg.tidy_step AS s
       WHERE s.step_no = 1 AND mod(s.workflow_id, 4) = 2 AND c.cargo_space_id = s.cargo_space_id""",
    """UPDATE public.bas_cargo_space AS c SET tray_code = s.tray_code
       FROM alg.tidy_step AS s
       WHERE s.step_no = 1 AND mod(s.workflow_id, 4) = 2 AND c.cargo_space_id = s.target_cargo_space_id""",
    # mod(g, 4) = 3: archived as finished, but the stock never moved (RECOVERY_FINISH_EVIDENCE_INVALID).
    """INSERT INTO public.mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,
                                    created_at, finished_at)
       SELECT 'TDY-' || workflow_id || '-' || step_id, 28, 4, tray_code, cargo_space_id, target_cargo_space_id,
              now() - interval '3 hours', now() - interval '2 hours'
       FROM alg.tidy_step WHERE step_no = 1 AND mod(workflow_id, 4) = 3""",
    # mod(g, 4) = 0: no job at all (RECOVERY_JOB_MISSING). A callback event on every tenth workflow.
    """INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage, received_at)
       SELECT workflow_id, step_id, 'TDY-' || workflow_id || '-' || step_id, 'MOVE_FINISHED', now()
       FROM alg.tidy_step WHERE step_no = 1 AND mod(workflow_id, 10) = 0""",
    # History: completed workflows (no locks), as a real table has many.
    """INSERT INTO alg.tidy_workflow (workflow_id, origin, status, created_at, updated_at, completed_at)
       SELECT %(n)s + g, 'AUTOMATIC', 'COMPLETED', now() - g * interval '10 seconds',
              now() - g * interval '10 seconds', now() - g * interval '10 seconds'
       FROM generate_series(1, %(n)s) AS g""",
    "SELECT setval(pg_get_serial_sequence('alg.tidy_workflow', 'workflow_id'), 2 * %(n)s)",
    "SELECT setval(pg_get_serial_sequence('alg.tidy_step', 'step_id'), 2 * %(n)s)",
    "ANALYZE",
]

PAUSE_SQL = [
    """UPDATE alg.tidy_workflow AS w SET status = 'PAUSED_RECOVERY', pause_reason = p.reason
       FROM unnest(%(ids)s::bigint[], %(reasons)s::text[]) AS p(workflow_id, reason)
       WHERE w.workflow_id = p.workflow_id""",
    """UPDATE alg.tidy_step AS s SET status = 'PAUSED_RECOVERY', pause_reason = w.pause_reason
       FROM alg.tidy_workflow AS w
       WHERE s.workflow_id = w.workflow_id AND w.status = 'PAUSED_RECOVERY' AND s.step_no = 1""",
    "ANALYZE",
]


def build(n: int) -> None:
    from django.core.management import call_command
    from django.db import connection, transaction

    from console.management.demo import ensure_demo_users
    from recovery.demo.warehouse import truncate_wms_tables
    from recovery.engine.decisions import decide
    from recovery.engine.evidence import evidence_for_workflows
    from recovery.models import RecoveryCycle, RecoveryDecision

    call_command("migrate", interactive=False, verbosity=0)
    call_command("wms_schema", verbosity=0)
    ensure_demo_users()
    started = time.monotonic()
    with transaction.atomic():
        truncate_wms_tables()
        RecoveryDecision.objects.all().delete()
        RecoveryCycle.objects.all().delete()
        with connection.cursor() as cursor:
            for sql in BUILD_SQL:
                cursor.execute(sql, {"n": n})
        # Decide and journal as recovery would, then pause set-based (a fixture, not the product path).
        cycle = RecoveryCycle.objects.create(started_at=_now(), finished_at=_now(), outcome="SUCCEEDED",
                                             duration_ms=900, examined=n, decision_counts={"PAUSE": n},
                                             paused_total=n)
        journal, ids, reasons = [], [], []
        for ev in evidence_for_workflows(range(1, n + 1)):
            d = decide(ev)
            assert d.reason is not None, (ev.workflow_id, d)
            journal.append(RecoveryDecision(cycle=cycle, workflow_id=ev.workflow_id, step_id=ev.step.step_id,
                                            action=d.action.value, reason=d.reason.value, rule=d.rule.value,
                                            evidence=ev.as_json(), fingerprint=ev.fingerprint))
            ids.append(ev.workflow_id)
            reasons.append(d.reason.value)
        RecoveryDecision.objects.bulk_create(journal, batch_size=2000)
        with connection.cursor() as cursor:
            for sql in PAUSE_SQL:
                cursor.execute(sql, {"ids": ids, "reasons": reasons})
        for i in range(200):
            RecoveryCycle.objects.create(started_at=_now(-10 * i), finished_at=_now(-10 * i + 1),
                                         outcome="SUCCEEDED", duration_ms=800 + i % 50, examined=0,
                                         paused_total=n)
    # As autovacuum leaves the tables about a minute after such a bulk update (visibility map
    # set, so the paused list's counts read the index only): without it, autovacuum would
    # change the plans in the middle of the first timed run.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    counts = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    print(f"built {n} paused workflows ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}), "
          f"{n} completed, in {time.monotonic() - started:.1f} s")


def _now(offset_s: float = 0):
    from datetime import timedelta

    from django.utils import timezone

    return timezone.now() + timedelta(seconds=offset_s)


# --- measuring ---------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def time_requests(client, requests: list[tuple[str, dict]]) -> list[float]:
    out = []
    for path, headers in requests:
        t0 = time.perf_counter()
        response = client.get(path, headers=headers)
        elapsed = (time.perf_counter() - t0) * 1000
        if response.status_code != 200:
            raise SystemExit(f"{path} answered {response.status_code}")
        out.append(elapsed)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflows", type=int, default=20_000)
    parser.add_argument("--small-workflows", type=int, default=1_000,
                        help="the smaller size the query counts are compared with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="requests per scenario per run")
    parser.add_argument("--spaces", type=int, default=20_000, help="cargo spaces on the rack map")
    parser.add_argument("--map-requests", type=int, default=40, help="rack map requests per scenario per run")
    parser.add_argument("--map-only", action="store_true", help="only the rack map")
    parser.add_argument("--no-map", action="store_true", help="no rack map")
    parser.add_argument("--db-dir", help="embedded PostgreSQL folder (default: a new one in /tmp)")
    parser.add_argument("--keep", action="store_true", help="leave the database server running")
    args = parser.parse_args()

    db_dir = setup_django(args.db_dir)
    print(f"database: embedded PostgreSQL in {db_dir}; load average {_load()} ({os.cpu_count()} CPUs)")
    try:
        if not args.map_only:
            build(args.small_workflows)
            small = count_queries(args.small_workflows)
            build(args.workflows)
            large = count_queries(args.workflows)
            report_query_counts(small, large, args.small_workflows, args.workflows)
            run(args, large)
        if not args.no_map:
            build_rack(args.spaces)
            run_map(args)
    finally:
        if not args.keep:
            from django.conf import settings
            from django.db import connections

            from console import devdb

            connections.close_all()
            devdb.stop(settings.EMBEDDED_DB_DIR)


# --- queries per page ----------------------------------------------------------------------------


def count_queries(n: int) -> dict[str, int]:
    """Queries each console page runs (the whole request: session and user included)."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from recovery.models import TidySpaceLock

    client = Client()
    client.force_login(User.objects.get(username="supervisor"))
    htmx = {"HX-Request": "true"}
    wid = n // 2
    space = TidySpaceLock.objects.filter(workflow_id=wid).values_list("cargo_space_id", flat=True).first()
    pages = {
        "dashboard": ("/", {}),
        "paused list": ("/paused/", {}),
        "paused list fragment": ("/paused/", htmx),
        "paused list, filtered": ("/paused/?reason=RECOVERY_JOB_MISSING&origin=MANUAL&age=gt24h", htmx),
        "paused list, search": (f"/paused/?q=T{wid}-1", htmx),
        "active list": ("/active/", {}),
        "workflow page": (f"/workflows/{wid}/", {}),
        "workflow live fragment": (f"/workflows/{wid}/", htmx),
        "workflow history fragment": (f"/workflows/{wid}/", {**htmx, "HX-Target": "workflow-history"}),
        "locks": ("/locks/", {}),
        "search": (f"/search/?q={space}", {}),
        "handover": ("/handover/", {}),
        "rack map": ("/map/", {}),
    }
    counts = {}
    for name, (path, headers) in pages.items():
        client.get(path, headers=headers)  # warm-up: first-use caches do not count
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(path, headers=headers)
        if response.status_code >= 400:
            raise SystemExit(f"{path} answered {response.status_code}")
        counts[name] = len(ctx.captured_queries)
    return counts


def report_query_counts(small: dict[str, int], large: dict[str, int], n_small: int, n_large: int) -> None:
    print(f"\nqueries per page (whole request), {n_small:,} and {n_large:,} paused workflows:")
    grows = []
    for name in small:
        flag = "GROWS WITH THE DATA" if large[name] != small[name] else "fixed"
        if large[name] != small[name]:
            grows.append(name)
        print(f"  {name:<28} {small[name]:4d} {large[name]:6d}   {flag}")
    print("  every page runs a fixed number of queries" if not grows
          else f"  query count grows with the data on: {', '.join(grows)}")
    print()


def run(args, queries: dict[str, int]) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    from console.readers.paused import PausedFilters, paused_workflows_page

    client = Client()
    client.force_login(User.objects.get(username="supervisor"))
    rng = random.Random(4)
    n = args.workflows
    htmx = {"HX-Request": "true"}

    mid = paused_workflows_page(filters=PausedFilters(), page_size=n // 2).next_cursor
    variants = [
        "/paused/",
        "/paused/?reason=RECOVERY_JOB_MISSING",
        "/paused/?origin=MANUAL&age=gt24h",
        "/paused/?sort=newest&reason=RECOVERY_JOB_MISMATCH",
        f"/paused/?after={mid.encode()}",
        f"/paused/?q=T{n // 3}-1",
        f"/paused/?q={n // 7}",
    ]

    def scenario(name):
        if name == "paused-list fragment":
            return [(variants[i % len(variants)], htmx) for i in range(args.requests)]
        if name == "paused-list page":
            return [(variants[i % len(variants)], {}) for i in range(args.requests)]
        if name == "workflow live fragment":
            return [(f"/workflows/{rng.randint(1, n)}/", htmx) for _ in range(args.requests)]
        return [(f"/workflows/{rng.randint(1, n)}/", {}) for _ in range(args.requests)]

    results: dict[str, list[tuple[float, float]]] = {name: [] for name in TARGETS_MS}
    cpu: dict[str, list[tuple[float, float]]] = {name: [] for name in TARGETS_MS}
    database = _database_process()
    for name in TARGETS_MS:  # warm-up: connections, template cache, PostgreSQL buffers
        time_requests(client, scenario(name)[:30])
    for run_no in range(1, args.runs + 1):
        for name in TARGETS_MS:
            requests = scenario(name)
            before = (time.process_time(), tree_cpu_seconds(database))
            times = time_requests(client, requests)
            after = (time.process_time(), tree_cpu_seconds(database))
            cpu[name].append(tuple((a - b) * 1000 / len(requests) for a, b in zip(after, before, strict=True)))
            results[name].append((percentile(times, 50), percentile(times, 95)))
        line = ", ".join(f"{name} p50 {r[-1][0]:.1f} / p95 {r[-1][1]:.1f} ms" for name, r in results.items())
        print(f"run {run_no}: {line}; load {_load()}")

    print(f"\nmedian of {args.runs} runs, {args.requests} requests each, {n} paused workflows:")
    ok = True
    for name, runs in results.items():
        p50 = statistics.median(r[0] for r in runs)
        p95 = statistics.median(r[1] for r in runs)
        target = TARGETS_MS[name]
        verdict = "meets" if p95 <= target else "MISSES"
        ok &= p95 <= target
        python_ms, database_ms = (statistics.median(c[i] for c in cpu[name]) for i in range(2))
        print(f"  {name:<22} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms   target p95 <= {target:.0f} ms: {verdict:<6}"
              f"   {queries[SCENARIO_PAGES[name]]:2d} queries, CPU {python_ms:4.1f} ms Django + "
              f"{database_ms:4.1f} ms PostgreSQL" + ("" if database else " (psutil missing)"))
    print("  (CPU per request, the median of the runs: on a busy machine wall-clock times vary with the load, "
          "CPU far less)")
    print("\nper paused-list variant (fragment, one run of 20 each):")
    for path in variants:
        times = time_requests(client, [(path, htmx)] * 20)
        print(f"  {path:<60} p50 {percentile(times, 50):6.1f} ms  p95 {percentile(times, 95):6.1f} ms")
    print(f"\nload average at the end {_load()}: other processes on the machine inflate these figures")
    if not ok:
        print("at least one target missed")


# --- the rack map ------------------------------------------------------------------------------

AISLES, LEVELS = 50, 20

RACK_SQL = [
    # AISLES aisles of LEVELS levels; as many positions as make %(spaces)s spaces. Three in five hold a tray.
    """INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
       SELECT format('A%%s-%%s-%%s', lpad(a::text, 2, '0'), lpad(l::text, 2, '0'), lpad(p::text, 2, '0')),
              CASE WHEN mod(a + l + p, 5) < 3 THEN format('T%%s-%%s-%%s', a, l, p) END
       FROM generate_series(1, %(aisles)s) AS a, generate_series(1, %(levels)s) AS l,
            generate_series(1, %(positions)s) AS p""",
    # Two-step workflows, one per 10 spaces: a quarter paused, the rest active; each moves a tray
    # one level up in its aisle (every 20th paused one to the next aisle).
    """INSERT INTO alg.tidy_workflow (workflow_id, origin, status, pause_reason, updated_at)
       SELECT g, 'AUTOMATIC', CASE WHEN mod(g, 4) = 0 THEN 'PAUSED_RECOVERY' ELSE 'ACTIVE' END,
              CASE WHEN mod(g, 4) = 0 THEN 'RECOVERY_JOB_MISSING' END, now() - g * interval '1 second'
       FROM generate_series(1, %(workflows)s) AS g""",
    """INSERT INTO alg.tidy_step (workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id, status)
       SELECT g, 1, 'W' || g,
              format('A%%s-%%s-%%s', lpad(a::text, 2, '0'), lpad(l::text, 2, '0'), lpad(p::text, 2, '0')),
              CASE WHEN mod(g, 80) = 0  -- across aisles, to positions no other step uses
                   THEN format('A%%s-%%s-%%s', lpad((mod(a, %(aisles)s) + 1)::text, 2, '0'),
                               lpad((l + 1)::text, 2, '0'), lpad((p + 10)::text, 2, '0'))
                   ELSE format('A%%s-%%s-%%s', lpad(a::text, 2, '0'), lpad((l + 1)::text, 2, '0'),
                               lpad(p::text, 2, '0')) END,
              CASE WHEN mod(g, 4) = 0 THEN 'PAUSED_RECOVERY' ELSE 'DISPATCHED' END
       FROM (SELECT g, 1 + mod(g, %(aisles)s) AS a, 1 + 2 * mod(g / %(aisles)s, %(levels)s / 2) AS l,
                    1 + g / (%(aisles)s * %(levels)s / 2) AS p
             FROM generate_series(1, %(workflows)s) AS g) AS x""",
    """INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
       SELECT workflow_id, cargo_space_id FROM alg.tidy_step
       UNION SELECT workflow_id, target_cargo_space_id FROM alg.tidy_step""",
    # Jobs of the active ones; every third has not changed for an hour (stalled).
    """INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,
                                    updated_at)
       SELECT 'TDY-' || s.workflow_id || '-' || s.step_id, 28, 2, s.tray_code, s.cargo_space_id,
              s.target_cargo_space_id, now() - CASE WHEN mod(s.workflow_id, 3) = 0 THEN interval '1 hour'
                                                   ELSE interval '1 minute' END
       FROM alg.tidy_step AS s WHERE s.status = 'DISPATCHED'""",
    # A few codes the pattern cannot place (listed beside the map).
    """INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
       SELECT 'DOCK-' || g, NULL FROM generate_series(1, 5) AS g""",
    "ANALYZE",
]


def build_rack(spaces: int) -> None:
    from django.core.management import call_command
    from django.db import connection, transaction

    from recovery.demo.warehouse import truncate_wms_tables

    if spaces % (AISLES * LEVELS) or spaces < 15 * AISLES * LEVELS:
        raise SystemExit(f"--spaces must be a multiple of {AISLES * LEVELS}, at least {15 * AISLES * LEVELS}")
    call_command("migrate", interactive=False, verbosity=0)
    call_command("wms_schema", verbosity=0)
    started = time.monotonic()
    params = {"aisles": AISLES, "levels": LEVELS, "positions": spaces // (AISLES * LEVELS),
              "workflows": spaces // 10}
    with transaction.atomic(), connection.cursor() as cursor:
        truncate_wms_tables()
        for sql in RACK_SQL:
            cursor.execute(sql, params)
    print(f"\nbuilt a rack of {spaces} cargo spaces ({AISLES} aisles x {LEVELS} levels x {params['positions']} "
          f"positions, {spaces // 10} workflows) in {time.monotonic() - started:.1f} s")


def run_map(args) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    from console.management.demo import ensure_demo_users

    ensure_demo_users()
    client = Client()
    client.force_login(User.objects.get(username="supervisor"))
    paths = {"rack map, whole": ["/map/"],
             "rack map, one aisle": [f"/map/?aisle=A{a:02d}" for a in range(1, AISLES + 1)]}
    pages = {name: client.get(p[0]).content for name, p in paths.items()}
    sizes = {name: (len(page), sum(len(svg) for svg in re.findall(rb'<svg class="rk" .*?</svg>', page, re.S)))
             for name, page in pages.items()}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
    for variants in paths.values():  # warm-up
        time_requests(client, [(variants[i % len(variants)], {}) for i in range(5)])
    for run_no in range(1, args.runs + 1):
        for name, variants in paths.items():
            times = time_requests(client, [(variants[i % len(variants)], {}) for i in range(args.map_requests)])
            results[name].append((percentile(times, 50), percentile(times, 95)))
        line = ", ".join(f"{name} p50 {r[-1][0]:.1f} / p95 {r[-1][1]:.1f} ms" for name, r in results.items())
        print(f"run {run_no}: {line}")
    print(f"\nmedian of {args.runs} runs, {args.map_requests} requests each, {args.spaces} cargo spaces:")
    for name, runs in results.items():
        p50 = statistics.median(r[0] for r in runs)
        p95 = statistics.median(r[1] for r in runs)
        target = MAP_TARGETS_MS[name]
        verdict = "meets" if p95 <= target else "MISSES"
        print(f"  {name:<22} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms   target p95 <= {target:.0f} ms: {verdict}"
              f"   page {sizes[name][0] / 1024:,.0f} KiB, SVG {sizes[name][1] / 1024:,.0f} KiB")
    print(f"load average at the end {_load()}")


def _database_process():
    """The embedded PostgreSQL's postmaster (its backends are its children), if psutil is there."""
    from django.conf import settings

    return postmaster_process(settings.EMBEDDED_DB_DIR)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
