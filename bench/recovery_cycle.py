#!/usr/bin/env python
"""Benchmark: the bare evidence query against a full recovery cycle.

Seeds N active tidy workflows (10,000 by default, 100,000 with --large) of which about 1%
need action each run (a third missing their job, a third with a proven finish, a third
finished), then prints medians over several runs: the evidence query alone (SQL + fetch), the
classification (query + evidence objects + decide), the full cycle, and the ratio
cycle / bare query. Uses a private embedded database in /tmp unless DATABASE_URL is set
(then it TRUNCATES the WMS tables there: never point it at a real WMS).

    .venv/bin/python bench/recovery_cycle.py [--workflows N | --large] [--runs 5]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._setup import django_on_private_database, stop_private_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflows", type=int, default=10_000)
    parser.add_argument("--large", action="store_true", help="100,000 workflows")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    n = 100_000 if args.large else args.workflows
    if n < 100 or args.runs < 1:
        parser.error("--workflows must be at least 100 and --runs at least 1")

    django_on_private_database("recovery-cycle")
    try:
        run(n, args.runs)
    finally:
        stop_private_database()


def run(n: int, runs: int) -> None:
    from django.db import connection

    from recovery import wms_sql
    from recovery.cycle import run_cycle
    from recovery.decisions import decide
    from recovery.evidence import evidence_for_active_workflows
    from recovery.scenarios import BulkSeeder, truncate_wms_tables

    needing = max(3, n // 100)
    truncate_wms_tables()
    seeder = BulkSeeder()
    started = time.monotonic()
    seeder.seed("healthy", n - needing)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"seeded {n - needing:,} healthy active workflows in {time.monotonic() - started:.1f} s; "
          f"each run adds {needing} needing action (1%)")

    query_ms, classify_ms, cycle_ms = [], [], []
    sql = wms_sql.evidence_for_active_workflows()
    for i in range(runs):
        seeder.seed_needing_action(needing)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        t = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(sql)
            rows = cursor.fetchall()
        query_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        changes = sum(1 for e in evidence_for_active_workflows() if decide(e).changes_state)
        classify_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        report = run_cycle()
        cycle_ms.append((time.perf_counter() - t) * 1000)
        applied = sum(report.decisions.values())
        print(f"run {i + 1}: {len(rows):,} active, {changes} need action, applied {applied}, "
              f"query {query_ms[-1]:.0f} ms, classify {classify_ms[-1]:.0f} ms, cycle {cycle_ms[-1]:.0f} ms")
        if applied != changes or not report.succeeded:
            raise SystemExit(f"cycle applied {applied} of {changes} decisions (errors={report.errors})")

    q, c, y = (statistics.median(x) for x in (query_ms, classify_ms, cycle_ms))
    print()
    print(f"workflows            {n:,}")
    print(f"evidence query       median {q:.1f} ms  (SQL + fetch)")
    print(f"classification       median {c:.1f} ms  (query + evidence objects + decide)")
    print(f"full cycle           median {y:.1f} ms  (target < 1000 ms)")
    print(f"cycle / bare query   {y / q:.2f}x      (target <= 3x)")


if __name__ == "__main__":
    main()
