"""process_callback, the frame of both callbacks: it locks the workflow row, reads the job's
target, hands over to the named function and records the receipt with the resulting state."""

import psycopg
import pytest

from recovery.engine.callbacks import CallbackResult, JobStatusRequest, process_callback
from recovery.models import CallbackReceipt
from recovery.runtime.lease import connect_direct
from tests.wcs_helpers import create

# Another session must see the locked row: these tests commit theirs.
pytestmark = pytest.mark.usefixtures("committed_db")


def _row_locked_by_another_session(workflow_id):
    """Whether a second connection finds the workflow row locked (FOR UPDATE NOWAIT refuses)."""
    with connect_direct("frame-observer") as observer:
        try:
            observer.execute("SELECT 1 FROM alg.tidy_workflow WHERE workflow_id = %s FOR UPDATE NOWAIT",
                             [workflow_id])
        except psycopg.errors.LockNotAvailable:
            return True
    return False


def test_it_hands_the_locked_row_to_the_named_function_and_records_its_receipt(wms):
    created, _ = create(wms, 1)
    seen = {}

    def under_lock(request, *, workflow_id, step_id, status, target):
        seen.update(workflow_id=workflow_id, step_id=step_id, status=status, step_status=target.step_status,
                    active_status=target.active_status, row_locked=_row_locked_by_another_session(workflow_id))
        return CallbackResult(200, "DUPLICATE", "seen", request.job_id, workflow_id, step_id)

    request = JobStatusRequest(created.first_job_id, 2, "ev-7", {"job_id": created.first_job_id, "status": 2})
    result = process_callback(endpoint="job-status", request=request, under_lock=under_lock,
                              receipt_kw={"job_status": 2, "event_id": "ev-7"})
    assert seen == {"workflow_id": created.workflow_id, "step_id": created.step_ids[0], "status": "ACTIVE",
                    "step_status": "DISPATCHED", "active_status": 1, "row_locked": True}
    assert result.state["status"] == "ACTIVE" and result.state["workflow_id"] == created.workflow_id
    receipt = CallbackReceipt.objects.get()
    assert (receipt.outcome, receipt.wcs_event_id, receipt.job_status) == ("DUPLICATE", "ev-7", 2)


def test_an_unknown_job_never_reaches_the_named_function(wms):
    def under_lock(request, **kw):
        raise AssertionError("called for an unknown job")

    request = JobStatusRequest("TDY-999999-1", 2, None, {"job_id": "TDY-999999-1", "status": 2})
    result = process_callback(endpoint="job-status", request=request, under_lock=under_lock, receipt_kw={})
    assert (result.http_status, result.outcome) == (404, "UNKNOWN_JOB")
    assert CallbackReceipt.objects.get().outcome == "UNKNOWN_JOB"
