"""POST /api/wcs/job-status: dispatched (2) and executing (3), forward only."""

import pytest

from recovery.engine.cycle import run_cycle
from recovery.models import CallbackReceipt, tidy_job_id
from tests.wcs_helpers import create, finish, post, rows, status
from tests.wms_state import diff, snapshot


def job_status(job_id: str):
    found = rows("SELECT status FROM mydo_job WHERE job_id = %s", [job_id])
    return found[0][0] if found else None


def test_it_moves_a_job_forward_to_dispatched_then_executing(wms, client):
    created, _ = create(wms, 2)
    job = created.first_job_id
    before = snapshot()
    resp = status(client, job, 2, event_id="e-1")
    assert resp.status_code == 200
    assert resp.json()["outcome"] == "ACCEPTED"
    assert (resp.json()["previous_status"], resp.json()["job_status"]) == (1, 2)
    assert diff(before, snapshot()) == {"mydo_job": {"added": {}, "removed": {}, "changed": {job: {"status": (1, 2)}}}}
    assert status(client, job, 3).status_code == 200
    assert job_status(job) == 3
    receipts = list(CallbackReceipt.objects.order_by("id").values_list("endpoint", "job_status", "outcome",
                                                                        "wcs_event_id"))
    assert receipts == [("job-status", 2, "ACCEPTED", "e-1"), ("job-status", 3, "ACCEPTED", "")]


def test_it_may_skip_dispatched(wms, client):
    created, _ = create(wms, 1)
    assert status(client, created.first_job_id, 3).status_code == 200
    assert job_status(created.first_job_id) == 3


def test_it_answers_a_repeated_status_with_200_and_changes_nothing(wms, client):
    created, _ = create(wms, 1)
    status(client, created.first_job_id, 2)
    before = snapshot()
    resp = status(client, created.first_job_id, 2)
    assert resp.status_code == 200 and resp.json()["outcome"] == "DUPLICATE"
    assert diff(before, snapshot()) == {}


def test_it_refuses_a_backwards_transition_and_records_it(wms, client):
    created, _ = create(wms, 1)
    job = created.first_job_id
    status(client, job, 3)
    before = snapshot()
    resp = status(client, job, 2, event_id="old-event")
    assert resp.status_code == 409
    assert "never moves it backwards" in resp.json()["message"]
    assert diff(before, snapshot()) == {}
    assert job_status(job) == 3
    receipt = CallbackReceipt.objects.order_by("-id").first()
    assert (receipt.http_status, receipt.outcome, receipt.job_status, receipt.wcs_event_id) == (
        409, "REFUSED_CONFLICT", 2, "old-event")


def test_a_status_for_a_finished_job_is_stale_and_changes_nothing(wms, client):
    created, _ = create(wms, 2)
    job = created.first_job_id
    finish(client, job)
    before = snapshot()
    resp = status(client, job, 3, event_id="late-1")
    assert resp.status_code == 200 and resp.json()["outcome"] == "STALE_REPORT", resp.json()
    assert "finished" in resp.json()["message"]
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.order_by("-id").first()
    assert (receipt.http_status, receipt.outcome, receipt.job_status, receipt.wcs_event_id) == (
        200, "STALE_REPORT", 3, "late-1")


def test_it_refuses_a_status_for_a_paused_workflow(wms, client):
    built = wms.build("active_not_pre_move")
    run_cycle()
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    before = snapshot()
    resp = status(client, job, 3)
    assert resp.status_code == 409 and resp.json()["outcome"] == "REFUSED_PAUSED"
    assert diff(before, snapshot()) == {}
    assert CallbackReceipt.objects.get().workflow_id == built.workflow_id


def test_it_refuses_a_status_when_the_evidence_is_inconsistent(wms, client):
    built = wms.build("healthy", job_status=1)
    wms.put_tray_at_target(built.moves[0])  # moved without the job finishing: recovery will pause it
    before = snapshot()
    resp = status(client, tidy_job_id(built.workflow_id, built.step_ids[0]), 2)
    assert resp.status_code == 409
    assert diff(before, snapshot()) == {}


@pytest.mark.parametrize(("body", "field"), [
    (b"nope", None),
    ({"status": 2}, "job_id"),
    ({"job_id": "TDY-1-1"}, "status"),
    ({"job_id": "TDY-1-1", "status": "3"}, "status"),
    ({"job_id": "TDY-1-1", "status": 4}, "status"),
    ({"job_id": "TDY-1-1", "status": 1}, "status"),
    ({"job_id": "TDY-1-1", "status": True}, "status"),
    ({"job_id": "TDY-1-1", "status": 2.0}, "status"),
])
def test_it_answers_400_naming_the_field_and_changes_nothing(wms, client, body, field):
    create(wms, 1)
    before = snapshot()
    resp = post(client, "job-status", body)
    assert resp.status_code == 400 and resp.json()["field"] == field
    assert diff(before, snapshot()) == {}
    assert CallbackReceipt.objects.get().outcome == "BAD_REQUEST"


def test_it_answers_404_for_an_unknown_job(wms, client):
    create(wms, 1)
    before = snapshot()
    assert status(client, "TDY-424242-1", 2).status_code == 404
    assert status(client, "MOVE-1", 2).status_code == 404
    assert diff(before, snapshot()) == {}


def test_it_answers_401_and_405(wms, client):
    created, _ = create(wms, 1)
    before = snapshot()
    body = {"job_id": created.first_job_id, "status": 2}
    assert post(client, "job-status", body, token="wrong").status_code == 401
    assert post(client, "job-status", body, token=None).status_code == 401
    assert client.get("/api/wcs/job-status", HTTP_AUTHORIZATION="Bearer dev-wcs-token").status_code == 405
    assert diff(before, snapshot()) == {}
    # The two 401s are counted in one row (tests/recovery/callbacks/test_refusals.py); the 405 is not a receipt.
    assert list(CallbackReceipt.objects.values_list("outcome", "request_count")) == [("UNAUTHORIZED", 2)]
