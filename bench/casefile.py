"""The case file of a workflow with --receipts job-status receipts (each its own report, so none
folds): the time and size of case-file.json (its first page and the next one) and of
case-file.html, median of --runs, and the process's memory growth. Issue 34 measured 1.4 s and
9.7 MB (JSON) and 5.5 s and 23 MB (HTML) at 20,000 receipts before the file was paged.

Builds its own embedded PostgreSQL in /tmp (never the development database).

    .venv/bin/python bench/casefile.py [--receipts 60000] [--runs 5]
"""

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._setup import django_on_private_database, stop_private_database  # noqa: E402

# The receipts in one statement (the WCS's reports, one every second).
MANY_RECEIPTS = """
INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, workflow_id, step_id, stage, job_status,
                                      wcs_event_id, http_status, outcome, message, payload, duration_ms, sequence)
SELECT now() + make_interval(secs => g),
       'job-status', %(job_id)s, %(workflow_id)s, %(step_id)s, '', 2,
       '', 200, 'ACCEPTED', '',
       jsonb_build_object('job_id', %(job_id)s, 'status', 2, 'sequence', g), 1.5, g
FROM generate_series(1, %(count)s) AS g
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receipts", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    django_on_private_database("casefile")
    try:
        run(args)
    finally:
        stop_private_database()


def run(args) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from console.roles import OPERATOR
    from recovery.demo.warehouse import WarehouseBuilder, truncate_wms_tables
    from recovery.models import CallbackReceipt, tidy_job_id

    settings.ALLOWED_HOSTS = ["*"]
    truncate_wms_tables()
    CallbackReceipt.objects.all().delete()
    built = WarehouseBuilder().build("paused")
    wid, step = built.workflow_id, built.step_ids[0]
    with connection.cursor() as cursor:
        cursor.execute(MANY_RECEIPTS, {"job_id": tidy_job_id(wid, step), "workflow_id": wid, "step_id": step,
                                       "count": args.receipts})
        cursor.execute("ANALYZE recovery_callbackreceipt")
    user, _ = get_user_model().objects.get_or_create(username="bench-casefile")
    from django.contrib.auth.models import Group

    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    client = Client()
    client.force_login(user)

    def timed(url, params=None):
        times, size, body = [], 0, None
        for _ in range(args.runs):
            t0 = time.perf_counter()
            response = client.get(url, params or {})
            times.append(time.perf_counter() - t0)
            assert response.status_code == 200, response.status_code
            size, body = len(response.content), response
        return statistics.median(times), size, body

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    json_s, json_size, first = timed(f"/workflows/{wid}/case-file.json")
    following = first.json().get("next")  # None: the whole file was one page
    if following:
        next_s, next_size, _ = timed(f"/workflows/{wid}/case-file.json", {"after": following})
    html_s, html_size, _ = timed(f"/workflows/{wid}/case-file.html")
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"receipts: {args.receipts}, runs: {args.runs} (median)")
    print(f"case-file.json first page: {json_s * 1000:.0f} ms, {json_size / 1024:.0f} KB, "
          f"{len(first.json()['events'])} events")
    if following:
        print(f"case-file.json next page:  {next_s * 1000:.0f} ms, {next_size / 1024:.0f} KB")
    print(f"case-file.html:            {html_s * 1000:.0f} ms, {html_size / 1024:.0f} KB")
    print(f"max RSS growth while reading: {(rss_after - rss_before) / 1024:.0f} MB")


if __name__ == "__main__":
    main()
