"""finish_under_lock and finish_of_completed_step: jobFinish under the workflow row lock, called
directly (the frame around them is tested in test_frame.py)."""

from recovery.engine.callbacks import JobFinishRequest, finish_of_completed_step, finish_under_lock
from recovery.models import tidy_job_id
from tests.callback_support import under_lock
from tests.wcs_helpers import create, rows, space_tray, stock_locations
from tests.wms_state import diff, snapshot


def _request(job_id, stage="MOVE_FINISHED", event_id=None):
    return JobFinishRequest(job_id, stage, event_id, {"job_id": job_id, "stage": stage})


def test_it_completes_the_move_and_dispatches_the_next_job(wms):
    created, moves = create(wms, 2)
    result = under_lock(finish_under_lock, _request(created.first_job_id, event_id="e-1"))
    assert (result.http_status, result.outcome) == (200, "ACCEPTED")
    assert result.extra["inventory_moved"] is True and result.extra["workflow_completed"] is False
    assert result.extra["next_job_id"] == tidy_job_id(created.workflow_id, created.step_ids[1])
    assert stock_locations(moves[0].tray_code) == {moves[0].target}
    assert (space_tray(moves[0].source), space_tray(moves[0].target)) == (None, moves[0].tray_code)
    assert rows("SELECT stage, payload->>'event_id' FROM alg.tidy_callback_event") == [("MOVE_FINISHED", "e-1")]


def test_it_refuses_a_finish_whose_evidence_is_not_the_pre_move_state_and_changes_nothing(wms):
    built = wms.build("active_not_pre_move")
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    before = snapshot()
    result = under_lock(finish_under_lock, _request(job))
    assert (result.http_status, result.outcome) == (409, "REFUSED_CONFLICT")
    assert result.message.startswith("the move cannot be completed")
    assert diff(before, snapshot()) == {}


def test_a_finish_of_a_completed_step_moves_nothing_and_records_a_new_stage_once(wms):
    created, _ = create(wms, 2)
    job = created.first_job_id
    assert under_lock(finish_under_lock, _request(job)).outcome == "ACCEPTED"
    before = snapshot()
    first = under_lock(finish_of_completed_step, _request(job, stage="OUTBOUND_FINISHED"))
    again = under_lock(finish_of_completed_step, _request(job, stage="OUTBOUND_FINISHED"))
    assert (first.http_status, first.outcome, first.extra) == (
        200, "DUPLICATE", {"inventory_moved": False, "event_recorded": True})
    assert (again.outcome, again.extra["event_recorded"]) == ("DUPLICATE", False)
    assert set(diff(before, snapshot())) == {"alg.tidy_callback_event"}
