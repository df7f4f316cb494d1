"""status_under_lock: a job status report under the workflow row lock, called directly."""

from recovery.engine.callbacks import JobStatusRequest, status_under_lock
from tests.callback_support import under_lock
from tests.wcs_helpers import create, finish, rows
from tests.wms_state import diff, snapshot


def _request(job_id, status):
    return JobStatusRequest(job_id, status, None, {"job_id": job_id, "status": status})


def _job_status(job_id):
    return rows("SELECT status FROM mydo_job WHERE job_id = %s", [job_id])[0][0]


def test_it_moves_a_job_forward_only(wms):
    created, _ = create(wms, 1)
    job = created.first_job_id
    accepted = under_lock(status_under_lock, _request(job, 3))
    assert (accepted.http_status, accepted.outcome) == (200, "ACCEPTED")
    assert accepted.extra == {"job_status": 3, "previous_status": 1}
    assert _job_status(job) == 3
    before = snapshot()
    backwards = under_lock(status_under_lock, _request(job, 2))
    same = under_lock(status_under_lock, _request(job, 3))
    assert (backwards.http_status, backwards.outcome) == (409, "REFUSED_CONFLICT")
    assert "never moves it backwards" in backwards.message
    assert (same.http_status, same.outcome) == (200, "DUPLICATE")
    assert diff(before, snapshot()) == {}


def test_it_refuses_a_report_for_a_job_that_is_not_the_consistent_current_move(wms):
    built = wms.build("active_not_pre_move")
    job = rows("SELECT job_id FROM mydo_job WHERE job_id LIKE %s", [f"TDY-{built.workflow_id}-%"])[0][0]
    before = snapshot()
    result = under_lock(status_under_lock, _request(job, 2))
    assert (result.http_status, result.outcome) == (409, "REFUSED_CONFLICT")
    assert diff(before, snapshot()) == {}


def test_a_report_about_a_finished_job_is_stale_and_one_about_no_job_unknown(wms, client):
    created, _ = create(wms, 2)
    job = created.first_job_id
    assert finish(client, job).status_code == 200
    before = snapshot()
    late = under_lock(status_under_lock, _request(job, 3))
    assert (late.http_status, late.outcome) == (200, "STALE_REPORT")
    assert diff(before, snapshot()) == {}
    second = f"TDY-{created.workflow_id}-{created.step_ids[1]}"
    assert under_lock(status_under_lock, _request(second, 3)).outcome == "ACCEPTED"
    rows("DELETE FROM mydo_job WHERE job_id = %s", [second])  # a job the WMS no longer has, never archived
    gone = under_lock(status_under_lock, _request(second, 3))
    assert (gone.http_status, gone.outcome) == (404, "UNKNOWN_JOB")
