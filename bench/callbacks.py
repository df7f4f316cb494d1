#!/usr/bin/env python
"""Benchmark: jobFinish callbacks through real HTTP, half of them duplicates, and a double-move check.

Starts its own gunicorn on 127.0.0.1 (a free port in 8100-8199) against its own embedded
database (EMBEDDED_DB_DIR in /tmp, then migrate + wms_schema), seeds two-step tidy workflows
whose first job is executing (beside a history of 20,000 archived jobs, with statistics), and
fires `POST /api/wcs/job-finish` for every first job twice (the copy follows within the client's
concurrency window, so originals and duplicates overlap in flight) from a bounded client on
loopback (N keep-alive connections, stops after the last request or --deadline seconds). Per
run it prints callbacks/s and p50/p95/p99 latency; then the
median over the runs, and the checks: every answer 200, one inventory move per workflow (stock
rows moved once, one archived job), one event per (workflow, step, job, stage), the next job
created once, one ACCEPTED and one DUPLICATE receipt per workflow.

The framework's floor is measured in the same run, on the same server: the server is the
console's WSGI application built by `bench_application()` below, which adds one trivial JSON
view (`POST /api/wcs/bench-trivial`, under the API prefix, so it takes the same short path
through the middleware as the callbacks) to a URL configuration that exists only inside this
benchmark's server, never in the console's. Before each run the same number of requests of the
same size go to it over the same connections; each run prints both rates and latencies and the
ratio, so a busy machine (other work on the 2 cores) shows in both and the ratio stays readable.

    .venv/bin/python bench/callbacks.py [--workflows 2000] [--runs 3] [--concurrency 8]
                                        [--workers 2] [--threads 4] [--extra-field NAME]
    .venv/bin/python bench/callbacks.py --in-process [--workflows 2000] [--runs 3] [--profile DIR]

--in-process leaves HTTP, gunicorn and the client out: it calls the same WSGI application
directly, one request at a time, against the same seeded database, and prints for the trivial
view, an accepted finish and a duplicate separately the CPU each takes in this process and in
PostgreSQL (the backends' run time from /proc/<pid>/schedstat: exact, where the CPU split above is
sampled per tick) and the round trips and statements each sends. It is where to look first for
what one kind of callback costs; --profile DIR also writes a cProfile of each kind there.

Target on a 2-core machine: >= 1,000 callbacks/s with p95 <= 10 ms and zero double moves.
The client uses http.client directly (no journal): it is the load generator, not the product.
"""

import argparse
import http.client
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._setup import (  # noqa: E402
    django_on_private_database,
    postmaster_process,
    stop_private_database,
    tree_cpu_seconds,
)

# The console's journals the benchmark empties between runs (the WMS tables: truncate_wms_tables).
TRUNCATE_CONSOLE_JOURNALS = "TRUNCATE recovery_callbackreceipt, recovery_outboundhttprequest"

# How the callbacks were answered, for the summary line.
RECEIPTS_BY_OUTCOME = "SELECT outcome, count(*) FROM recovery_callbackreceipt GROUP BY outcome ORDER BY 1"

# Workflow g: step 2g-1 (tray CT-g, CS-g -> CD-g, DISPATCHED, job executing) and step 2g
# (tray CU-g, CE-g -> CF-g, PENDING); four locks; three stock rows per tray.
SEED_SQL = """
INSERT INTO alg.tidy_workflow (workflow_id, origin, status)
SELECT g, 'AUTOMATIC', 'ACTIVE' FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO alg.tidy_step (step_id, workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id, status)
SELECT 2 * g - 1, g, 1, 'CT-' || g, 'CS-' || g, 'CD-' || g, 'DISPATCHED'
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
UNION ALL
SELECT 2 * g, g, 2, 'CU-' || g, 'CE-' || g, 'CF-' || g, 'PENDING'
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
SELECT g, s || g FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g,
                      unnest(ARRAY['CS-', 'CD-', 'CE-', 'CF-']) AS s;

INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
SELECT s || g, CASE s WHEN 'CS-' THEN 'CT-' || g WHEN 'CE-' THEN 'CU-' || g END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, unnest(ARRAY['CS-', 'CD-', 'CE-', 'CF-']) AS s;

INSERT INTO public.bas_stock (tray_code, cargo_space_id, sku, qty)
SELECT t || g, CASE t WHEN 'CT-' THEN 'CS-' ELSE 'CE-' END || g, 'SKU-' || k, k * 4
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, unnest(ARRAY['CT-', 'CU-']) AS t,
     generate_series(1, 3) AS k;

INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT 'TDY-' || g || '-' || (2 * g - 1), 28, 3, 'CT-' || g, 'CS-' || g, 'CD-' || g
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;
"""

# A site's history before the run: archived jobs and their events (of workflows far above the
# seeded ids). With statistics taken after each run's seeding (ANALYZE_SEEDED), as autovacuum
# keeps them on a live WMS. Empty, just-truncated job archives would be planned as empty (every
# lookup in them a scan, costlier at each callback as the run archives thousands of jobs), and
# statistics of the warm-up's 200 workflows would price scans of tables ten times that size.
HISTORY_ROWS = 20_000
ANALYZE_SEEDED = """
ANALYZE public.mydo_job_finish, alg.tidy_callback_event, public.mydo_job, alg.tidy_workflow, alg.tidy_step,
        alg.tidy_space_lock, public.bas_stock, public.bas_cargo_space, recovery_callbackreceipt
"""
HISTORY_SQL = """
INSERT INTO public.mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,
                             finished_at)
SELECT 'TDY-' || (1000000000 + g) || '-' || (2000000000 + g), 28, 4, 'HT-' || g, 'HS-' || g, 'HD-' || g,
       now() - interval '1 day'
FROM generate_series(1, %(n)s) AS g;

INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage)
SELECT 1000000000 + g, 2000000000 + g, 'TDY-' || (1000000000 + g) || '-' || (2000000000 + g), 'MOVE_FINISHED'
FROM generate_series(1, %(n)s) AS g
"""

# Every check counts violations over the workflows it created; all must be zero.
CHECKS = {
    "workflows whose first job was archived other than once": """
        SELECT count(*) FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
        WHERE (SELECT count(*) FROM public.mydo_job_finish f
               WHERE f.job_id = 'TDY-' || g || '-' || (2 * g - 1)) <> 1""",
    "stock rows not at the first target (or duplicated)": """
        SELECT count(*) FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
        WHERE (SELECT count(*) FILTER (WHERE b.cargo_space_id = 'CD-' || g) <> 3 OR count(*) <> 3
               FROM public.bas_stock b WHERE b.tray_code = 'CT-' || g)""",
    "second trays moved (must stay put)": """
        SELECT count(*) FROM public.bas_stock b
        WHERE b.tray_code LIKE 'CU-%%' AND b.cargo_space_id NOT LIKE 'CE-%%'""",
    "spaces not in the terminal state": """
        SELECT count(*) FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
        WHERE (SELECT tray_code FROM public.bas_cargo_space WHERE cargo_space_id = 'CS-' || g) IS NOT NULL
           OR (SELECT tray_code FROM public.bas_cargo_space WHERE cargo_space_id = 'CD-' || g)
              IS DISTINCT FROM 'CT-' || g""",
    "workflows without exactly one event for step 1": """
        SELECT count(*) FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
        WHERE (SELECT count(*) FROM alg.tidy_callback_event e
               WHERE e.workflow_id = g AND e.step_id = 2 * g - 1 AND e.stage = 'MOVE_FINISHED') <> 1""",
    "events sharing (workflow, step, job, stage)": """
        SELECT count(*) FROM (SELECT 1 FROM alg.tidy_callback_event
                              GROUP BY workflow_id, step_id, job_id, stage HAVING count(*) > 1) AS d""",
    "second jobs not created exactly once (status 1)": """
        SELECT count(*) FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
        WHERE (SELECT count(*) FROM public.mydo_job j
               WHERE j.job_id = 'TDY-' || g || '-' || (2 * g) AND j.status = 1) <> 1""",
    "steps not advanced (1 COMPLETED, 2 DISPATCHED)": """
        SELECT count(*) FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
        WHERE (SELECT status FROM alg.tidy_step WHERE step_id = 2 * g - 1) <> 'COMPLETED'
           OR (SELECT status FROM alg.tidy_step WHERE step_id = 2 * g) <> 'DISPATCHED'""",
}


TARGET_RATE = 1000
TARGET_P95_MS = 10.0
TRIVIAL_PATH = "/api/wcs/bench-trivial"


def trivial_json(request):
    """The floor: reads the body and answers a small JSON object, touching no database."""
    from django.http import JsonResponse

    return JsonResponse({"outcome": "OK", "bytes": len(request.body)})


def bench_application():
    """gunicorn's application factory for this benchmark's server (`bench.callbacks:bench_application()`):
    the console's own settings, middleware and URLs, plus the trivial view at TRIVIAL_PATH."""
    import types

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application
    from django.urls import include, path

    application = get_wsgi_application()  # sets Django up; the URLs are read on the first request
    urls = types.ModuleType("bench_callbacks_urls")
    urls.urlpatterns = [path(TRIVIAL_PATH.lstrip("/"), trivial_json), path("", include(settings.ROOT_URLCONF))]
    settings.ROOT_URLCONF = urls
    return application


def seed(lo: int, hi: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for statement in SEED_SQL.split(";\n"):
            if statement.strip():
                cursor.execute(statement, {"lo": lo, "hi": hi})
        cursor.execute(ANALYZE_SEEDED)


def seed_history() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for statement in HISTORY_SQL.split(";\n"):
            if statement.strip():
                cursor.execute(statement, {"n": HISTORY_ROWS})


def reset() -> None:
    from django.db import connection

    from recovery.demo.warehouse import truncate_wms_tables

    truncate_wms_tables()
    with connection.cursor() as cursor:
        cursor.execute(TRUNCATE_CONSOLE_JOURNALS)


def free_port() -> int:
    for port in range(8100, 8200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise SystemExit("no free port in 8100-8199")


def start_server(port: int, workers: int, threads: int) -> subprocess.Popen:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "DEBUG": "false", "LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "bench.callbacks:bench_application()", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--worker-class", "gthread", "--threads", str(threads),
         "--keep-alive", "30", "--log-level", "warning"],
        cwd=ROOT, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health/live")
            conn.getresponse().read()
            return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("gunicorn did not answer within 60 s")


def fire(port: int, token: str, bodies: list[bytes], concurrency: int, deadline_s: float,
         path: str = "/api/wcs/job-finish"):
    """Send every body once over `concurrency` keep-alive connections; bounded and self-stopping."""
    work: queue.SimpleQueue = queue.SimpleQueue()
    for body in bodies:
        work.put(body)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    outcomes: dict[str, int] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + deadline_s
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine, my_status, my_outcomes = [], {}, {}
        while time.monotonic() < stop_at:
            try:
                body = work.get_nowait()
            except queue.Empty:
                break
            t0 = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                status = resp.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                status, data = 0, b"{}"
            mine.append((time.perf_counter() - t0) * 1000)
            my_status[status] = my_status.get(status, 0) + 1
            try:
                outcome = json.loads(data).get("outcome", "?")
            except ValueError:
                outcome = "?"
            my_outcomes[outcome] = my_outcomes.get(outcome, 0) + 1
        conn.close()
        with lock:
            latencies.extend(mine)
            for k, v in my_status.items():
                statuses[k] = statuses.get(k, 0) + v
            for k, v in my_outcomes.items():
                outcomes[k] = outcomes.get(k, 0) + v

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started, latencies, statuses, outcomes


class CpuMeter:
    """CPU seconds used by the server (gunicorn), the database (postmaster and backends) and this
    client, so the figures can be judged on a busy machine: capacity = cores / CPU per callback."""

    def __init__(self, server_pid: int, data_dir: Path):
        try:
            import psutil
        except ImportError:  # optional: figures without the CPU split
            self.psutil = None
            return
        self.psutil = psutil
        self.server = psutil.Process(server_pid)
        self.database = postmaster_process(data_dir)
        self.client = psutil.Process()

    def sample(self) -> tuple[float, float, float] | None:
        if self.psutil is None:
            return None
        t = self.client.cpu_times()
        return tree_cpu_seconds(self.server), tree_cpu_seconds(self.database), t.user + t.system


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# --extra-field NAME: every body also carries {NAME: {"crane": 4}}, a field the contract does not
# name (the tolerant reader ignores and counts it): what a WCS release adding one costs.
EXTRA_FIELDS: dict = {}


def bodies_for(lo: int, hi: int, window: int) -> list[bytes]:
    """Each first job twice: a block of originals, then the same block again as duplicates."""
    out = []
    ids = list(range(lo, hi + 1))
    for i in range(0, len(ids), window):
        block = [json.dumps({"job_id": f"TDY-{g}-{2 * g - 1}", "stage": "MOVE_FINISHED",
                             "event_id": f"bench-{g}", **EXTRA_FIELDS}).encode() for g in ids[i:i + window]]
        out.extend(block + block)
    return out


def run_seconds(proc) -> float:
    """Run time of a psutil Process and its children from /proc/<pid>/schedstat (nanoseconds,
    exact; children that end while being read are skipped); tree_cpu_seconds (sampled per tick)
    where the kernel keeps no such file."""
    if not os.path.exists("/proc/self/schedstat"):
        return tree_cpu_seconds(proc)
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            with open(f"/proc/{p.pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def wsgi_post(application, path: str, body: bytes, token: str) -> tuple[int, bytes]:
    """One POST through the WSGI application, as gunicorn would make it; (status, body)."""
    import io

    environ = {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1", "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {token}", "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr, "wsgi.version": (1, 0), "wsgi.multithread": True, "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    status = []
    chunks = application(environ, lambda line, headers, exc_info=None: status.append(int(line.split()[0])))
    try:
        return status[0], b"".join(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()


def count_trips(application, token: str, lo: int, hi: int) -> dict[str, str]:
    """The round trips of each kind, counted on workflows lo..hi as tests/recovery/callbacks/test_one_trip.py
    counts them: each run_pipelined batch (its statement count) and each statement Django's
    cursors send; the commit of a locked path comes on top."""
    from django.db import connection

    from recovery.engine import transaction as tx

    counts: dict[str, str] = {}
    run = tx.run_pipelined
    originals = bodies_for(lo, hi, hi - lo + 1)[:hi - lo + 1]
    for kind in ("accepted", "duplicate"):  # the same bodies twice: originals, then their copies
        trips, statements = [], []

        def counted(batch, trips=trips):
            trips.append(len(batch))
            return run(batch)

        def wrapper(execute, sql, *rest, seen=statements):
            seen.append(sql)
            return execute(sql, *rest)

        tx.run_pipelined = counted
        try:
            with connection.execute_wrapper(wrapper):
                wsgi_post(application, "/api/wcs/job-finish", originals[0], token)
        finally:
            tx.run_pipelined = run
        counts[kind] = f"pipelined {trips}, other statements {len(statements)}"
        for body in originals[1:]:
            wsgi_post(application, "/api/wcs/job-finish", body, token)
    return counts


def in_process(args) -> int:
    import cProfile

    from django.conf import settings

    application = bench_application()
    token = settings.WCS_CALLBACK_TOKEN
    database = postmaster_process(Path(settings.EMBEDDED_DB_DIR))
    if database is None:
        raise SystemExit("--in-process needs psutil to read the database's CPU")
    kinds = (("trivial JSON view", TRIVIAL_PATH), ("accepted finish", "/api/wcs/job-finish"),
             ("duplicate finish", "/api/wcs/job-finish"))
    seed(1, 200)  # warm-up (not measured): imports, connection, prepared statements
    for _, path in kinds:
        for body in bodies_for(1, 200, 200)[:200]:
            wsgi_post(application, path, body, token)
    seed(201, 220)
    trips = count_trips(application, token, 201, 220)
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in kinds}
    failures, next_id = 0, 221
    for run in range(1, args.runs + 1):
        lo, hi = next_id, next_id + args.workflows - 1
        next_id = hi + 1
        seed(lo, hi)
        originals = bodies_for(lo, hi, args.workflows)[:args.workflows]
        for name, path in kinds:
            profile = cProfile.Profile() if args.profile else None
            statuses: dict[int, int] = {}
            cpu0, db0 = time.process_time(), run_seconds(database)
            if profile:
                profile.enable()
            for body in originals:
                code, _ = wsgi_post(application, path, body, token)
                statuses[code] = statuses.get(code, 0) + 1
            if profile:
                profile.disable()
                Path(args.profile).mkdir(parents=True, exist_ok=True)
                profile.dump_stats(Path(args.profile) / f"{name.replace(' ', '-')}-{run}.prof")
            cpu1, db1 = time.process_time(), run_seconds(database)
            figures[name].append(((cpu1 - cpu0) * 1000 / len(originals), (db1 - db0) * 1000 / len(originals)))
            if statuses != {200: len(originals)}:
                failures += 1
                print(f"  FAILED: {name} answered {statuses}")
        print(f"run {run}: " + "; ".join(f"{name} {f[-1][0]:.2f} + {f[-1][1]:.2f} ms" for name, f in figures.items())
              + f" (in this process + in PostgreSQL, per request; load average {load()})")
    print(f"median over {args.runs} runs of {args.workflows} requests of each kind, CPU per request"
          f"{' (under cProfile: slower)' if args.profile else ''}:")
    for name, f in figures.items():
        server, db = (statistics.median(x[i] for x in f) for i in range(2))
        note = f"; {trips[name.split()[0]]}" if name.split()[0] in trips else ""
        print(f"  {name:<18} this process {server:.3f} ms, PostgreSQL {db:.3f} ms{note}")
    (acc_s, acc_d), (dup_s, dup_d) = ([statistics.median(x[i] for x in figures[k]) for i in range(2)]
                                      for k in ("accepted finish", "duplicate finish"))
    print(f"  half duplicates:   this process {(acc_s + dup_s) / 2:.3f} ms, PostgreSQL {(acc_d + dup_d) / 2:.3f} ms "
          "per callback (gunicorn's HTTP work and the client's are not in these figures)")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workflows", type=int, default=2000, help="workflows per run (2 callbacks each)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4, help="client connections (requests in flight)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--deadline", type=float, default=300, help="seconds before a run stops sending")
    parser.add_argument("--in-process", action="store_true",
                        help="no HTTP: CPU, round trips and statements of each kind of request, one at a time")
    parser.add_argument("--extra-field", metavar="NAME",
                        help="every callback also carries this field, unknown to the contract (ignored, counted)")
    parser.add_argument("--profile", metavar="DIR", help="with --in-process: a cProfile of each kind in DIR")
    args = parser.parse_args()
    if args.extra_field:
        EXTRA_FIELDS[args.extra_field] = {"crane": 4}
    if os.environ.get("DATABASE_URL"):
        raise SystemExit("bench/callbacks.py truncates the WMS tables: it runs on its own embedded database only "
                         "(unset DATABASE_URL)")

    if args.in_process:
        os.environ.update(DEBUG="false", LOG_LEVEL="WARNING")  # as start_server runs the server
    django_on_private_database("callbacks")
    from django.conf import settings
    from django.db import connection

    print(f"database: embedded in {settings.EMBEDDED_DB_DIR}; {os.cpu_count()} CPU(s); "
          f"load average {load()} at the start")
    reset()
    seed_history()
    if args.in_process:
        try:
            return in_process(args)
        finally:
            stop_private_database()
    port = free_port()
    server = start_server(port, args.workers, args.threads)
    meter = CpuMeter(server.pid, Path(settings.EMBEDDED_DB_DIR))
    print(f"gunicorn on 127.0.0.1:{port}: {args.workers} workers x {args.threads} threads; "
          f"client: {args.concurrency} keep-alive connections")
    failures = 0
    results, floors, cpu, cpu_floor = [], [], [], []
    token = settings.WCS_CALLBACK_TOKEN
    try:
        # Warm-up (not measured): connections, imports, plan caches.
        seed(1, 200)
        fire(port, token, bodies_for(1, 200, args.concurrency * 2), args.concurrency, 60)
        fire(port, token, bodies_for(1, 200, args.concurrency * 2), args.concurrency, 60, path=TRIVIAL_PATH)
        next_id = 201
        for run in range(1, args.runs + 1):
            lo, hi = next_id, next_id + args.workflows - 1
            next_id = hi + 1
            seed(lo, hi)
            bodies = bodies_for(lo, hi, args.concurrency * 2)

            # The floor first, same requests, same connections, just before ours.
            cpu_before = meter.sample()
            elapsed, lat, statuses, _ = fire(port, token, bodies, args.concurrency, args.deadline, path=TRIVIAL_PATH)
            cpu_after = meter.sample()
            floor = (len(lat) / elapsed, percentile(lat, 50), percentile(lat, 95))
            floors.append(floor)
            floor_cpu = cpu_split(cpu_before, cpu_after, len(lat))
            if floor_cpu:
                cpu_floor.append(floor_cpu)
            if set(statuses) != {200}:
                failures += 1
                print(f"  FAILED: the trivial view answered {statuses}")

            cpu_before = meter.sample()
            elapsed, lat, statuses, outcomes = fire(port, token, bodies, args.concurrency, args.deadline)
            cpu_after = meter.sample()
            rate = len(lat) / elapsed
            p50, p95, p99 = (percentile(lat, p) for p in (50, 95, 99))
            results.append((rate, p50, p95))
            print(f"run {run}: {len(lat)} callbacks in {elapsed:.2f} s = {rate:.0f}/s; p50 {p50:.1f} ms, "
                  f"p95 {p95:.1f} ms, p99 {p99:.1f} ms; HTTP {dict(sorted(statuses.items()))}; "
                  f"{dict(sorted(outcomes.items()))}")
            print(f"  trivial JSON view, same requests: {floor[0]:.0f}/s, p50 {floor[1]:.1f} ms, p95 {floor[2]:.1f} ms"
                  f" -> callbacks at {rate / floor[0]:.2f} x its rate, {p95 / floor[2]:.1f} x its p95")
            split = cpu_split(cpu_before, cpu_after, len(lat))
            if split:
                server_ms, db_ms, client_ms = split
                capacity = (os.cpu_count() or 1) * 1000 / (server_ms + db_ms + client_ms)
                cpu.append((server_ms, db_ms, client_ms, capacity))
                floor_note = (f"; trivial view: server {floor_cpu[0]:.2f} ms, client {floor_cpu[2]:.2f} ms"
                              if floor_cpu else "")
                print(f"  CPU per callback: server {server_ms:.2f} ms, database {db_ms:.2f} ms, client "
                      f"{client_ms:.2f} ms -> {capacity:.0f} callbacks/s if this work had all "
                      f"{os.cpu_count()} cores{floor_note} (load average now {load()})")
            if len(lat) != len(bodies) or set(statuses) != {200}:
                failures += 1
                print(f"  FAILED: {len(bodies) - len(lat)} not sent, statuses {statuses}")
            if outcomes.get("ACCEPTED") != args.workflows or outcomes.get("DUPLICATE") != args.workflows:
                failures += 1
                print("  FAILED: expected one ACCEPTED and one DUPLICATE per workflow")
        with connection.cursor() as cursor:
            print("checks over every seeded workflow:")
            for name, sql in CHECKS.items():
                cursor.execute(sql, {"lo": 1, "hi": next_id - 1})
                bad = cursor.fetchone()[0]
                failures += bool(bad)
                print(f"  {'ok ' if not bad else 'BAD'} {name}: {bad}")
            cursor.execute(RECEIPTS_BY_OUTCOME)
            print(f"  receipts: {dict(cursor.fetchall())}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        stop_private_database()
    if results:
        rate, p50, p95 = (statistics.median(r[i] for r in results) for i in range(3))
        f_rate, f_p50, f_p95 = (statistics.median(f[i] for f in floors) for i in range(3))
        ratios = [r[0] / f[0] for r, f in zip(results, floors, strict=True)]
        verdict = "meets" if rate >= TARGET_RATE and p95 <= TARGET_P95_MS else "MISSES"
        print(f"median over {len(results)} runs (load average {load()} at the end):")
        print(f"  callbacks (half duplicates): {rate:.0f}/s, p50 {p50:.1f} ms, p95 {p95:.1f} ms; double moves: "
              f"{'none' if not failures else 'SEE FAILURES ABOVE'}")
        print(f"  trivial JSON view (floor):   {f_rate:.0f}/s, p50 {f_p50:.1f} ms, p95 {f_p95:.1f} ms")
        print(f"  ratio callbacks / floor:     {statistics.median(ratios):.2f} of its rate (runs: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}), {p95 / f_p95:.1f} x its p95")
        print(f"  target: >= {TARGET_RATE:,}/s with p95 <= {TARGET_P95_MS:.0f} ms on 2 cores: {verdict} "
              f"(on this machine now; the ratio is the figure that survives other load)")
        if cpu:
            server_ms, db_ms, client_ms, capacity = (statistics.median(c[i] for c in cpu) for i in range(4))
            floor_note = (f"; the trivial view's server CPU {statistics.median(c[0] for c in cpu_floor):.2f} ms"
                          if cpu_floor else "")
            print(f"  CPU per callback (median): server {server_ms:.2f} ms, database {db_ms:.2f} ms, client "
                  f"{client_ms:.2f} ms -> capacity {capacity:.0f} callbacks/s on {os.cpu_count()} cores{floor_note}")
    return 1 if failures else 0


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_split(before, after, requests: int) -> tuple[float, float, float] | None:
    """CPU ms per request of server, database and client between two CpuMeter samples."""
    if not before or not requests:
        return None
    return tuple((a - b) * 1000 / requests for a, b in zip(after, before, strict=True))


if __name__ == "__main__":
    sys.exit(main())
