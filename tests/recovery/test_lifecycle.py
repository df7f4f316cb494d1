"""Tidy creation (locks, first job, refusals), the move procedure's savepoint, tidy_create."""

import time

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from recovery.engine import transaction as tx
from recovery.engine.creation import (
    InvalidMoves,
    NoVehicleAvailable,
    SpaceLocked,
    TidyMove,
    WcsUnavailable,
    create_tidy_workflow,
)
from recovery.engine.wcs import WcsVehicleSnapshotClient
from recovery.models import OutboundHttpRequest, tidy_job_id
from tests.wcs_helpers import answer, create, finish, local_http_server, rows, space_tray, stock_locations
from tests.wms_state import diff, snapshot


def _moves(wms, n):
    return [TidyMove(m.tray_code, m.source, m.target) for m in (wms.move() for _ in range(n))]


def test_it_creates_workflow_steps_locks_and_the_first_job_in_one_go(wms):
    moves = _moves(wms, 3)
    before = snapshot()
    created = create_tidy_workflow(origin="AUTOMATIC", moves=moves)
    wid, (s1, s2, s3) = created.workflow_id, created.step_ids
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "alg.tidy_space_lock", "mydo_job"}
    (wf,) = changes["alg.tidy_workflow"]["added"].values()
    assert (wf["workflow_id"], wf["origin"], wf["status"], wf["pause_reason"]) == (wid, "AUTOMATIC", "ACTIVE", None)
    steps = changes["alg.tidy_step"]["added"]
    assert [(steps[s]["step_no"], steps[s]["status"], steps[s]["tray_code"], steps[s]["cargo_space_id"],
             steps[s]["target_cargo_space_id"]) for s in (s1, s2, s3)] == [
        (1, "DISPATCHED", moves[0].tray_code, moves[0].source, moves[0].target),
        (2, "PENDING", moves[1].tray_code, moves[1].source, moves[1].target),
        (3, "PENDING", moves[2].tray_code, moves[2].source, moves[2].target)]
    locked = sorted(r["cargo_space_id"] for r in changes["alg.tidy_space_lock"]["added"].values())
    assert locked == sorted(s for m in moves for s in (m.source, m.target))
    assert {r["workflow_id"] for r in changes["alg.tidy_space_lock"]["added"].values()} == {wid}
    job = tidy_job_id(wid, s1)
    assert created.first_job_id == job
    assert changes["mydo_job"]["added"] == {job: {
        "job_id": job, "in_or_out": 28, "status": 1, "tray_code": moves[0].tray_code,
        "cargo_space_id": moves[0].source, "target_cargo_space_id": moves[0].target}}


def test_it_refuses_the_whole_creation_when_a_space_is_locked_naming_space_and_holder(wms):
    first = create_tidy_workflow(origin="AUTOMATIC", moves=_moves(wms, 1))
    held_target = rows("SELECT target_cargo_space_id FROM alg.tidy_step")[0][0]
    free = _moves(wms, 1)[0]
    tray, source = wms.stocked_tray()
    before = snapshot()
    with pytest.raises(SpaceLocked) as refused:
        create_tidy_workflow(origin="AUTOMATIC", moves=[free, TidyMove(tray, source, held_target)])
    assert f"space {held_target} is locked by workflow {first.workflow_id}" in str(refused.value)
    assert "nothing was created" in str(refused.value)
    assert [(h.cargo_space_id, h.workflow_id) for h in refused.value.holders] == [(held_target, first.workflow_id)]
    assert diff(before, snapshot()) == {}


def test_it_accepts_a_chain_that_reuses_a_space_freed_by_an_earlier_step(wms, client):
    tray_a, x = wms.stocked_tray()
    y = wms.add_space(None)
    tray_b, z = wms.stocked_tray()
    created = create_tidy_workflow(origin="AUTOMATIC", moves=[(tray_a, x, y), (tray_b, z, x)])
    for sid in created.step_ids:
        assert finish(client, tidy_job_id(created.workflow_id, sid)).status_code == 200
    assert (stock_locations(tray_a), stock_locations(tray_b)) == ({y}, {x})
    assert (space_tray(x), space_tray(y), space_tray(z)) == (tray_b, tray_a, None)


@pytest.mark.parametrize(("case", "text"), [
    ("empty", "at least one move"),
    ("same", "source and target are the same"),
    ("blank", "non-empty code"),
    ("unknown_space", "unknown cargo space"),
    ("wrong_tray", "not tray"),
    ("target_full", "is not empty"),
    ("no_stock", "has no stock rows"),
    ("stock_elsewhere", "not all at"),
    ("bad_origin", "origin must be one of"),
])
def test_it_refuses_moves_that_do_not_fit_the_warehouse_and_creates_nothing(wms, case, text):
    mv = _moves(wms, 1)[0]
    other_tray, other_space = wms.stocked_tray()
    origin = "AUTOMATIC"
    moves = {
        "empty": [],
        "same": [TidyMove(mv.tray_code, mv.source, mv.source)],
        "blank": [TidyMove(" ", mv.source, mv.target)],
        "unknown_space": [TidyMove(mv.tray_code, mv.source, "NOPE-1")],
        "wrong_tray": [mv],
        "target_full": [TidyMove(mv.tray_code, mv.source, other_space)],
        "no_stock": [TidyMove("T-GHOST", mv.source, mv.target)],
        "stock_elsewhere": [TidyMove(mv.tray_code, mv.source, mv.target)],
        "bad_origin": [mv],
    }[case]
    if case == "stock_elsewhere":
        wms.add_stock(mv.tray_code, other_space, 1)
    if case == "bad_origin":
        origin = "WCS"
    if case == "wrong_tray":
        rows("UPDATE bas_cargo_space SET tray_code = 'T-OTHER' WHERE cargo_space_id = %s", [mv.source])
    before = snapshot()
    with pytest.raises(InvalidMoves, match=text):
        create_tidy_workflow(origin=origin, moves=moves)
    assert diff(before, snapshot()) == {}


def test_it_creates_a_manual_tidy_when_wcs_reports_a_free_vehicle(wms):
    body = {"vehicles": [{"id": "V1", "available": False}, {"id": "V2", "available": True}]}
    with local_http_server({"/snap": answer(200, body)}) as base:
        client = WcsVehicleSnapshotClient(f"{base}/snap", 1000)
        created = create_tidy_workflow(origin="MANUAL", moves=_moves(wms, 1), snapshot_client=client)
    assert created.vehicles_available == 1
    assert rows("SELECT origin, status FROM alg.tidy_workflow") == [("MANUAL", "ACTIVE")]
    journal = OutboundHttpRequest.objects.get()
    assert (journal.method, journal.url, journal.status, journal.purpose) == ("GET", f"{base}/snap", 200,
                                                                              "vehicle-snapshot")


def test_it_refuses_a_manual_tidy_when_no_vehicle_is_free(wms):
    body = {"vehicles": [{"id": "V1", "available": False}]}
    moves = _moves(wms, 1)
    before = snapshot()
    with local_http_server({"/snap": answer(200, body)}) as base, pytest.raises(NoVehicleAvailable,
                                                                                match="no vehicle is free"):
        create_tidy_workflow(origin="MANUAL", moves=moves,
                             snapshot_client=WcsVehicleSnapshotClient(f"{base}/snap", 1000))
    assert diff(before, snapshot()) == {}


def test_it_refuses_a_manual_tidy_when_wcs_does_not_answer_in_time(wms):
    def slow(h):
        time.sleep(1.0)
        answer(200, {"vehicles": [{"id": "V1", "available": True}]})(h)

    moves = _moves(wms, 1)
    before = snapshot()
    with local_http_server({"/snap": slow}) as base, pytest.raises(WcsUnavailable, match="within 200 ms"):
        create_tidy_workflow(origin="MANUAL", moves=moves,
                             snapshot_client=WcsVehicleSnapshotClient(f"{base}/snap", 200))
    assert diff(before, snapshot()) == {}


def test_an_automatic_tidy_never_asks_wcs(wms, settings):
    settings.WCS_SNAPSHOT_URL = "http://127.0.0.1:9/never"
    create_tidy_workflow(origin="AUTOMATIC", moves=_moves(wms, 1))
    assert OutboundHttpRequest.objects.count() == 0


def test_the_move_procedure_refusal_rolls_back_to_its_savepoint_only(wms):
    created, moves = create(wms, 1)
    rows("UPDATE bas_cargo_space SET tray_code = NULL WHERE cargo_space_id = %s", [moves[0].source])
    before = snapshot()
    with transaction.atomic():
        with pytest.raises(tx.MoveRefused, match="not in the pre-move state"):
            tx.complete_move_job(created.first_job_id)
        # The transaction is still usable after the refusal.
        assert rows("SELECT count(*) FROM mydo_job")[0][0] == 1
    with transaction.atomic(), pytest.raises(tx.MoveRefused, match="unknown job"):
        tx.complete_move_job("TDY-0-0")
    assert diff(before, snapshot()) == {}


# --- tidy_create ------------------------------------------------------------------------------


def test_tidy_create_creates_from_the_shell(wms, capsys):
    mv = _moves(wms, 1)[0]
    call_command("tidy_create", "--move", mv.tray_code, mv.source, mv.target)
    out = capsys.readouterr().out
    (wid,) = rows("SELECT workflow_id FROM alg.tidy_workflow")[0]
    assert f"workflow {wid} (AUTOMATIC) created" in out and f"TDY-{wid}-" in out


def test_tidy_create_reports_a_refusal_as_a_command_error(wms):
    first = create_tidy_workflow(origin="AUTOMATIC", moves=_moves(wms, 1))
    source = rows("SELECT cargo_space_id FROM alg.tidy_step")[0][0]
    tray, _ = wms.stocked_tray()
    before = snapshot()
    with pytest.raises(CommandError, match=f"locked by workflow {first.workflow_id}"):
        call_command("tidy_create", "--move", tray, source, wms.add_space(None))
    assert set(diff(before, snapshot())) <= {"bas_cargo_space"}  # only the space the test added


def test_tidy_create_needs_a_move(wms):
    with pytest.raises(CommandError):
        call_command("tidy_create")
