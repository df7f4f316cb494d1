"""Journal retention: old journal rows go in small batches, recent ones and the audit stay."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import Schedule

from recovery.models import CallbackReceipt, RecoveryCycle
from recovery.runtime.retention import SCHEDULE_NAME, TASK_FUNC, ensure_retention_schedule, journal_retention_run
from tests.ops.test_configuration import _manage

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def _receipts(n: int, *, days_old: float) -> None:
    when = timezone.now() - timedelta(days=days_old)
    ids = [CallbackReceipt.objects.create(endpoint="job-finish", job_id="TDY-1-1", http_status=200,
                                          outcome="ACCEPTED").pk for _ in range(n)]
    CallbackReceipt.objects.filter(pk__in=ids).update(received_at=when)


def test_it_deletes_only_rows_past_retention_in_batches(transactional_db, settings):
    settings.JOURNAL_RETENTION_DAYS = 30
    _receipts(5, days_old=31)
    _receipts(2, days_old=29)
    now = timezone.now()
    RecoveryCycle.objects.create(started_at=now - timedelta(days=31), outcome="SUCCEEDED")
    RecoveryCycle.objects.create(started_at=now, outcome="SUCCEEDED")
    result = journal_retention_run(batch=2)
    assert result["deleted"]["callback_receipts"] == 5 and result["deleted"]["cycles"] == 1
    assert CallbackReceipt.objects.count() == 2 and RecoveryCycle.objects.count() == 1


def test_it_stops_at_its_time_budget_and_the_next_run_goes_on(transactional_db):
    _receipts(5, days_old=100)
    first = journal_retention_run(batch=2, budget_seconds=0)
    assert not first["finished"] and first["deleted"]["callback_receipts"] == 2
    second = journal_retention_run(batch=2)
    assert second["finished"] and CallbackReceipt.objects.count() == 0


def test_rows_not_yet_counted_are_never_deleted(transactional_db):
    """Rows younger than the fold lag are past a zero-day retention but not counted yet: they stay
    (and the metric counters with them) until a later run has folded them."""
    _receipts(3, days_old=5 / (24 * 60))
    result = journal_retention_run(days=0)
    assert result["deleted"]["callback_receipts"] == 0
    assert CallbackReceipt.objects.count() == 3
    journal_retention_run(now=timezone.now() + timedelta(minutes=6), days=0)
    assert CallbackReceipt.objects.count() == 0


def test_the_schedule_is_declared_once(transactional_db):
    Schedule.objects.filter(name=SCHEDULE_NAME).delete()
    ensure_retention_schedule()
    ensure_retention_schedule()
    (row,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert (row.func, row.schedule_type, row.minutes, row.repeats) == (TASK_FUNC, "I", 10, -1)


@pytest.mark.parametrize("env,message", [
    ({"JOURNAL_RETENTION_DAYS": "0"}, "JOURNAL_RETENTION_DAYS must be at least 1"),
    ({"JOURNAL_RETENTION_DAYS": "ninety"}, "JOURNAL_RETENTION_DAYS must be an integer"),
    ({"STALLED_AFTER_MINUTES": "0"}, "STALLED_AFTER_MINUTES must be at least 1"),
    ({"LOG_FORMAT": "xml"}, "LOG_FORMAT must be one of json, text"),
])
def test_a_bad_operations_value_stops_the_program(env, message):
    result = _manage("check", DATABASE_URL="postgresql://localhost/tidy", SECRET_KEY="x",
                     WCS_CALLBACK_TOKEN="t" * 24, **env)
    assert result.returncode != 0
    assert message in result.stderr


# A journal like production's, in proportion: 100 days of rows, a decision for every 20th cycle,
# and fresh statistics, so the plan does not depend on what earlier tests left in the tables.
SEED_JOURNAL = [
    """INSERT INTO recovery_recoverycycle (started_at, finished_at, outcome, trigger, worker, examined,
                                          decision_counts, skipped, stale, errors, error_text)
       SELECT now() - g * interval '10 minutes', now() - g * interval '10 minutes', 'SUCCEEDED', 'SCHEDULE', 'w',
              0, '{}', 0, 0, 0, ''
       FROM generate_series(1, 14400) AS g""",
    """INSERT INTO recovery_recoverydecision (cycle_id, source, decided_at, workflow_id, action, reason, rule,
                                             evidence, fingerprint)
       SELECT id, 'RECOVERY', started_at, id, 'PAUSE', '', '', '{}', 'f'
       FROM recovery_recoverycycle WHERE id % 20 = 0""",
    """INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, stage, wcs_event_id, http_status,
                                            outcome, message)
       SELECT now() - g * interval '5 minutes', 'job-finish', 'TDY-1-1', '', '', 200, 'ACCEPTED', ''
       FROM generate_series(1, 28800) AS g""",
    """INSERT INTO recovery_outboundhttprequest (started_at, purpose, method, url, duration_ms, error)
       SELECT now() - g * interval '1 hour', 'vehicle-snapshot', 'GET', 'http://wcs', 1, ''
       FROM generate_series(1, 2400) AS g""",
    "ANALYZE recovery_recoverycycle, recovery_recoverydecision, recovery_callbackreceipt, "
    "recovery_outboundhttprequest",
]


@pytest.mark.parametrize("statement,index", [
    ("DELETE_DECISIONS", "recovery_decision_time_idx"),
    ("DELETE_CYCLES", "recovery_cycle_started_idx"),
    ("DELETE_CALLBACK_RECEIPTS", "callback_receipt_time_idx"),
    ("DELETE_OUTBOUND_REQUESTS", "outbound_http_time_idx"),
    ("FOLD_CALLBACKS", "callback_receipt_time_idx"),
    ("FOLD_DECISIONS", "recovery_decision_time_idx"),
])
def test_each_retention_statement_finds_its_rows_through_a_time_index(transactional_db, statement, index):
    """On a production-shaped journal a run's statements read only the old (or newly folded)
    rows, through the time index named beside each statement."""
    from django.db import connection

    from recovery.runtime import retention_sql

    now = timezone.now()
    params = {"before": now - timedelta(days=90), "batch": 1000, "since": now - timedelta(minutes=30),
              "until": now - timedelta(minutes=10)}
    with connection.cursor() as cursor:
        for sql in SEED_JOURNAL:
            cursor.execute(sql)
        cursor.execute("EXPLAIN " + getattr(retention_sql, statement), params)
        plan = "\n".join(r[0] for r in cursor.fetchall())
    assert index in plan, plan
