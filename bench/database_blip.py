#!/usr/bin/env python
"""How long recovery stays silent after a database blip, read from /metrics as monitoring sees it.

Starts the web server and a qcluster (RECOVERY_INTERVAL_SECONDS=10 unless --interval) on a
private embedded database with some active workflows, then, at several phases of the schedule
(a fraction of an interval after a successful cycle ended), either terminates every database
connection or crash-restarts the database (immediate stop, start). After each fault it scrapes
`tidy_recovery_last_success_age_seconds` every 0.2 s until a cycle that ended after the fault
shows, and prints the seconds from the fault to that cycle and from the cycle before it, with
the target of two intervals.

    .venv/bin/python bench/database_blip.py [--interval 10] [--phases 0 0.25 0.5 0.75 0.95]

The machine is shared and noisy: quote the distribution, not one number.
"""

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._setup import django_on_private_database, stop_private_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--phases", type=float, nargs="+", default=[0.0, 0.25, 0.5, 0.75, 0.95])
    parser.add_argument("--faults", nargs="+", default=["cut", "crash"], choices=["cut", "crash"])
    args = parser.parse_args()
    django_on_private_database("blip")

    from django.conf import settings
    from django.db import connection
    from prometheus_client.parser import text_string_to_metric_families

    from console import devdb
    from console.replay.chaos import _terminate_every_connection
    from console.replay.journal import Timeline
    from console.replay.processes import Processes, free_port
    from recovery.demo.warehouse import BulkSeeder, truncate_wms_tables

    truncate_wms_tables()
    BulkSeeder().seed("healthy", 500)
    log_dir = Path(tempfile.mkdtemp(prefix="tidy-blip-"))
    procs = Processes(log_dir=log_dir, timeline=Timeline(), token=secrets.token_urlsafe(24),
                      snapshot_url=f"http://127.0.0.1:{free_port()}/wcs/vehicle-snapshot")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def last_success() -> float | None:
        """Epoch seconds of the last successful cycle's end, as /metrics says, or None."""
        request = urllib.request.Request(f"http://127.0.0.1:{web.port}/metrics",
                                         headers={"Authorization": f"Bearer {procs.metrics_token}"})
        try:
            with opener.open(request, timeout=2) as response:
                now, body = time.time(), response.read().decode()
        except OSError:
            return None
        for family in text_string_to_metric_families(body):
            if family.name == "tidy_recovery_last_success_age_seconds":
                return now - family.samples[0].value
        return None

    def crash_restart() -> None:
        connection.close()
        devdb.crash_stop(settings.EMBEDDED_DB_DIR)
        time.sleep(0.5)
        devdb.restart_after_crash(settings.EMBEDDED_DB_DIR)
        connection.close()

    results: dict[str, list[tuple[float, float, float]]] = {fault: [] for fault in args.faults}
    try:
        env = {"RECOVERY_INTERVAL_SECONDS": str(args.interval)}
        web = procs.start_web(timeout=60)
        qcluster = procs.start_qcluster(extra_env=env)
        procs.wait_startup_cycle(qcluster, timeout=120)
        time.sleep(2 * args.interval)
        for fault in args.faults:
            if fault == "crash" and not settings.EMBEDDED_DATABASE:
                print("crash: only on the embedded database; skipped")
                continue
            for phase in args.phases:
                # A cycle has just ended: wait until /metrics shows a new one.
                seen = last_success()
                while (latest := last_success()) is None or latest == seen or time.time() - latest > 0.5:
                    time.sleep(0.1)
                before = latest
                time.sleep(phase * args.interval)
                at = time.time()
                (_terminate_every_connection if fault == "cut" else crash_restart)()
                while (latest := last_success()) is None or latest <= at:
                    time.sleep(0.2)
                results[fault].append((phase, latest - at, latest - before))
                print(f"{fault:5} phase {phase:4.2f}: next successful cycle {latest - at:5.1f} s after the fault, "
                      f"{latest - before:5.1f} s after the one before (target <= {2 * args.interval} s)", flush=True)
                time.sleep(args.interval)
    finally:
        procs.stop_all()
        connection.close()
        stop_private_database()
    for fault, rows in results.items():
        if rows:
            after = [r[1] for r in rows]
            gaps = [r[2] for r in rows]
            print(f"{fault}: after the fault median {statistics.median(after):.1f} s, max {max(after):.1f} s; "
                  f"between successful cycles median {statistics.median(gaps):.1f} s, max {max(gaps):.1f} s "
                  f"over {len(rows)} phases (interval {args.interval} s)")
    print(f"logs: {log_dir}")
    os._exit(0)


if __name__ == "__main__":
    main()
