"""Journal retention: old journal rows go in small batches, recent ones and the audit stay."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import Schedule

from recovery.models import CallbackReceipt, RecoveryCycle
from recovery.retention import SCHEDULE_NAME, TASK_FUNC, ensure_retention_schedule, journal_retention_run
from tests.test_configuration import _manage


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
    result = _manage("check", DATABASE_URL="postgresql://localhost/tidy", SECRET_KEY="x", **env)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize("statement,index", [
    ("DELETE_DECISIONS", "recovery_decision_time_idx"),
    ("DELETE_CYCLES", "recovery_cycle_started_idx"),
    ("DELETE_CALLBACK_RECEIPTS", "callback_receipt_time_idx"),
    ("DELETE_OUTBOUND_REQUESTS", "outbound_http_time_idx"),
    ("FOLD_CALLBACKS", "callback_receipt_time_idx"),
    ("FOLD_DECISIONS", "recovery_decision_time_idx"),
])
def test_each_retention_statement_finds_its_rows_through_a_time_index(transactional_db, statement, index):
    """Sequential scans priced out, the plan names the index that serves the statement."""
    from django.db import connection

    from recovery import retention_sql

    params = {"before": timezone.now(), "batch": 1000, "since": timezone.now() - timedelta(days=1),
              "until": timezone.now()}
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute("EXPLAIN " + getattr(retention_sql, statement), params)
            plan = "\n".join(r[0] for r in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")
    assert index in plan, plan
