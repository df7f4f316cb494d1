"""A duplicate jobFinish or job status report is answered and recorded by one statement in one
round trip, without the row lock (FINISH_DUPLICATE_ANSWER, STATUS_DUPLICATE_ANSWER,
docs/architecture.md §8), with the answer the locked path gives; a callback that statement cannot
prove a duplicate writes nothing in it and takes the locked path, so every callback still has
exactly one receipt. And that read stands for the request's connection health check: the
accepted path sends no separate `SELECT 1`."""

import threading

import pytest
from django.db import connection, transaction
from django.test import Client

from recovery.engine import callbacks, wms_sql
from recovery.engine import transaction as tx
from recovery.engine.callbacks import JobFinishRequest, JobStatusRequest
from recovery.models import CallbackReceipt, tidy_job_id
from tests.wcs_helpers import create, finish, rows, status
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def _count_trips(monkeypatch):
    trips = []
    run = tx.run_pipelined

    def counted(batch):
        trips.append(len(batch))
        return run(batch)

    monkeypatch.setattr(tx, "run_pipelined", counted)
    return trips


def test_a_duplicate_is_answered_and_recorded_in_one_round_trip(wms, monkeypatch):
    created, _ = create(wms, 2)
    client = Client()
    first = finish(client, created.first_job_id, event_id="first")
    assert first.json()["outcome"] == "ACCEPTED"
    before = snapshot()
    trips, statements = _count_trips(monkeypatch), []
    with connection.execute_wrapper(lambda execute, sql, *a: statements.append(sql) or execute(sql, *a)):
        answer = finish(client, created.first_job_id, event_id="copy-1")
    assert trips == [1] and statements == []
    body = answer.json()
    assert answer.status_code == 200
    assert (body["outcome"], body["inventory_moved"], body["event_recorded"]) == ("DUPLICATE", False, False)
    assert body["message"] == "step 1 is already COMPLETED: nothing moved"
    assert body["workflow"] == first.json()["workflow"]
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get(wcs_event_id="copy-1")
    assert (receipt.outcome, receipt.http_status, receipt.message) == ("DUPLICATE", 200, body["message"])
    assert (receipt.workflow_id, receipt.step_id, receipt.job_id, receipt.stage) == (
        created.workflow_id, created.step_ids[0], created.first_job_id, "MOVE_FINISHED")
    assert receipt.payload == {"job_id": created.first_job_id, "stage": "MOVE_FINISHED", "event_id": "copy-1"}
    assert receipt.job_status is None and receipt.duration_ms >= 0


def test_a_duplicate_of_a_completed_workflow_takes_the_one_trip_too(wms, monkeypatch):
    created, _ = create(wms, 2)
    client = Client()
    assert finish(client, created.first_job_id).json()["outcome"] == "ACCEPTED"
    last = finish(client, tidy_job_id(created.workflow_id, created.step_ids[1])).json()
    assert last["workflow_completed"] is True
    trips = _count_trips(monkeypatch)
    body = finish(client, created.first_job_id, event_id="late").json()
    assert trips == [1] and body["outcome"] == "DUPLICATE" and body["workflow"]["status"] == "COMPLETED"
    assert CallbackReceipt.objects.filter(wcs_event_id="late").count() == 1


def test_what_the_read_cannot_prove_writes_nothing_there_and_takes_the_locked_path(wms, monkeypatch):
    created, _ = create(wms, 2)
    client = Client()
    trips = _count_trips(monkeypatch)
    # The original: the read finds no duplicate, the locked path accepts it.
    assert finish(client, created.first_job_id, event_id="a").json()["outcome"] == "ACCEPTED"
    assert trips[0] == 1 and len(trips) > 1
    # A new stage of the completed step: news, recorded under the lock.
    trips.clear()
    body = finish(client, created.first_job_id, stage="OUTBOUND_FINISHED", event_id="b").json()
    assert (body["outcome"], body["event_recorded"]) == ("DUPLICATE", True) and len(trips) > 1
    # A duplicate for a paused workflow: refused under the lock, kept as evidence.
    rows("UPDATE alg.tidy_workflow SET status = 'PAUSED_RECOVERY', pause_reason = 'RECOVERY_JOB_MISMATCH' "
         "WHERE workflow_id = %s", [created.workflow_id])
    trips.clear()
    answer = finish(client, created.first_job_id, event_id="c")
    assert (answer.status_code, answer.json()["outcome"]) == (409, "REFUSED_PAUSED") and len(trips) > 1
    # One receipt per callback, each with the answer it was given.
    receipts = list(CallbackReceipt.objects.order_by("id").values_list("wcs_event_id", "outcome", "http_status"))
    assert receipts == [("a", "ACCEPTED", 200), ("b", "DUPLICATE", 200), ("c", "REFUSED_PAUSED", 409)]


def test_the_duplicate_read_stands_for_the_connection_health_check(wms, monkeypatch):
    created, _ = create(wms, 2)
    assert connection.health_check_enabled  # CONN_HEALTH_CHECKS, as in production
    checks = []
    usable = connection.is_usable
    monkeypatch.setattr(connection, "is_usable", lambda: checks.append(1) or usable())
    client = Client()
    connection.health_check_done = False  # what the start of every request does
    assert finish(client, created.first_job_id).json()["outcome"] == "ACCEPTED"
    assert checks == []
    # Without that read (the frame given no `before_lock`), Django checks as it always did.
    connection.health_check_done = False
    second_job = tidy_job_id(created.workflow_id, created.step_ids[1])
    result = callbacks.process_callback(
        endpoint=CallbackReceipt.Endpoint.JOB_STATUS, request=JobStatusRequest(second_job, 2, None, {}),
        under_lock=callbacks.status_under_lock, receipt_kw={"job_status": 2})
    assert result.outcome == "ACCEPTED"
    assert checks == [1]
    assert CallbackReceipt.objects.count() == 2


def _locked_answer(endpoint, request, under_lock, receipt_kw):
    """What the frame answers the same request without the read before the lock."""
    result = callbacks.process_callback(endpoint=endpoint, request=request, under_lock=under_lock,
                                        receipt_kw=receipt_kw)
    return result.http_status, result.body()


def test_each_duplicate_read_answers_what_the_locked_path_answers(wms):
    created, _ = create(wms, 2)
    client = Client()
    job = created.first_job_id
    assert finish(client, job, event_id="e").json()["outcome"] == "ACCEPTED"
    fast = finish(client, job, event_id="e")
    locked = _locked_answer(CallbackReceipt.Endpoint.JOB_FINISH,
                            JobFinishRequest(job, "MOVE_FINISHED", "e", {}), callbacks.finish_under_lock,
                            {"stage": "MOVE_FINISHED", "event_id": "e"})
    assert (fast.status_code, fast.json()) == locked
    second = tidy_job_id(created.workflow_id, created.step_ids[1])
    for value in (2, 3):
        assert status(client, second, value).json()["outcome"] == "ACCEPTED"
        fast = status(client, second, value)
        locked = _locked_answer(CallbackReceipt.Endpoint.JOB_STATUS, JobStatusRequest(second, value, None, {}),
                                callbacks.status_under_lock, {"job_status": value})
        assert fast.json()["outcome"] == "DUPLICATE" and (fast.status_code, fast.json()) == locked


def test_a_repeated_status_is_answered_and_recorded_in_one_round_trip_while_another_holds_the_row(
        wms, monkeypatch, settings):
    settings.WCS_CALLBACK_LOCK_TIMEOUT_MS = 200
    created, _ = create(wms, 2)
    job = created.first_job_id
    assert status(Client(), job, 2).json()["outcome"] == "ACCEPTED"
    before = snapshot()
    trips, answers = _count_trips(monkeypatch), []
    with transaction.atomic():
        tx.lock_workflow(created.workflow_id, skip_locked=False)  # a long repair holds the row
        copy = threading.Thread(target=lambda: (
            answers.append(status(Client(), job, 2, event_id="again")), connection.close()))
        copy.start()
        copy.join(30)
    (answer,) = answers
    assert trips == [1]
    # The locked path would have waited 200 ms and answered 503 busy.
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["outcome"], body["job_status"]) == ("DUPLICATE", 2)
    assert body["message"] == f"job {job} is already dispatched"
    assert body["workflow"]["status"] == "ACTIVE" and body["workflow"]["steps"][0]["step_id"] == created.step_ids[0]
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get(wcs_event_id="again")
    assert (receipt.endpoint, receipt.outcome, receipt.http_status, receipt.job_status, receipt.message) == (
        "job-status", "DUPLICATE", 200, 2, body["message"])
    assert (receipt.workflow_id, receipt.step_id, receipt.stage) == (created.workflow_id, created.step_ids[0], "")
    assert receipt.payload == {"job_id": job, "status": 2, "event_id": "again"}


@pytest.mark.parametrize("case", ["forward", "backwards", "paused", "archived", "other workflow's step"])
def test_a_status_the_read_cannot_prove_a_duplicate_takes_the_locked_path_with_one_receipt(wms, monkeypatch, case):
    created, _ = create(wms, 2)
    other, _ = create(wms, 1)
    client = Client()
    job = created.first_job_id
    assert status(client, job, 3).json()["outcome"] == "ACCEPTED"
    expected = {"forward": (200, "ACCEPTED"), "backwards": (409, "REFUSED_CONFLICT"),
                "paused": (409, "REFUSED_PAUSED"), "archived": (200, "STALE_REPORT"),
                "other workflow's step": (404, "UNKNOWN_JOB")}[case]
    value = 3
    if case == "forward":  # the other workflow's job is still created (1)
        job, value = other.first_job_id, 2
    elif case == "backwards":
        value = 2
    elif case == "paused":
        rows("UPDATE alg.tidy_workflow SET status = 'PAUSED_RECOVERY', pause_reason = 'RECOVERY_JOB_MISMATCH' "
             "WHERE workflow_id = %s", [created.workflow_id])
    elif case == "archived":
        assert finish(client, job).json()["outcome"] == "ACCEPTED"
    else:  # the job id names this workflow with another workflow's step (whose job has status 3)
        assert status(client, other.first_job_id, 3).json()["outcome"] == "ACCEPTED"
        job = f"TDY-{created.workflow_id}-{other.step_ids[0]}"
        rows("INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id) "
             "VALUES (%s, 28, 3, 'T', 'A', 'B')", [job])
    receipts = CallbackReceipt.objects.count()
    trips = _count_trips(monkeypatch)
    answer = status(client, job, value, event_id="probe")
    assert (answer.status_code, answer.json()["outcome"]) == expected, answer.json()
    assert len(trips) > 1  # the read, then the locked path
    assert CallbackReceipt.objects.count() == receipts + 1
    assert CallbackReceipt.objects.get(wcs_event_id="probe").outcome == expected[1]


def test_the_callback_statements_fit_psycopgs_parse_cache():
    """psycopg re-parses, on every execution, a statement longer than this (where its parameters
    go); the callback's statements run for every request, so each must fit."""
    from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH

    statements = {name: getattr(wms_sql, name) for name in (
        "FINISH_DUPLICATE_ANSWER", "STATUS_DUPLICATE_ANSWER", "LOCK_WORKFLOW_SKIP_LOCKED", "CALLBACK_TARGET",
        "COMPLETE_MOVE_JOB", "RECORD_EVENT_AND_COMPLETE_STEP", "ADVANCE_WORKFLOW",
        "INSERT_CALLBACK_RECEIPT_RETURNING_STATE")}
    statements["evidence_for_workflows"] = wms_sql.evidence_for_workflows()
    too_long = {name: len(sql.encode()) for name, sql in statements.items()
                if len(sql.encode()) > MAX_CACHED_STATEMENT_LENGTH}
    assert too_long == {}
