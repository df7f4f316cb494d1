"""An accepted jobFinish sends the move (in its savepoint), the advancement and its receipt in one
round trip (`tx.finish_step`, docs/architecture.md §8): what it does is unchanged, a refused move
still rolls back alone, any failure after the move rolls everything back, and the receipt never
names a next job the advancement did not create."""

import dataclasses

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client

from recovery.engine import callbacks
from recovery.engine import transaction as tx
from recovery.engine.evidence import evidence_for_workflow_under_lock
from recovery.models import CallbackReceipt, tidy_job_id
from tests.wcs_helpers import create, finish, rows, stock_locations
from tests.wms_state import diff, snapshot


def _locked_evidence(workflow_id):
    tx.lock_workflow(workflow_id, skip_locked=False)
    return evidence_for_workflow_under_lock(workflow_id)


@pytest.mark.usefixtures("committed_db")
def test_an_accepted_finish_takes_three_round_trips_and_its_commit(wms, monkeypatch):
    created, moves = create(wms, 2)
    trips, statements = [], []
    run = tx.run_pipelined

    def counted(batch):
        trips.append(len(batch))
        return run(batch)

    monkeypatch.setattr(tx, "run_pipelined", counted)
    with connection.execute_wrapper(lambda execute, sql, *a: statements.append(sql) or execute(sql, *a)):
        answer = finish(Client(), created.first_job_id, event_id="e-1")
    assert answer.status_code == 200 and answer.json()["outcome"] == "ACCEPTED"
    # The duplicate probe; BEGIN, row lock, then target and evidence in one statement; savepoint,
    # move, release, the two advancement statements and the receipt. Nothing else goes through a
    # cursor of its own.
    assert trips == [1, 2, 6] and statements == []
    assert stock_locations(moves[0].tray_code) == {moves[0].target}


def test_with_faults_armed_the_pipeline_is_cut_after_the_step_completion(wms, monkeypatch):
    """The replay waits, in pg_stat_activity, for the step's completion before it kills a process
    at the advancement's fault point: with faults armed the statements up to it run first."""
    created, moves = create(wms, 2)
    trips = []
    run = tx.run_pipelined
    monkeypatch.setattr(tx, "run_pipelined", lambda batch: trips.append(len(batch)) or run(batch))
    monkeypatch.setenv("TIDY_FAULTS", "no.such.point:raise")
    answer = finish(Client(), created.first_job_id)
    assert answer.status_code == 200 and answer.json()["outcome"] == "ACCEPTED"
    assert trips == [1, 2, 4, 2]
    assert stock_locations(moves[0].tray_code) == {moves[0].target}


def test_the_receipt_says_what_the_advancement_did(wms):
    created, _ = create(wms, 2)
    client = Client()
    first = finish(client, created.first_job_id).json()
    second_job = tidy_job_id(created.workflow_id, created.step_ids[1])
    last = finish(client, second_job).json()
    assert first["next_job_id"] == second_job and first["event_recorded"] is True
    assert last["workflow_completed"] is True and last["next_job_id"] is None
    assert last["workflow"]["status"] == "COMPLETED"
    receipts = list(CallbackReceipt.objects.order_by("id").values_list("outcome", "message"))
    assert receipts == [("ACCEPTED", first["message"]), ("ACCEPTED", last["message"])]
    assert f"next job {second_job} created" in first["message"]
    assert "workflow completed, locks released" in last["message"]


def test_a_refused_move_rolls_back_to_its_savepoint_alone(wms):
    created, moves = create(wms, 2)
    rows("UPDATE bas_cargo_space SET tray_code = NULL WHERE cargo_space_id = %s", [moves[0].source])
    before = snapshot()
    with transaction.atomic():
        evidence = _locked_evidence(created.workflow_id)
        with pytest.raises(tx.MoveRefused, match="not in the pre-move state"):
            tx.finish_step(workflow_id=created.workflow_id, step=evidence.step, stage="MOVE_FINISHED", payload=None,
                           move_job_id=created.first_job_id,
                           then=[("SELECT 1 FROM alg.tidy_workflow WHERE workflow_id = %(w)s", {"w": 0})])
        # The transaction goes on: nothing after the move ran, the move itself left nothing.
        assert rows("SELECT count(*) FROM alg.tidy_callback_event")[0][0] == 0
        assert rows("SELECT status FROM alg.tidy_step WHERE step_id = %s", [created.step_ids[0]]) == [("DISPATCHED",)]
    assert diff(before, snapshot()) == {}


def test_a_failure_after_the_move_rolls_the_move_back_too(wms):
    created, moves = create(wms, 2)
    before = snapshot()
    with pytest.raises(DatabaseError) as raised, transaction.atomic():
        evidence = _locked_evidence(created.workflow_id)
        tx.finish_step(workflow_id=created.workflow_id, step=evidence.step, stage="MOVE_FINISHED", payload=None,
                       move_job_id=created.first_job_id, then=[("SELECT 1 / %(zero)s", {"zero": 0})])
    assert raised.value.__cause__.sqlstate == "22012"  # division_by_zero, in the last statement
    assert isinstance(raised.value, tx.PipelineFailed) and raised.value.index == 5
    assert diff(before, snapshot()) == {}
    assert stock_locations(moves[0].tray_code) == {moves[0].source}


def test_a_receipt_that_would_name_the_wrong_next_job_rolls_everything_back(wms, monkeypatch):
    created, moves = create(wms, 2)
    original = callbacks.CallbackTarget

    def misread(*args, **kwargs):
        target = original(*args, **kwargs)
        return dataclasses.replace(target, next_step_id=None) if target.next_step_id else target

    monkeypatch.setattr(callbacks, "CallbackTarget", misread)
    before = snapshot()
    answer = finish(Client(), created.first_job_id)
    assert answer.status_code == 503 and answer.json()["outcome"] == "UNAVAILABLE"
    assert "(StaleWrite)" in answer.json()["message"]
    assert diff(before, snapshot()) == {}
    assert list(CallbackReceipt.objects.values_list("outcome", flat=True)) == ["UNAVAILABLE"]
