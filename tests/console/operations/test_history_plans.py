"""Cost independent of history (design §16): bench/history.py's history, built at a small scale,
and every statement bounded by a watermark or a time window reads it through its index.

Real row counts (20,000 completed workflows over 100 days, 100,000 callback receipts, retention's
fold done, ANALYZE), the planner left to its own costs: a bound it cannot know at plan time (a subquery)
gives a sequential scan of the journal here, as it does on a site's."""

import re

import pytest
from django.db import connection

from bench.history import HISTORY_TABLES, RECEIPTS_PER_WORKFLOW, USERNAME, history_bounded_plans, history_extend
from tests.console.analytics.test_history_indexes import MANY_NOTIFICATIONS
from tests.query_plans import plan, reads_through_an_index, seq_scanned

# A hundred days of history at a small rate: the windows (a day, 30 days, 12 weeks) hold a part of
# it, as on a site's, and the planner sees the tables' real sizes after ANALYZE.
WORKFLOWS = 20_000
PER_DAY = 200
CYCLES_PER_DAY = 288

# Statement -> (table, index): the history table each reads by its bound and the index it must use.
BOUNDED = {
    "CALLBACK_COUNTS": ("recovery_callbackreceipt", "callback_receipt_time_idx"),
    "CALLBACK_DURATION_BUCKETS": ("recovery_callbackreceipt", "callback_receipt_time_idx"),
    "RECOVERY_DECISION_COUNTS": ("recovery_recoverydecision", "recovery_decision_time_idx"),
    "OUTBOUND_REQUEST_COUNTS": ("recovery_outboundhttprequest", "outbound_http_time_idx"),
    "WCS_LAST_HEARD_AGE": ("recovery_callbackreceipt", "callback_receipt_time_idx"),
    "OBSERVED_OUTCOME_COUNTS": ("recovery_recoverydecision", "recovery_decision_observed_idx"),
    "READY_RECOVERY_FACTS": ("recovery_recoverycycle", "recovery_re_outcome_760dfc_idx"),
    "FOLD_CALLBACKS": ("recovery_callbackreceipt", "callback_receipt_time_idx"),
    "ANALYTICS_PERCENTILES": ("recovery_recoverydecision", "recovery_decision_pause_idx"),
    "ANALYTICS_WEEKLY": ("console_notification", "notification_opened_idx"),
    "ANALYTICS_SPACES": ("recovery_recoverydecision", "recovery_decision_pause_idx"),
    "COMPLETED_JOB_DURATIONS": ("mydo_job_finish", "mydo_job_finish_finished_at_idx"),
}


def estimated_rows(text: str, index: str) -> int | None:
    """The planner's row estimate on the plan line that reads `index` (None: the plan does not use it)."""
    line = next((x for x in text.splitlines() if f"Scan on {index}" in x or f"Scan using {index}" in x), None)
    return None if line is None else int(re.search(r"rows=(\d+)", line).group(1))


# Every notification without one acknowledged, by the history's person, five minutes after it opened.
ACKNOWLEDGE_THEM = """
INSERT INTO console_notificationacknowledgement (notification_id, at, user_id, username)
SELECT n.id, n.opened_at + interval '5 minutes', (SELECT id FROM auth_user WHERE username = %(username)s), 'operator'
FROM console_notification AS n
WHERE NOT EXISTS (SELECT FROM console_notificationacknowledgement AS k WHERE k.notification_id = n.id)
"""


def build() -> None:
    history_extend(1, WORKFLOWS, per_day=PER_DAY, cycles_per_day=CYCLES_PER_DAY)
    # Notifications are rarer than receipts (one a pause): the case file's test adds a long history
    # of them, so that table too is larger than a window of it.
    with connection.cursor() as cursor:
        cursor.execute(MANY_NOTIFICATIONS, {"count": 40_000})
        cursor.execute(ACKNOWLEDGE_THEM, {"username": USERNAME})
        cursor.execute("ANALYZE console_notification")
        cursor.execute("ANALYZE console_notificationacknowledgement")


@pytest.mark.slow
def test_every_bounded_statement_reads_its_history_through_its_index(wms):
    build()
    plans = history_bounded_plans()
    assert set(plans) == set(BOUNDED)
    scanned = {name: text for name, text in plans.items()
               if any(seq_scanned(text, table.split(".")[-1]) for table in HISTORY_TABLES)}
    assert not scanned, "\n\n".join(f"--- {name}\n{text}" for name, text in scanned.items())
    unindexed = {name: text for name, text in plans.items() if not reads_through_an_index(text, *BOUNDED[name])}
    assert not unindexed, "\n\n".join(f"--- {name}\n{text}" for name, text in unindexed.items())


@pytest.mark.slow
def test_the_counters_bound_given_as_a_subquery_is_a_guess_of_a_third_of_the_receipts(wms):
    """The reason the watermark is read first: with the bound as a subquery, as it was, the planner
    cannot know it: it guesses a third of the receipts or scans them all (on millions of them, a
    parallel sequential scan); given as a parameter it knows only the rows since the last fold remain."""
    from console.operations import sql as operations_sql
    from console.operations.metrics import NEVER_FOLDED

    build()
    with connection.cursor() as cursor:
        cursor.execute(operations_sql.JOURNAL_WATERMARKS)
        since = dict(cursor.fetchall()).get("callbacks", NEVER_FOLDED)
    subquery = "coalesce((SELECT folded_before FROM recovery_journalfold WHERE journal = 'callbacks'), '-infinity')"
    guessed = plan(operations_sql.CALLBACK_COUNTS.replace("%(since)s", subquery))
    known = plan(operations_sql.CALLBACK_COUNTS, {"since": since})
    receipts = WORKFLOWS * RECEIPTS_PER_WORKFLOW
    assert (seq_scanned(guessed, "recovery_callbackreceipt")
            or estimated_rows(guessed, "callback_receipt_time_idx") >= receipts // 4), guessed
    assert estimated_rows(known, "callback_receipt_time_idx") <= 100, known
