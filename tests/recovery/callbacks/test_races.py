"""Callbacks racing each other and racing recovery, on real separate database connections."""

import threading
import time

import pytest
from django.db import connection, transaction
from django.test import Client

from recovery.engine import transaction as tx
from recovery.engine.callbacks import JobFinishRequest, job_finish_process
from recovery.engine.cycle import run_cycle
from recovery.engine.transaction import Outcome, reconcile_workflow
from recovery.models import CallbackReceipt, RecoveryDecision, tidy_job_id
from recovery.runtime.lease import connect_direct
from tests.wcs_helpers import create, finish, rows, stock_locations

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

JOIN_SECONDS = 30


def in_threads(n: int, fn):
    """Run fn(i) on n threads (each with its own database connection), released together by a
    barrier; return their results in order. Re-raises the first exception."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def run(i):
        try:
            barrier.wait(timeout=JOIN_SECONDS)
            results[i] = fn(i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_SECONDS)
    assert not any(t.is_alive() for t in threads), "a thread hung (deadlock?)"
    if errors:
        raise errors[0]
    return results


def finish_request(job_id: str, stage: str = "MOVE_FINISHED"):
    return JobFinishRequest(job_id, stage, None, {"job_id": job_id, "stage": stage})


def events(workflow_id: int) -> list[tuple]:
    return rows("SELECT step_id, job_id, stage FROM alg.tidy_callback_event WHERE workflow_id = %s "
                "ORDER BY event_id", [workflow_id])


def wait_until_blocked(n: int = 1) -> None:
    """Wait until n other sessions wait on a lock (the racing thread reached the row lock)."""
    deadline = time.monotonic() + JOIN_SECONDS
    # Its own autocommit connection: inside a transaction pg_stat_activity is a frozen snapshot.
    with connect_direct("race-observer") as observer:
        while time.monotonic() < deadline:
            (waiting,) = observer.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                          "AND datname = current_database()").fetchone()
            if waiting >= n:
                return
            time.sleep(0.01)
    raise AssertionError("the racing transaction never waited on the lock")


# --- duplicates -------------------------------------------------------------------------------


def test_eight_copies_released_together_move_inventory_once(wms):
    created, moves = create(wms, 2)
    wid, (s1, s2) = created.workflow_id, created.step_ids
    job = created.first_job_id
    stock_before = rows("SELECT stock_id, tray_code FROM bas_stock WHERE tray_code = %s ORDER BY stock_id",
                        [moves[0].tray_code])

    answers = in_threads(8, lambda i: finish(Client(), job))

    assert [a.status_code for a in answers] == [200] * 8
    outcomes = sorted(a.json()["outcome"] for a in answers)
    assert outcomes == ["ACCEPTED"] + ["DUPLICATE"] * 7
    assert sum(a.json()["inventory_moved"] for a in answers) == 1
    assert rows("SELECT job_id, status FROM mydo_job_finish") == [(job, 4)]
    assert rows("SELECT stock_id, tray_code FROM bas_stock WHERE tray_code = %s ORDER BY stock_id",
                [moves[0].tray_code]) == stock_before  # the same rows, not copies
    assert stock_locations(moves[0].tray_code) == {moves[0].target}
    assert events(wid) == [(s1, job, "MOVE_FINISHED")]
    assert rows("SELECT job_id, status FROM mydo_job") == [(tidy_job_id(wid, s2), 1)]
    assert CallbackReceipt.objects.count() == 8


def test_eight_copies_of_each_stage_give_one_event_per_stage(wms):
    created, _ = create(wms, 1)
    job = created.first_job_id
    answers = in_threads(8, lambda i: job_finish_process(
        request=finish_request(job, "MOVE_FINISHED" if i % 2 else "OUTBOUND_FINISHED")))
    assert [a.http_status for a in answers] == [200] * 8
    assert sum(a.extra["inventory_moved"] for a in answers) == 1
    assert sorted(stage for _, _, stage in events(created.workflow_id)) == ["MOVE_FINISHED", "OUTBOUND_FINISHED"]
    assert rows("SELECT status FROM alg.tidy_workflow") == [("COMPLETED",)]
    assert rows("SELECT count(*) FROM alg.tidy_space_lock") == [(0,)]


# --- a callback and a recovery cycle on one workflow ------------------------------------------


def _one_advancement(built, stage_winner: str):
    wid, (s1, s2) = built.workflow_id, built.step_ids
    assert rows("SELECT step_id, status FROM alg.tidy_step WHERE workflow_id = %s ORDER BY step_no", [wid]) == [
        (s1, "COMPLETED"), (s2, "DISPATCHED")]
    assert rows("SELECT job_id FROM mydo_job") == [(tidy_job_id(wid, s2),)]
    assert rows("SELECT count(*) FROM mydo_job_finish") == [(1,)]  # archived once, never again
    stages = [stage for step, _, stage in events(wid) if step == s1]
    assert stages[0] == stage_winner  # the advancement that took effect came first
    assert len(set(stages)) == len(stages)


def test_recovery_first_then_the_waiting_callback_is_a_duplicate(wms):
    built = wms.build("finish_terminal")
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    stock_before = rows("SELECT * FROM bas_stock ORDER BY stock_id")
    answers = []
    with transaction.atomic():
        tx.lock_workflow(built.workflow_id, skip_locked=False)  # recovery's transaction holds the row
        callback = threading.Thread(target=lambda: (answers.append(job_finish_process(request=finish_request(job))),
                                                    connection.close()))
        callback.start()
        wait_until_blocked()
        result = reconcile_workflow(built.workflow_id, skip_locked=False)
        assert result.outcome is Outcome.APPLIED
    callback.join(JOIN_SECONDS)
    assert answers[0].http_status == 200 and answers[0].outcome == "DUPLICATE"
    assert answers[0].extra["inventory_moved"] is False
    assert list(RecoveryDecision.objects.values_list("action", flat=True)) == ["ADVANCE"]
    assert rows("SELECT * FROM bas_stock ORDER BY stock_id") == stock_before
    _one_advancement(built, "RECOVERY_FINISHED")


def test_callback_first_then_the_waiting_recovery_leaves_it(wms):
    built = wms.build("finish_terminal")
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    results = []
    with transaction.atomic():
        answer = job_finish_process(request=finish_request(job))  # holds the row until commit
        assert answer.http_status == 200 and answer.outcome == "ACCEPTED"
        recovery = threading.Thread(target=lambda: (
            results.append(reconcile_workflow(built.workflow_id, skip_locked=False)), connection.close()))
        recovery.start()
        wait_until_blocked()
    recovery.join(JOIN_SECONDS)
    assert results[0].outcome is Outcome.LEFT  # re-read under the lock: step 2's job is healthy
    assert RecoveryDecision.objects.count() == 0
    _one_advancement(built, "MOVE_FINISHED")


def test_a_cycle_skips_a_workflow_a_callback_holds_and_leaves_it_next_time(wms):
    built = wms.build("finish_terminal")
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    reports = []
    with transaction.atomic():
        job_finish_process(request=finish_request(job))
        cycle = threading.Thread(target=lambda: (reports.append(run_cycle()), connection.close()))
        cycle.start()
        cycle.join(JOIN_SECONDS)
    assert reports[0].skipped == 1 and sum(reports[0].decisions.values()) == 0
    assert sum(run_cycle().decisions.values()) == 0
    _one_advancement(built, "MOVE_FINISHED")


@pytest.mark.parametrize("kind", ["finish_terminal", "healthy"])
def test_callback_and_cycle_released_together_never_advance_twice(wms, kind):
    for _ in range(5):
        built = wms.build(kind)
        job = tidy_job_id(built.workflow_id, built.step_ids[0])

        def go(i, job=job):
            return job_finish_process(request=finish_request(job)) if i == 0 else run_cycle()

        answer, report = in_threads(2, go)
        assert answer.http_status == 200
        assert report.succeeded
        wid, s1 = built.workflow_id, built.step_ids[0]
        assert rows("SELECT status FROM alg.tidy_step WHERE step_id = %s", [s1]) == [("COMPLETED",)]
        assert rows("SELECT count(*) FROM mydo_job_finish WHERE job_id = %s", [job]) == [(1,)]
        assert rows("SELECT count(*) FROM mydo_job WHERE job_id LIKE %s", [f"TDY-{wid}-%"]) == [(1,)]
        stages = [stage for step, _, stage in events(wid) if step == s1]
        assert len(stages) == len(set(stages)) and len(stages) in (1, 2)
        advancements = int(answer.outcome == "ACCEPTED") + RecoveryDecision.objects.filter(
            workflow_id=wid, action="ADVANCE").count()
        assert advancements == 1


def test_a_callback_that_waits_too_long_for_the_row_answers_503_and_changes_nothing(wms, settings):
    from tests.wms_state import diff, snapshot

    settings.WCS_CALLBACK_LOCK_TIMEOUT_MS = 200
    created, _ = create(wms, 2)
    before = snapshot()
    answers = []
    with transaction.atomic():
        tx.lock_workflow(created.workflow_id, skip_locked=False)  # a long repair holds the row
        waiting = threading.Thread(target=lambda: (
            answers.append(job_finish_process(request=finish_request(created.first_job_id))), connection.close()))
        waiting.start()
        waiting.join(JOIN_SECONDS)
    assert answers[0].http_status == 503 and answers[0].outcome == "UNAVAILABLE"
    assert "busy" in answers[0].message
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get()
    assert (receipt.workflow_id, receipt.http_status, receipt.outcome) == (created.workflow_id, 503, "UNAVAILABLE")
    # Once the row is free the retry goes through.
    assert job_finish_process(request=finish_request(created.first_job_id)).outcome == "ACCEPTED"
