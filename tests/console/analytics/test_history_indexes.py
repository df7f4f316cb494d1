"""Cost independent of history (design §16): the case file's notifications and the analytics
windows read the notification history through an index, never a sequential scan of it.

Checked with EXPLAIN on real row counts (a long history, then ANALYZE), not with
enable_seqscan off: the planner picks the index because it is cheaper on a table this size, as
it will on a site's, and a statement no index serves would show a Seq Scan here."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from console.analytics import sql as analytics_sql
from console.analytics.selectors import _params
from console.casefile.sources import notifications_about
from recovery.models import CallbackReceipt
from tests.query_plans import plan, reads_through_an_index
from tests.repair_support import paused

NOTIFICATIONS = 40_000
RECEIPTS = 40_000

# A history of notifications: one every half hour for about 800 days, each about its own workflow
# (ids from 10,000,000 up), every tenth a group of three workflows; all resolved.
MANY_NOTIFICATIONS = """
INSERT INTO console_notification (event, dedup_key, state, severity, subject, body, workflow_id, reason,
                                  url_path, details, opened_at, last_seen_at, evaluations, resolved_at, aisle)
SELECT 'paused', 'history:' || g, 'resolved', 'warning', 's', '',
       CASE WHEN g %% 10 = 0 THEN NULL ELSE 10000000 + g END,
       'RECOVERY_JOB_MISSING', '/',
       CASE WHEN g %% 10 = 0 THEN jsonb_build_object('workflow_ids', jsonb_build_array(10000000 + g, 10000001 + g,
                                                                                       10000002 + g))
            ELSE '{}'::jsonb END,
       now() - make_interval(mins => 30 * g), now() - make_interval(mins => 30 * g), 1,
       now() - make_interval(mins => 30 * g - 5), ''
FROM generate_series(1, %(count)s) AS g
"""

# Receipts of other workflows: a busy WCS's history.
MANY_RECEIPTS = """
INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, workflow_id, step_id, stage, job_status,
                                      wcs_event_id, http_status, outcome, message, payload, duration_ms)
SELECT now() - make_interval(secs => g), 'job-status', 'TDY-' || (20000000 + g / 20) || '-1',
       20000000 + g / 20, 1, '', 2, '', 200, 'ACCEPTED', '', '{}'::jsonb, 1.0
FROM generate_series(1, %(count)s) AS g
"""


@pytest.fixture
def history(repair_db):
    built = paused(repair_db, "job_missing")
    with connection.cursor() as cursor:
        cursor.execute(MANY_NOTIFICATIONS, {"count": NOTIFICATIONS})
        cursor.execute(MANY_RECEIPTS, {"count": RECEIPTS})
        cursor.execute("ANALYZE console_notification")
        cursor.execute("ANALYZE recovery_callbackreceipt")
    return built


def test_the_case_files_notification_reads_use_the_workflow_and_members_indexes(history):
    member = 10000000 + 21  # its own notification (the 21st) and the 20th's group of three
    # The statement each notification source of the case file runs (console.casefile.sources).
    opened = notifications_about(member).filter(opened_at__isnull=False).order_by("opened_at", "id")
    text = opened[:501].explain()
    assert reads_through_an_index(text, "console_notification", "notification_workflow_idx"), text
    assert "Bitmap Index Scan on notification_members_idx" in text, text
    found = list(opened)
    assert len(found) == 2 and all(n.workflow_id == member or member in n.details["workflow_ids"] for n in found)


def test_the_case_files_receipt_page_reads_only_its_rows_through_the_workflow_id_index(history):
    rows = CallbackReceipt.objects.filter(workflow_id=20000000 + 7, id__gte=1).order_by("id")[:501]
    text = rows.explain()
    assert reads_through_an_index(text, "recovery_callbackreceipt", "callback_receipt_wf_id_idx"), text


@pytest.mark.parametrize("statement", ["ANALYTICS_PERCENTILES", "ANALYTICS_WEEKLY", "ANALYTICS_SPACES"])
def test_the_analytics_windows_read_the_notifications_through_the_opened_at_index(history, statement):
    now = timezone.now()
    params = _params(now=now, since=now - timedelta(days=30), spaces=[])
    text = plan(getattr(analytics_sql, statement), params)
    assert reads_through_an_index(text, "console_notification", "notification_opened_idx"), text
