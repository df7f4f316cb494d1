"""POST /api/wcs/job-finish: the transactional jobFinish callback, end to end through Django."""

import pytest

from recovery.engine.cycle import run_cycle
from recovery.models import CallbackReceipt, tidy_job_id
from tests.wcs_helpers import create, finish, lock_count, post, rows, space_tray, status, stock_locations
from tests.wms_state import diff, snapshot


def test_it_completes_a_three_step_workflow_through_callbacks(wms, client):
    created, moves = create(wms, 3)
    wid, step_ids = created.workflow_id, created.step_ids
    assert lock_count(wid) == 6

    for i, (sid, mv) in enumerate(zip(step_ids, moves, strict=True)):
        job = tidy_job_id(wid, sid)
        assert status(client, job, 2).status_code == 200
        assert status(client, job, 3).status_code == 200
        resp = finish(client, job, event_id=f"wcs-{i}")
        assert resp.status_code == 200, resp.json()
        body = resp.json()
        assert body["outcome"] == "ACCEPTED" and body["inventory_moved"] is True
        assert stock_locations(mv.tray_code) == {mv.target}
        assert (space_tray(mv.source), space_tray(mv.target)) == (None, mv.tray_code)
        last = i == len(step_ids) - 1
        assert body["workflow_completed"] is last
        assert body["workflow"]["status"] == ("COMPLETED" if last else "ACTIVE")
        assert [s["status"] for s in body["workflow"]["steps"]] == (
            ["COMPLETED"] * (i + 1) + (["DISPATCHED"] if not last else []) + ["PENDING"] * (len(step_ids) - i - 2))
        if not last:
            assert body["next_job_id"] == tidy_job_id(wid, step_ids[i + 1])
            assert lock_count(wid) == 6  # locks are released at the end only
    assert lock_count(wid) == 0
    assert rows("SELECT status, completed_at IS NOT NULL FROM alg.tidy_workflow") == [("COMPLETED", True)]
    assert rows("SELECT count(*) FROM mydo_job") == [(0,)]
    assert rows("SELECT job_id, status FROM mydo_job_finish ORDER BY finish_id") == [
        (tidy_job_id(wid, s), 4) for s in step_ids]
    assert rows("SELECT step_id, stage, payload->>'event_id' FROM alg.tidy_callback_event ORDER BY event_id") == [
        (s, "MOVE_FINISHED", f"wcs-{i}") for i, s in enumerate(step_ids)]
    assert CallbackReceipt.objects.filter(outcome="ACCEPTED").count() == 9


def test_it_answers_a_duplicate_with_200_and_moves_nothing(wms, client):
    created, moves = create(wms, 2)
    job = created.first_job_id
    assert finish(client, job).status_code == 200
    before = snapshot()
    resp = finish(client, job)
    assert resp.status_code == 200
    assert resp.json()["outcome"] == "DUPLICATE" and resp.json()["inventory_moved"] is False
    assert resp.json()["workflow"]["steps"][0]["status"] == "COMPLETED"
    assert diff(before, snapshot()) == {}
    assert list(CallbackReceipt.objects.order_by("id").values_list("outcome", "http_status")) == [
        ("ACCEPTED", 200), ("DUPLICATE", 200)]


def test_it_records_another_stage_of_a_completed_step_once(wms, client):
    created, _ = create(wms, 2)
    job = created.first_job_id
    finish(client, job)
    before = snapshot()
    assert finish(client, job, "OUTBOUND_FINISHED").status_code == 200
    assert finish(client, job, "OUTBOUND_FINISHED").status_code == 200
    changes = diff(before, snapshot())
    assert list(changes) == ["alg.tidy_callback_event"]
    (event,) = changes["alg.tidy_callback_event"]["added"].values()
    assert event["stage"] == "OUTBOUND_FINISHED" and event["job_id"] == job


@pytest.mark.parametrize("kind", ["active_not_pre_move", "job_missing"])
def test_it_refuses_a_paused_workflow_changes_nothing_and_records_the_callback(wms, client, kind):
    built = wms.build(kind)
    run_cycle()  # recovery pauses it
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    before = snapshot()
    assert before["alg.tidy_workflow"][built.workflow_id]["status"] == "PAUSED_RECOVERY"
    resp = finish(client, job, event_id="late-1")
    assert resp.status_code == 409
    assert "PAUSED_RECOVERY" in resp.json()["message"]
    assert resp.json()["workflow"]["status"] == "PAUSED_RECOVERY"
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get()
    assert (receipt.workflow_id, receipt.step_id, receipt.job_id, receipt.stage, receipt.wcs_event_id,
            receipt.http_status, receipt.outcome) == (
        built.workflow_id, built.step_ids[0], job, "MOVE_FINISHED", "late-1", 409, "REFUSED_PAUSED")
    assert receipt.payload == {"job_id": job, "stage": "MOVE_FINISHED", "event_id": "late-1"}


@pytest.mark.parametrize("kind", ["active_not_pre_move", "active_mismatch", "active_bad_status",
                                  "finish_not_terminal", "finish_mismatch", "active_and_finished"])
def test_it_refuses_a_finish_the_evidence_does_not_allow(wms, client, kind):
    built = wms.build(kind)
    before = snapshot()
    resp = finish(client, tidy_job_id(built.workflow_id, built.step_ids[0]))
    assert resp.status_code == 409, resp.json()
    assert resp.json()["outcome"] == "REFUSED_CONFLICT"
    assert diff(before, snapshot()) == {}
    assert CallbackReceipt.objects.get().outcome == "REFUSED_CONFLICT"


def test_it_refuses_a_move_whose_target_was_filled_behind_its_back(wms, client):
    created, moves = create(wms, 2)
    # The target gets filled behind the workflow's back: evidence says pre-move is broken.
    rows("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s", [moves[0].tray_code, moves[0].target])
    before = snapshot()
    resp = finish(client, created.first_job_id)
    assert resp.status_code == 409
    assert diff(before, snapshot()) == {}


def test_it_advances_an_archived_finish_without_a_second_move(wms, client):
    built = wms.build("finish_terminal")
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    before = snapshot()
    resp = finish(client, job)
    assert resp.status_code == 200
    assert resp.json()["inventory_moved"] is False
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_step", "mydo_job", "alg.tidy_callback_event"}  # no stock, no spaces
    assert changes["alg.tidy_step"]["changed"] == {
        built.step_ids[0]: {"status": ("DISPATCHED", "COMPLETED")},
        built.step_ids[1]: {"status": ("PENDING", "DISPATCHED")}}


def test_it_completes_the_workflow_on_an_archived_last_step(wms, client):
    built = wms.build("finish_terminal_last")
    resp = finish(client, tidy_job_id(built.workflow_id, built.step_ids[1]))
    assert resp.status_code == 200 and resp.json()["workflow_completed"] is True
    assert lock_count(built.workflow_id) == 0


def test_it_refuses_a_job_that_is_not_the_current_step(wms, client):
    created, _ = create(wms, 2)
    # Step 2's job does not exist yet: unknown job, nothing changed.
    before = snapshot()
    resp = finish(client, tidy_job_id(created.workflow_id, created.step_ids[1]))
    assert resp.status_code == 404
    assert diff(before, snapshot()) == {}


BAD = [
    (b"{", None, "not valid JSON"),
    (b"\xff\xfe", None, "UTF-8"),
    (b"[1, 2]", None, "JSON object"),
    ({"stage": "MOVE_FINISHED"}, "job_id", "missing field 'job_id'"),
    ({"job_id": "TDY-1-1"}, "stage", "missing field 'stage'"),
    ({"job_id": "TDY-1-1", "stage": "RECOVERY_FINISHED"}, "stage", "unknown stage"),
    ({"job_id": "TDY-1-1", "stage": "moved"}, "stage", "unknown stage"),
    ({"job_id": 17, "stage": "MOVE_FINISHED"}, "job_id", "non-empty string"),
    ({"job_id": "", "stage": "MOVE_FINISHED"}, "job_id", "non-empty string"),
    ({"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": {"x": 1}}, "event_id", "non-empty string"),
]


@pytest.mark.parametrize(("body", "field", "text"), BAD)
def test_it_answers_400_naming_the_field_and_changes_nothing(wms, client, body, field, text):
    created, _ = create(wms, 2)
    before = snapshot()
    resp = post(client, "job-finish", body)
    assert resp.status_code == 400
    assert resp.json()["field"] == field and text in resp.json()["message"]
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get()
    assert (receipt.http_status, receipt.outcome, receipt.endpoint) == (400, "BAD_REQUEST", "job-finish")


@pytest.mark.parametrize("job_id", ["JOB-1", "TDY-x-1", "TDY-1-1-1", "TDY-999999-1", "TDY-0-0"])
def test_it_answers_404_for_an_unknown_job_and_changes_nothing(wms, client, job_id):
    create(wms, 2)
    before = snapshot()
    resp = finish(client, job_id)
    assert resp.status_code == 404 and resp.json()["outcome"] == "UNKNOWN_JOB"
    assert diff(before, snapshot()) == {}
    assert CallbackReceipt.objects.get().http_status == 404


def test_it_answers_404_for_another_workflows_step(wms, client):
    a, _ = create(wms, 1)
    b, _ = create(wms, 1)
    before = snapshot()
    resp = finish(client, tidy_job_id(a.workflow_id, b.step_ids[0]))
    assert resp.status_code == 404
    assert diff(before, snapshot()) == {}


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", "Basic ZGV2LXdjcy10b2tlbg==", "Bearer ",
                                    "dev-wcs-token"])
def test_it_answers_401_without_a_valid_token_and_only_counts_it(wms, client, header):
    created, _ = create(wms, 1)
    before = snapshot()
    extra = {"HTTP_AUTHORIZATION": header} if header is not None else {}
    resp = post(client, "job-finish", {"job_id": created.first_job_id, "stage": "MOVE_FINISHED"}, token=None, **extra)
    assert resp.status_code == 401
    assert resp["WWW-Authenticate"].startswith("Bearer")
    assert diff(before, snapshot()) == {}
    # Counted for operations, nothing of the body kept (tests/recovery/callbacks/test_refusals.py).
    assert list(CallbackReceipt.objects.values_list("outcome", "request_count", "job_id", "payload")) == [
        ("UNAUTHORIZED", 1, "", None)]


@pytest.mark.parametrize("method", ["get", "put", "delete", "patch"])
def test_it_answers_405_for_other_methods(wms, client, method):
    created, _ = create(wms, 1)
    before = snapshot()
    resp = getattr(client, method)("/api/wcs/job-finish", HTTP_AUTHORIZATION="Bearer dev-wcs-token")
    assert resp.status_code == 405 and resp["Allow"] == "POST"
    assert diff(before, snapshot()) == {}


def test_it_needs_no_csrf_token(wms):
    from django.test import Client

    created, _ = create(wms, 1)
    resp = finish(Client(enforce_csrf_checks=True), created.first_job_id)
    assert resp.status_code == 200


def test_it_lists_a_workflows_receipts_refused_ones_included(wms, client):
    built = wms.build("active_not_pre_move")
    other, _ = create(wms, 1)
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    finish(client, job)  # refused: evidence not pre-move
    run_cycle()
    finish(client, job, event_id="while-paused")  # refused: paused
    finish(client, other.first_job_id)
    receipts = CallbackReceipt.objects.filter(workflow_id=built.workflow_id).order_by("-received_at", "-id")
    assert [(r.outcome, r.wcs_event_id) for r in receipts] == [("REFUSED_PAUSED", "while-paused"),
                                                              ("REFUSED_CONFLICT", "")]
