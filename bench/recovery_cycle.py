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

# After a bulk load the planner needs fresh statistics, or it plans the evidence query for
# empty tables and the figures measure a bad plan.
REFRESH_PLANNER_STATISTICS = "ANALYZE"

# One workflow = one step (tray BT-<id> from BS-<id> to BD-<id>), two locks, three stock rows.
# The kind decides the job rows and where the goods are. Set-based: one statement per table.
SEED_SQL = """
INSERT INTO alg.tidy_workflow (workflow_id, origin, status)
SELECT g, CASE WHEN g %% 3 = 0 THEN 'MANUAL' ELSE 'AUTOMATIC' END, 'ACTIVE'
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO alg.tidy_step (step_id, workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id, status)
SELECT g, g, 1, 'BT-' || g, 'BS-' || g, 'BD-' || g,
       CASE WHEN %(kind)s = 'completed' THEN 'COMPLETED' ELSE 'DISPATCHED' END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
SELECT g, s || g FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, unnest(ARRAY['BS-', 'BD-']) AS s;

INSERT INTO bas_cargo_space (cargo_space_id, tray_code)
SELECT 'BS-' || g, CASE WHEN %(kind)s IN ('healthy', 'missing') THEN 'BT-' || g END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
UNION ALL
SELECT 'BD-' || g, CASE WHEN %(kind)s IN ('healthy', 'missing') THEN NULL ELSE 'BT-' || g END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO bas_stock (tray_code, cargo_space_id, sku, qty)
SELECT 'BT-' || g, CASE WHEN %(kind)s IN ('healthy', 'missing') THEN 'BS-' ELSE 'BD-' END || g, 'SKU-' || k, k * 3
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, generate_series(1, 3) AS k;

INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT 'TDY-' || g || '-' || g, 28, 2, 'BT-' || g, 'BS-' || g, 'BD-' || g
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
WHERE %(kind)s = 'healthy';

INSERT INTO mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT 'TDY-' || g || '-' || g, 28, 4, 'BT-' || g, 'BS-' || g, 'BD-' || g
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
WHERE %(kind)s IN ('finished', 'completed');
"""


class Seeder:
    def __init__(self):
        self.next_id = 1

    def seed(self, kind: str, count: int) -> None:
        from django.db import connection

        if count <= 0:
            return
        lo, hi = self.next_id, self.next_id + count - 1
        self.next_id = hi + 1
        with connection.cursor() as cursor:
            for statement in SEED_SQL.split(";\n"):
                if statement.strip():
                    cursor.execute(statement, {"lo": lo, "hi": hi, "kind": kind})

    def seed_needing_action(self, count: int) -> None:
        third = max(1, count // 3)
        self.seed("missing", third)
        self.seed("finished", third)
        self.seed("completed", count - 2 * third)


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
    from recovery.scenarios import truncate_wms_tables

    needing = max(3, n // 100)
    truncate_wms_tables()
    seeder = Seeder()
    started = time.monotonic()
    seeder.seed("healthy", n - needing)
    with connection.cursor() as cursor:
        cursor.execute(REFRESH_PLANNER_STATISTICS)
    print(f"seeded {n - needing:,} healthy active workflows in {time.monotonic() - started:.1f} s; "
          f"each run adds {needing} needing action (1%)")

    query_ms, classify_ms, cycle_ms = [], [], []
    sql = wms_sql.evidence_for_active_workflows()
    for i in range(runs):
        seeder.seed_needing_action(needing)
        with connection.cursor() as cursor:
            cursor.execute(REFRESH_PLANNER_STATISTICS)
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
