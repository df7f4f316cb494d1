"""Reliability at the edges of a transaction, against the real PostgreSQL:

- the WMS changes between the cycle's classification and its locked re-read: the decision
  follows the new evidence;
- the connection is cut while PostgreSQL runs `COMMIT` of a recovery decision or of a callback:
  the change is either fully applied or not at all, and the next cycle or the retried callback
  converges to exactly one move.

The cut is made at COMMIT itself: a DEFERRABLE INITIALLY DEFERRED constraint trigger, created
only for the test, sleeps when the committing session has `tidy.sleep_at_commit` on; another
connection terminates that backend while it sleeps inside COMMIT.
"""

import threading
import time

import pytest
from django.db import connection, connections
from django.test import Client

from recovery.engine import cycle as recovery_cycle
from recovery.engine.cycle import run_cycle
from recovery.engine.evidence import evidence_for_workflow
from recovery.models import RecoveryDecision, tidy_job_id
from recovery.runtime.lease import connect_direct
from tests.wcs_helpers import TOKEN, create, rows, stock_locations
from tests.wms_state import snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

# --- the WMS changes between classification and the locked re-read --------------------------------


def _change_after_classification(monkeypatch, change) -> dict:
    """Run `change` (on its own connection, committed) right after the cycle classified; the
    returned dict gets the fingerprints of the evidence it classified on."""
    original = recovery_cycle.stream_classification
    seen = {}

    def classify_then_change(**kwargs):
        classified = list(original(**kwargs))  # the whole classification, its transaction ended
        seen.update({e.workflow_id: evidence_for_workflow(e.workflow_id).fingerprint for e in classified})
        floor = connect_direct("test-floor")
        try:
            change(floor)
        finally:
            floor.close()
        yield from classified

    monkeypatch.setattr(recovery_cycle, "stream_classification", classify_then_change)
    return seen


def test_stock_moved_back_after_classification_pauses_instead_of_advancing(wms, monkeypatch):
    built = wms.build("finish_terminal")  # classified ADVANCE: archived finish, tray at the target
    move = built.moves[0]

    def tray_back_at_source(floor):
        floor.execute("UPDATE bas_stock SET cargo_space_id = %s WHERE tray_code = %s", (move.source, move.tray_code))

    classified = _change_after_classification(monkeypatch, tray_back_at_source)
    report = run_cycle()

    assert report.decisions == {"PAUSE": 1}
    decision = RecoveryDecision.objects.get(workflow_id=built.workflow_id)
    assert (decision.action, decision.reason) == ("PAUSE", "RECOVERY_FINISH_EVIDENCE_INVALID")
    assert decision.fingerprint != classified[built.workflow_id], "journaled on the classification's evidence"
    assert evidence_for_workflow(built.workflow_id).workflow_status == "PAUSED_RECOVERY"
    assert rows("SELECT count(*) FROM alg.tidy_callback_event WHERE workflow_id = %s", [built.workflow_id]) == [(0,)]


def test_stock_moved_to_the_target_after_classification_advances_instead_of_pausing(wms, monkeypatch):
    built = wms.build("finish_not_terminal")  # classified PAUSE: archived, but the stock never moved
    move = built.moves[0]

    def tray_arrives_at_target(floor):
        floor.execute("UPDATE bas_stock SET cargo_space_id = %s WHERE tray_code = %s", (move.target, move.tray_code))
        floor.execute("UPDATE bas_cargo_space SET tray_code = NULL WHERE cargo_space_id = %s", (move.source,))
        floor.execute("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s",
                      (move.tray_code, move.target))

    classified = _change_after_classification(monkeypatch, tray_arrives_at_target)
    report = run_cycle()

    assert report.decisions == {"ADVANCE": 1}
    decision = RecoveryDecision.objects.get(workflow_id=built.workflow_id)
    assert (decision.action, decision.reason or None) == ("ADVANCE", None)
    assert decision.fingerprint != classified[built.workflow_id]
    now = evidence_for_workflow(built.workflow_id)
    assert now.workflow_status == "ACTIVE" and now.step.step_id == built.step_ids[1]
    assert rows("SELECT stage FROM alg.tidy_callback_event WHERE step_id = %s", [built.step_ids[0]]) == [
        ("RECOVERY_FINISHED",)]


def test_a_workflow_repaired_on_the_floor_after_classification_is_left_alone(wms, monkeypatch):
    built = wms.build("job_missing")  # classified PAUSE: the job is gone
    move = built.moves[0]

    after_change = {}

    def job_recreated(floor):
        floor.execute("INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, "
                      "target_cargo_space_id) VALUES (%s, 28, 1, %s, %s, %s)",
                      (tidy_job_id(built.workflow_id, built.step_ids[0]), move.tray_code, move.source, move.target))
        after_change["wms"] = snapshot()

    _change_after_classification(monkeypatch, job_recreated)
    report = run_cycle()
    assert report.decisions == {} and report.left_after_recheck == 1
    assert snapshot() == after_change["wms"]
    assert not RecoveryDecision.objects.exists()


# --- the connection cut during COMMIT ---------------------------------------------------------------

SLEEP_AT_COMMIT = """
CREATE FUNCTION public.test_sleep_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('tidy.sleep_at_commit', true) = 'on' THEN
        PERFORM pg_sleep(30);
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER test_sleep_at_commit AFTER INSERT OR UPDATE ON alg.tidy_step
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.test_sleep_at_commit();
"""
DROP_SLEEP_AT_COMMIT = """
DROP TRIGGER IF EXISTS test_sleep_at_commit ON alg.tidy_step;
DROP FUNCTION IF EXISTS public.test_sleep_at_commit();
"""


@pytest.fixture
def sleep_at_commit(wms):
    with connection.cursor() as cursor:
        cursor.execute(SLEEP_AT_COMMIT)
    yield
    with connection.cursor() as cursor:
        cursor.execute(DROP_SLEEP_AT_COMMIT)


def _in_thread_sleeping_at_commit(work) -> dict:
    """Run `work()` in a thread whose connection sleeps at COMMIT; terminate that backend while it
    sleeps there. Returns what the thread saw ({"result": …} or {"error": …})."""
    seen = {}
    ready = threading.Event()

    def thread():
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('tidy.sleep_at_commit', 'on', false), pg_backend_pid()")
                seen["pid"] = cursor.fetchone()[1]
            ready.set()
            seen["result"] = work()
        except Exception as exc:  # the thread's own view of the cut, asserted by the caller
            seen["error"] = exc
        finally:
            ready.set()
            connections.close_all()

    worker = threading.Thread(target=thread)
    worker.start()
    assert ready.wait(30)
    killer = connect_direct("test-killer")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            waiting = killer.execute("SELECT wait_event, query FROM pg_stat_activity WHERE pid = %s",
                                     (seen["pid"],)).fetchone()
            if waiting and waiting[0] == "PgSleep":
                break
            time.sleep(0.02)
        else:
            pytest.fail(f"the worker never reached COMMIT: {waiting}")
        seen["committing"] = waiting[1]
        killer.execute("SELECT pg_terminate_backend(%s)", (seen["pid"],))
    finally:
        killer.close()
    worker.join(30)
    assert not worker.is_alive()
    return seen


def _moves_of(job_id: str) -> int:
    return rows("SELECT count(*) FROM mydo_job_finish WHERE job_id = %s", [job_id])[0][0]


def test_a_recovery_decision_cut_during_commit_is_all_or_nothing_and_the_next_cycle_converges(
        wms, sleep_at_commit):
    built = wms.build("finish_terminal")
    before = snapshot()

    seen = _in_thread_sleeping_at_commit(run_cycle)

    assert "COMMIT" in seen["committing"].upper()
    report = seen["result"]  # the cycle survives its connection being cut: one error, nothing applied
    assert report.errors == 1 and sum(report.decisions.values()) == 0
    assert snapshot() == before, "a decision cut during COMMIT left part of itself behind"
    assert not RecoveryDecision.objects.filter(workflow_id=built.workflow_id).exists()

    follow_up = run_cycle()
    assert follow_up.decisions == {"ADVANCE": 1}
    assert RecoveryDecision.objects.filter(workflow_id=built.workflow_id).count() == 1
    assert rows("SELECT stage FROM alg.tidy_callback_event WHERE step_id = %s", [built.step_ids[0]]) == [
        ("RECOVERY_FINISHED",)]
    assert _moves_of(tidy_job_id(built.workflow_id, built.step_ids[0])) == 1
    assert sum(run_cycle().decisions.values()) == 0


def test_a_callback_cut_during_commit_is_all_or_nothing_and_the_retry_moves_once(wms, sleep_at_commit):
    created, moves = create(wms, 2)
    job = created.first_job_id
    body = {"job_id": job, "stage": "MOVE_FINISHED", "event_id": "cut-1"}
    before = snapshot()

    def finish():
        return Client().post("/api/wcs/job-finish", data=body, content_type="application/json",
                             HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    seen = _in_thread_sleeping_at_commit(finish)

    assert "COMMIT" in seen["committing"].upper()
    assert seen["result"].status_code == 503 and seen["result"]["Retry-After"]
    assert snapshot() == before, "a callback cut during COMMIT left part of itself behind"
    assert _moves_of(job) == 0 and stock_locations(moves[0].tray_code) == {moves[0].source}

    retried = Client().post("/api/wcs/job-finish", data=body, content_type="application/json",
                            HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert retried.status_code == 200 and retried.json()["outcome"] == "ACCEPTED"
    again = Client().post("/api/wcs/job-finish", data=body, content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert again.status_code == 200 and again.json()["outcome"] == "DUPLICATE"
    assert _moves_of(job) == 1
    assert stock_locations(moves[0].tray_code) == {moves[0].target}
    assert rows("SELECT count(*) FROM alg.tidy_callback_event WHERE job_id = %s", [job]) == [(1,)]
    assert sum(run_cycle().decisions.values()) == 0
