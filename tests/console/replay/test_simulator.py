"""The WCS simulator against a live console (real HTTP), its faults, creation and shutdown."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from console.simulator.wcs import Faults, SnapshotServer, WcsSimulator
from recovery.engine.wcs import WcsSnapshotUnavailable, WcsVehicleSnapshotClient
from recovery.models import CallbackReceipt, OutboundHttpRequest, tidy_job_id
from tests.wcs_helpers import TOKEN, create, rows, stock_locations

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[3]


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def drain(sim: WcsSimulator, clock: FakeClock | None = None, limit: int = 60) -> int:
    """Tick until there is nothing left to do; with a fake clock, jump to the next delayed
    delivery, stall or back-off instead of sleeping."""
    ticks = 0
    while ticks < limit:
        ticks += 1
        if sim.tick():
            if clock is not None:
                clock.now += 0.5
            continue
        if clock is None:
            return ticks
        waits = [d.due for d in sim.delayed] + [t for t in (*sim.stalled.values(), *sim.backoff.values())
                                                if t > clock.now]
        if not waits:
            return ticks
        clock.now = max(clock.now, min(waits))
    return ticks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_it_drives_jobs_to_the_finish_through_the_real_endpoints(wms, live_server):
    created, moves = create(wms, 2)
    sim = WcsSimulator(console_url=live_server.url, token=TOKEN, seed=1)
    drain(sim)
    assert rows("SELECT status FROM alg.tidy_workflow") == [("COMPLETED",)]
    assert all(stock_locations(m.tray_code) == {m.target} for m in moves)
    receipts = list(CallbackReceipt.objects.order_by("id").values_list("endpoint", "job_status", "stage", "outcome"))
    per_step = [("job-status", 2, "", "ACCEPTED"), ("job-status", 3, "", "ACCEPTED"),
                ("job-finish", None, "MOVE_FINISHED", "ACCEPTED")]
    assert receipts == per_step * 2
    assert OutboundHttpRequest.objects.filter(purpose="simulator-callback", status=200).count() == 6


def test_its_faults_never_move_inventory_twice_and_late_reports_are_stale(wms, live_server):
    created, moves = create(wms, 3)
    clock = FakeClock()
    sim = WcsSimulator(console_url=live_server.url, token=TOKEN, seed=7, clock=clock,
                       faults=Faults(drop_ack=1.0, duplicate=1.0, late=1.0, stop_between_steps=1.0,
                                     stall_seconds=5, late_seconds=1))
    drain(sim, clock, limit=200)
    wid = created.workflow_id
    assert rows("SELECT status FROM alg.tidy_workflow") == [("COMPLETED",)]
    assert rows("SELECT count(*) FROM mydo_job_finish") == [(3,)]
    assert all(stock_locations(m.tray_code) == {m.target} for m in moves)
    assert rows("SELECT step_id, stage FROM alg.tidy_callback_event ORDER BY event_id") == [
        (s, "MOVE_FINISHED") for s in created.step_ids]
    outcomes = {}
    for endpoint, outcome in CallbackReceipt.objects.values_list("endpoint", "outcome"):
        outcomes[(endpoint, outcome)] = outcomes.get((endpoint, outcome), 0) + 1
    assert outcomes[("job-finish", "ACCEPTED")] == 3
    assert outcomes[("job-finish", "DUPLICATE")] == 6  # one duplicate and one re-sent finish per step
    # Each late "dispatched" arrives after its job finished: stale, not a conflict.
    assert outcomes[("job-status", "STALE_REPORT")] == 3
    assert ("job-status", "REFUSED_CONFLICT") not in outcomes
    assert tidy_job_id(wid, created.step_ids[0]) in sim.sent_late


def test_with_identity_it_sends_tray_place_and_sequence_and_late_reports_are_stale(wms, live_server):
    created, moves = create(wms, 2)
    clock = FakeClock()
    sim = WcsSimulator(console_url=live_server.url, token=TOKEN, seed=7, clock=clock, identity=True,
                       faults=Faults(late=1.0, late_seconds=1))
    drain(sim, clock, limit=200)
    assert rows("SELECT status FROM alg.tidy_workflow") == [("COMPLETED",)]
    finishes = list(CallbackReceipt.objects.filter(endpoint="job-finish").order_by("id")
                    .values_list("tray_code", "location", "outcome"))
    assert finishes == [(m.tray_code, m.target, "ACCEPTED") for m in moves]
    statuses = list(CallbackReceipt.objects.filter(endpoint="job-status", job_id=created.first_job_id)
                    .order_by("id").values_list("job_status", "sequence", "outcome"))
    # "executing" (2nd report made) arrives first, "dispatched" (the 1st made) arrives late: stale.
    assert statuses == [(3, 2, "ACCEPTED"), (2, 1, "STALE_REPORT")]
    assert not CallbackReceipt.objects.filter(outcome="REFUSED_CONFLICT").exists()


def test_on_request_it_reports_a_wrong_tray_once_and_recovery_pauses_the_workflow(wms, live_server):
    from recovery.engine.cycle import run_cycle

    created, moves = create(wms, 2)
    clock = FakeClock()
    sim = WcsSimulator(console_url=live_server.url, token=TOKEN, seed=7, clock=clock, identity=True,
                       faults=Faults(wrong_tray=1.0))
    for _ in range(3):  # dispatched, executing, the finish with the wrong tray
        sim.tick()
    receipt = CallbackReceipt.objects.get(endpoint="job-finish")
    assert (receipt.outcome, receipt.tray_code) == ("REPORT_MISMATCH", f"{moves[0].tray_code}-OTHER")
    run_cycle()
    assert rows("SELECT status, pause_reason FROM alg.tidy_workflow") == [
        ("PAUSED_RECOVERY", "RECOVERY_WCS_REPORT_MISMATCH")]
    assert stock_locations(moves[0].tray_code) == {moves[0].source}


def test_it_leaves_paused_workflows_alone(wms, live_server):
    from recovery.engine.cycle import run_cycle

    wms.build("active_not_pre_move")
    run_cycle()
    sim = WcsSimulator(console_url=live_server.url, token=TOKEN)
    assert drain(sim) == 1
    assert CallbackReceipt.objects.count() == 0


def test_it_creates_automatic_workflows_from_free_trays_and_spaces(wms):
    for _ in range(6):
        wms.stocked_tray()
        wms.add_space(None)
    sim = WcsSimulator(console_url="http://127.0.0.1:9", token=TOKEN, max_active=2, max_steps=3, seed=3)
    first, second, third = sim.create_one(), sim.create_one(), sim.create_one()
    assert first is not None and second is not None and third is None  # max_active reached
    assert rows("SELECT origin, status FROM alg.tidy_workflow ORDER BY workflow_id") == [
        ("AUTOMATIC", "ACTIVE"), ("AUTOMATIC", "ACTIVE")]
    assert rows("SELECT count(*) FROM mydo_job") == [(2,)]


def test_it_survives_an_empty_warehouse_and_an_unreachable_console(wms):
    sim = WcsSimulator(console_url=f"http://127.0.0.1:{free_port()}", token=TOKEN, create_workflows=True)
    assert sim.tick() is False  # nothing to create from, nothing to drive
    created, _ = create(wms, 1)
    assert sim.tick() is True
    assert sim.stats["no answer"] == 1
    assert rows("SELECT status FROM mydo_job") == [(1,)]


def test_its_snapshot_server_answers_the_snapshot_client(db):
    server = SnapshotServer("http://127.0.0.1:0/wcs/vehicle-snapshot", vehicles=5, busy=2)
    url = server.start()
    try:
        snap = WcsVehicleSnapshotClient(url, 1000).fetch()
    finally:
        server.stop()
    assert [v.id for v in snap.vehicles] == ["V01", "V02", "V03", "V04", "V05"]
    assert [v.id for v in snap.available] == ["V03", "V04", "V05"]
    with pytest.raises(WcsSnapshotUnavailable, match="unreachable"):
        WcsVehicleSnapshotClient(url, 300).fetch()


def test_the_command_serves_the_snapshot_and_stops_cleanly_on_sigterm():
    port = free_port()
    url = f"http://127.0.0.1:{port}/snap"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "WCS_SNAPSHOT_URL": url}
    proc = subprocess.Popen([sys.executable, "manage.py", "wcs_simulator", "--console-url",
                             f"http://127.0.0.1:{free_port()}", "--create-workflows", "--rate", "5"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None, proc.stdout.read()
                assert time.monotonic() < deadline, "the snapshot server never started"
                time.sleep(0.1)
        time.sleep(1.0)  # let it run a few ticks against a database without WMS tables
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "WCS simulator stopped" in out
