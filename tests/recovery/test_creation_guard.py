"""The tray guard of tidy creation: never a tidy for a tray that an active job (any kind) or
another open tidy workflow holds; checked under a per-tray advisory lock, so two concurrent
creations for one tray cannot both pass; tidy_create and the simulator explain or skip it."""

import threading
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connections, transaction

from console.simulator.wcs import WcsSimulator
from recovery.demo import sql as demo_sql
from recovery.engine import wms_sql
from recovery.engine.creation import SpaceLocked, TidyMove, TrayBusy, TrayHolder, create_tidy_workflow
from recovery.models import tidy_job_id
from tests.wcs_helpers import TOKEN, rows
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

# pg_locks shows every database of the server: only this one's locks.
THIS_DATABASE = "database = (SELECT oid FROM pg_database WHERE datname = current_database())"


def other_job(wms, tray: str, source: str, *, in_or_out: int = 1, status: int = 2, job_id: str = "OUT-77") -> str:
    """An active WMS job that is not a tidy job (an outbound pick, say) for `tray`."""
    wms._x(demo_sql.BUILDER_INSERT_ACTIVE_JOB, {"j": job_id, "io": in_or_out, "st": status, "t": tray, "s": source,
                                              "g": wms.add_space(None)})
    return job_id


def open_workflow_without_locks(wms, status: str):
    """A workflow (ACTIVE or PAUSED_RECOVERY) naming a tray whose spaces it does not lock, so only
    the tray guard (not the space locks) can stand between it and a second tidy of that tray."""
    mv = wms.move()
    step = "PAUSED_RECOVERY" if status == "PAUSED_RECOVERY" else "DISPATCHED"
    built = wms.workflow(moves=[mv], step_statuses=[step], status=status, lock=False,
                         pause_reason="RECOVERY_JOB_MISSING" if step == "PAUSED_RECOVERY" else None)
    return built, mv


def test_it_refuses_a_tray_with_an_active_job_of_any_kind_and_creates_nothing(wms):
    tray, source = wms.stocked_tray()
    job = other_job(wms, tray, source, in_or_out=1, status=3)
    target = wms.add_space(None)
    before = snapshot()
    with pytest.raises(TrayBusy) as refused:
        create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(tray, source, target)])
    assert refused.value.holders == [TrayHolder(tray, job, 1, 3, None, None)]
    assert str(refused.value) == (f"tray {tray} has active job {job} (in_or_out 1, status 3) — nothing was created")
    assert refused.value.trays == [tray]
    assert diff(before, snapshot()) == {}


@pytest.mark.parametrize("status", ["ACTIVE", "PAUSED_RECOVERY"])
def test_it_refuses_a_tray_in_another_open_tidy_workflow(wms, status):
    built, mv = open_workflow_without_locks(wms, status)
    free = wms.move()
    before = snapshot()
    with pytest.raises(TrayBusy) as refused:
        create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(free.tray_code, free.source, free.target),
                                                        TidyMove(mv.tray_code, mv.source, wms.add_space(None))])
    assert refused.value.holders == [TrayHolder(mv.tray_code, None, None, None, built.workflow_id, status)]
    assert f"tray {mv.tray_code} is in tidy workflow {built.workflow_id} ({status})" in str(refused.value)
    assert set(diff(before, snapshot())) <= {"bas_cargo_space"}  # only the space the test added
    assert rows("SELECT count(*) FROM alg.tidy_workflow") == [(1,)]


def test_it_names_every_holder_of_every_tray(wms):
    built, mv = open_workflow_without_locks(wms, "ACTIVE")
    tidy_job = wms.job(built, 0, status=2)
    tray_b, source_b = wms.stocked_tray()
    job_b = other_job(wms, tray_b, source_b, in_or_out=2, status=1, job_id="IN-5")
    with pytest.raises(TrayBusy) as refused:
        create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(tray_b, source_b, wms.add_space(None)),
                                                        TidyMove(mv.tray_code, mv.source, wms.add_space(None))])
    assert sorted(refused.value.holders, key=str) == sorted([
        TrayHolder(mv.tray_code, tidy_job, 28, 2, None, None),
        TrayHolder(mv.tray_code, None, None, None, built.workflow_id, "ACTIVE"),
        TrayHolder(tray_b, job_b, 2, 1, None, None)], key=str)
    assert refused.value.trays == sorted([tray_b, mv.tray_code])


def test_it_allows_a_tray_whose_jobs_are_archived_and_whose_workflows_are_closed(wms):
    done = wms.build("completed")  # both trays moved, jobs archived, workflow COMPLETED
    cancelled, mv = open_workflow_without_locks(wms, "ACTIVE")
    rows("UPDATE alg.tidy_workflow SET status = 'CANCELLED' WHERE workflow_id = %s", [cancelled.workflow_id])
    moved = done.moves[0]
    created = create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(moved.tray_code, moved.target,
                                                                       wms.add_space(None)),
                                                              TidyMove(mv.tray_code, mv.source, wms.add_space(None))])
    assert rows("SELECT status FROM alg.tidy_workflow WHERE workflow_id = %s", [created.workflow_id]) == [("ACTIVE",)]
    assert rows("SELECT job_id, tray_code FROM mydo_job") == [(created.first_job_id, moved.tray_code)]


def test_a_locked_space_still_refuses_with_its_own_reason(wms):
    first = create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(*vars(wms.move()).values())])
    target = rows("SELECT target_cargo_space_id FROM alg.tidy_step")[0][0]
    tray, source = wms.stocked_tray()
    with pytest.raises(SpaceLocked, match=f"locked by workflow {first.workflow_id}"):
        create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(tray, source, target)])


def test_two_concurrent_creations_for_one_tray_serialise_on_the_tray_lock(wms):
    """The first creation holds its transaction open; the second waits on the tray's advisory
    lock (not on a space), then sees the first one committed and is refused naming it."""
    tray, source = wms.stocked_tray()
    target_1, target_2 = wms.add_space(None), wms.add_space(None)
    created, holding, release = {}, threading.Event(), threading.Event()
    second = {}

    def first():
        try:
            with transaction.atomic():
                created["c"] = create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(tray, source, target_1)])
                holding.set()
                release.wait(20)
        finally:
            connections.close_all()

    def second_creation():
        try:
            second["result"] = create_tidy_workflow(origin="AUTOMATIC", moves=[TidyMove(tray, source, target_2)])
        except Exception as exc:  # noqa: BLE001  (reported to the test)
            second["result"] = exc
        finally:
            connections.close_all()

    t1 = threading.Thread(target=first)
    t1.start()
    assert holding.wait(20)
    t2 = threading.Thread(target=second_creation)
    t2.start()
    waiting = []
    for _ in range(100):
        waiting = rows(f"SELECT locktype FROM pg_locks WHERE {THIS_DATABASE} AND NOT granted")
        if waiting:
            break
        time.sleep(0.05)
    assert waiting == [("advisory",)] and t2.is_alive()  # blocked on the tray, before any space
    release.set()
    t1.join(20)
    t2.join(20)
    c = created["c"]
    refused = second["result"]
    assert isinstance(refused, TrayBusy), refused
    job = tidy_job_id(c.workflow_id, c.step_ids[0])
    assert sorted(refused.holders, key=str) == sorted([
        TrayHolder(tray, job, 28, 1, None, None),
        TrayHolder(tray, None, None, None, c.workflow_id, "ACTIVE")], key=str)
    assert rows("SELECT workflow_id, target_cargo_space_id FROM alg.tidy_step") == [(c.workflow_id, target_1)]
    assert rows(f"SELECT count(*) FROM pg_locks WHERE {THIS_DATABASE} AND locktype = 'advisory'") == [(0,)]


def test_tidy_create_explains_the_refusal_and_fails(wms):
    tray, source = wms.stocked_tray()
    job = other_job(wms, tray, source)
    target = wms.add_space(None)
    before = snapshot()
    with pytest.raises(CommandError, match=f"tray {tray} has active job {job} \\(in_or_out 1, status 2\\)"):
        call_command("tidy_create", "--move", tray, source, target)
    assert diff(before, snapshot()) == {}


def test_the_simulator_never_picks_a_held_tray(wms):
    tray, source = wms.stocked_tray()
    other_job(wms, tray, source)
    open_workflow_without_locks(wms, "PAUSED_RECOVERY")
    for _ in range(3):
        wms.add_space(None)
    sim = WcsSimulator(console_url="http://127.0.0.1:9", token=TOKEN, max_active=5, max_steps=2, seed=1)
    before = snapshot()
    assert sim.create_one() is None
    assert diff(before, snapshot()) == {}
    free, _ = wms.stocked_tray()
    created = sim.create_one()
    assert created is not None
    assert rows("SELECT tray_code FROM alg.tidy_step WHERE workflow_id = %s", [created.workflow_id]) == [(free,)]


def test_the_tray_guard_reads_active_jobs_through_the_tray_index(wms):
    """With sequential scans priced out the plan names the index: a WMS with many active jobs
    answers the guard from mydo_job_tray_code_idx, not a scan of mydo_job."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute("EXPLAIN " + wms_sql.TRAY_HOLDERS, {"trays": ["T-1", "T-2"]})
            plan = "\n".join(r[0] for r in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")
    assert "mydo_job_tray_code_idx" in plan, plan
