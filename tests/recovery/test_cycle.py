"""Every row of the decision table through a real cycle, asserting the whole WMS state after."""

import pytest

from recovery.demo.warehouse import EXPECTED
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle, RecoveryDecision, tidy_job_id
from tests.wms_state import diff, snapshot

PAUSE_KINDS = [k for k, (action, _) in EXPECTED.items() if action == "PAUSE"]
LEAVE_KINDS = [k for k, (action, _) in EXPECTED.items() if action == "LEAVE"]


def _build_with_bystander(wms, kind):
    bystander = wms.build("healthy")  # a neighbour that must stay untouched
    built = wms.build(kind)
    return built, bystander


@pytest.mark.parametrize("kind", LEAVE_KINDS)
def test_it_changes_nothing_for_workflows_it_leaves(wms, kind):
    _build_with_bystander(wms, kind)
    before = snapshot()
    report = run_cycle()
    assert report.succeeded and sum(report.decisions.values()) == 0
    assert diff(before, snapshot()) == {}
    assert RecoveryDecision.objects.count() == 0


@pytest.mark.parametrize("kind", PAUSE_KINDS)
def test_it_pauses_workflow_and_step_and_keeps_every_lock(wms, kind):
    built, _ = _build_with_bystander(wms, kind)
    reason = EXPECTED[kind][1]
    before = snapshot()
    report = run_cycle()

    changes = diff(before, snapshot())
    assert set(changes) <= {"alg.tidy_workflow", "alg.tidy_step"}
    assert changes["alg.tidy_workflow"] == {"added": {}, "removed": {}, "changed": {
        built.workflow_id: {"status": ("ACTIVE", "PAUSED_RECOVERY"), "pause_reason": (None, reason)}}}
    step_changes = changes.get("alg.tidy_step", {"added": {}, "removed": {}, "changed": {}})
    if kind == "completed_job_active":
        assert step_changes["changed"] == {}  # no incomplete step to pause
    else:
        first = built.step_ids[0]
        assert step_changes == {"added": {}, "removed": {}, "changed": {
            first: {"status": (before["alg.tidy_step"][first]["status"], "PAUSED_RECOVERY"),
                    "pause_reason": (None, reason)}}}
    assert report.decisions == {"PAUSE": 1}
    assert report.reasons == {reason: 1}
    journal = RecoveryDecision.objects.get()
    assert (journal.workflow_id, journal.action, journal.reason) == (built.workflow_id, "PAUSE", reason)
    assert journal.evidence["workflow_id"] == built.workflow_id
    assert journal.cycle_id == report.cycle_id


def test_it_advances_a_proven_finish_without_moving_inventory(wms):
    built, _ = _build_with_bystander(wms, "finish_terminal")
    wid, (s1, s2) = built.workflow_id, built.step_ids
    before = snapshot()
    report = run_cycle()

    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_step", "mydo_job", "alg.tidy_callback_event"}
    assert changes["alg.tidy_step"]["changed"] == {
        s1: {"status": ("DISPATCHED", "COMPLETED")},
        s2: {"status": ("PENDING", "DISPATCHED")},
    }
    next_job = tidy_job_id(wid, s2)
    mv = built.moves[1]
    assert changes["mydo_job"] == {"added": {next_job: {
        "job_id": next_job, "in_or_out": 28, "status": 1, "tray_code": mv.tray_code,
        "cargo_space_id": mv.source, "target_cargo_space_id": mv.target}}, "removed": {}, "changed": {}}
    (event,) = changes["alg.tidy_callback_event"]["added"].values()
    assert (event["workflow_id"], event["step_id"], event["job_id"], event["stage"]) == (
        wid, s1, tidy_job_id(wid, s1), "RECOVERY_FINISHED")
    assert report.decisions == {"ADVANCE": 1}


def test_it_advances_the_last_step_and_completes_the_workflow(wms):
    built, _ = _build_with_bystander(wms, "finish_terminal_last")
    wid, (_, s2) = built.workflow_id, built.step_ids
    before = snapshot()
    run_cycle()
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "alg.tidy_space_lock", "alg.tidy_callback_event"}
    assert changes["alg.tidy_workflow"]["changed"] == {wid: {"status": ("ACTIVE", "COMPLETED")}}
    assert changes["alg.tidy_step"]["changed"] == {s2: {"status": ("DISPATCHED", "COMPLETED")}}
    assert {r["workflow_id"] for r in changes["alg.tidy_space_lock"]["removed"].values()} == {wid}
    assert len(changes["alg.tidy_space_lock"]["removed"]) == 4
    assert [e["stage"] for e in changes["alg.tidy_callback_event"]["added"].values()] == ["RECOVERY_FINISHED"]


def test_it_completes_a_finished_workflow_and_releases_its_locks(wms):
    built, bystander = _build_with_bystander(wms, "all_completed")
    before = snapshot()
    report = run_cycle()
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_space_lock"}
    assert changes["alg.tidy_workflow"]["changed"] == {built.workflow_id: {"status": ("ACTIVE", "COMPLETED")}}
    released = changes["alg.tidy_space_lock"]["removed"].values()
    assert {r["workflow_id"] for r in released} == {built.workflow_id} and len(released) == 4
    assert report.decisions == {"COMPLETE": 1}


def test_the_demo_mix_gets_exactly_the_table_s_decisions_in_one_cycle(wms):
    built = [wms.build(kind) for kind in EXPECTED]
    report = run_cycle()
    by_workflow = {d.workflow_id: (d.action, d.reason or None) for d in RecoveryDecision.objects.all()}
    for b in built:
        action, reason = EXPECTED[b.kind]
        if action == "LEAVE":
            assert b.workflow_id not in by_workflow, b.kind
        else:
            assert by_workflow[b.workflow_id] == (action, reason), b.kind
    assert report.examined == sum(1 for k in EXPECTED if k not in {"paused", "completed"})


def test_a_second_cycle_changes_nothing(wms):
    for kind in EXPECTED:
        wms.build(kind)
    run_cycle()
    after_first = snapshot()
    decisions = RecoveryDecision.objects.count()
    report = run_cycle()
    assert diff(after_first, snapshot()) == {}
    assert RecoveryDecision.objects.count() == decisions
    assert sum(report.decisions.values()) == 0


def test_repeated_cycles_record_one_recovery_event_and_one_next_job(wms):
    built = wms.build("finish_terminal")
    for _ in range(3):
        run_cycle()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM alg.tidy_callback_event WHERE workflow_id = %s AND stage = "
                       "'RECOVERY_FINISHED'", [built.workflow_id])
        assert cursor.fetchone()[0] == 1
        cursor.execute("SELECT count(*) FROM mydo_job WHERE job_id = %s",
                       [tidy_job_id(built.workflow_id, built.step_ids[1])])
        assert cursor.fetchone()[0] == 1


def test_each_cycle_is_recorded(wms):
    wms.build("job_missing")
    wms.build("healthy")
    report = run_cycle()
    cycle = RecoveryCycle.objects.get(pk=report.cycle_id)
    assert cycle.outcome == "SUCCEEDED"
    assert cycle.examined == 2
    assert cycle.decision_counts == {"PAUSE": 1, "reason:RECOVERY_JOB_MISSING": 1}
    assert cycle.finished_at >= cycle.started_at
    assert cycle.paused_total == 1
    assert (cycle.skipped, cycle.errors, cycle.stale) == (0, 0, 0)
