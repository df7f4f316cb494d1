"""Concurrency: the workflow row lock, SKIP LOCKED, stale workers and failures (docs/architecture.md §6)."""

import threading
from collections import Counter

import pytest
from django.db import connection, connections

from recovery.demo.warehouse import EXPECTED
from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.engine.transaction import StaleEvidence, apply_decision
from recovery.models import RecoveryDecision
from recovery.runtime.lease import connect_direct
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

MIX = [k for k in EXPECTED if k not in {"completed"}]


def _build_mix(wms, copies):
    return [wms.build(kind) for _ in range(copies) for kind in MIX]


def _run_cycles_in_threads(n):
    barrier = threading.Barrier(n)
    reports, failures = [], []

    def worker():
        try:
            barrier.wait(timeout=30)
            reports.append(run_cycle())
        except Exception as exc:  # surfaced by the assertion below
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    return reports


def test_concurrent_cycles_end_as_one_cycle_would(wms):
    built = _build_mix(wms, copies=20)  # 280 workflows of every kind
    reports = _run_cycles_in_threads(4)
    assert all(r.succeeded and r.errors == 0 for r in reports)

    decisions = Counter(RecoveryDecision.objects.values_list("workflow_id", flat=True))
    assert max(decisions.values()) == 1, "a workflow was decided twice"
    by_workflow = {d.workflow_id: (d.action, d.reason or None) for d in RecoveryDecision.objects.all()}
    for b in built:
        action, reason = EXPECTED[b.kind]
        if action == "LEAVE":
            assert b.workflow_id not in by_workflow
        else:
            assert by_workflow[b.workflow_id] == (action, reason), b.kind
    # Together the workers applied each needed decision exactly once.
    applied = sum(sum(r.decisions.values()) for r in reports)
    assert applied == sum(1 for b in built if EXPECTED[b.kind][0] != "LEAVE")
    with connection.cursor() as cursor:
        cursor.execute("SELECT workflow_id, step_id, job_id, stage, count(*) FROM alg.tidy_callback_event "
                       "GROUP BY 1, 2, 3, 4 HAVING count(*) > 1")
        assert cursor.fetchall() == []
    # A later single cycle finds nothing left to do.
    before = snapshot()
    assert sum(run_cycle().decisions.values()) == 0
    assert diff(before, snapshot()) == {}


def test_a_workflow_locked_by_another_session_is_skipped_then_decided_later(wms):
    held = wms.build("job_missing")
    other = wms.build("job_missing")
    blocker = connect_direct("test-blocker")
    blocker.autocommit = False
    try:
        blocker.execute("SELECT 1 FROM alg.tidy_workflow WHERE workflow_id = %s FOR UPDATE", (held.workflow_id,))
        report = run_cycle()  # must not wait for the blocker
        assert report.skipped == 1
        assert report.decisions == {"PAUSE": 1}
        assert evidence_for_workflow(held.workflow_id).workflow_status == "ACTIVE"
        assert evidence_for_workflow(other.workflow_id).workflow_status == "PAUSED_RECOVERY"
    finally:
        blocker.rollback()
        blocker.close()
    later = run_cycle()
    assert later.skipped == 0 and later.decisions == {"PAUSE": 1}
    assert evidence_for_workflow(held.workflow_id).workflow_status == "PAUSED_RECOVERY"


def test_a_database_error_in_one_workflow_leaves_it_unchanged_and_the_others_decided(wms):
    failing = wms.build("job_missing")
    fine = [wms.build("job_missing"), wms.build("finish_terminal"), wms.build("all_completed")]
    with connection.cursor() as cursor:
        # A real database failure inside that workflow's transaction: its pause UPDATE raises.
        cursor.execute("""
            CREATE FUNCTION pg_temp_fail_for_workflow() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.workflow_id::text = current_setting('tidy.fail_workflow', true) THEN
                    RAISE EXCEPTION 'injected failure';
                END IF;
                RETURN NEW;
            END $$""")
        cursor.execute("SELECT set_config('tidy.fail_workflow', %s, false)", [str(failing.workflow_id)])
        cursor.execute("CREATE TRIGGER fail_one BEFORE UPDATE ON alg.tidy_workflow FOR EACH ROW "
                       "EXECUTE FUNCTION pg_temp_fail_for_workflow()")
    try:
        before = snapshot()
        report = run_cycle()
        after = snapshot()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER fail_one ON alg.tidy_workflow")
            cursor.execute("DROP FUNCTION pg_temp_fail_for_workflow()")
    assert report.succeeded
    assert report.errors == 1
    assert report.decisions == {"PAUSE": 1, "ADVANCE": 1, "COMPLETE": 1}
    changed = diff(before, after)
    assert failing.workflow_id not in changed["alg.tidy_workflow"]["changed"]
    assert all(failing.step_ids[0] != k for k in changed["alg.tidy_step"]["changed"])
    assert not RecoveryDecision.objects.filter(workflow_id=failing.workflow_id).exists()
    assert {b.workflow_id for b in fine} <= set(RecoveryDecision.objects.values_list("workflow_id", flat=True))


def test_a_stale_worker_cannot_apply_a_decision_made_on_old_evidence(wms):
    built = wms.build("job_missing")
    stale_evidence = evidence_for_workflow(built.workflow_id)
    stale_decision = decide(stale_evidence)
    # Meanwhile the job was re-created (e.g. by another worker or an operator).
    wms.job(built, 0, status=1)
    before = snapshot()
    with pytest.raises(StaleEvidence):
        apply_decision(stale_evidence, stale_decision)
    assert diff(before, snapshot()) == {}
    assert RecoveryDecision.objects.count() == 0


def test_a_stale_worker_after_another_decided_changes_nothing(wms):
    built = wms.build("finish_terminal")
    stale_evidence = evidence_for_workflow(built.workflow_id)
    stale_decision = decide(stale_evidence)
    run_cycle()  # another worker advanced it
    before = snapshot()
    with pytest.raises(StaleEvidence):
        apply_decision(stale_evidence, stale_decision)
    assert diff(before, snapshot()) == {}
    assert RecoveryDecision.objects.filter(workflow_id=built.workflow_id).count() == 1


def test_a_fresh_decision_applies_through_the_same_path(wms):
    built = wms.build("job_missing")
    evidence = evidence_for_workflow(built.workflow_id)
    apply_decision(evidence, decide(evidence))
    assert evidence_for_workflow(built.workflow_id).workflow_status == "PAUSED_RECOVERY"


def test_the_evidence_query_failing_fails_the_cycle_and_changes_nothing(wms):
    wms.build("job_missing")
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE bas_stock RENAME TO bas_stock_away")
    try:
        before_rows = RecoveryDecision.objects.count()
        report = run_cycle()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE bas_stock_away RENAME TO bas_stock")
    assert not report.succeeded
    assert "evidence query failed" in report.error_text
    assert RecoveryDecision.objects.count() == before_rows
    from recovery.models import RecoveryCycle

    assert RecoveryCycle.objects.get(pk=report.cycle_id).outcome == "FAILED"


def test_a_terminated_connection_mid_cycle_is_survived(wms):
    """The cycle's connection is killed while it reconciles: that workflow is rolled back, the
    next one reconnects, and a later cycle finishes the job."""
    built = [wms.build("job_missing") for _ in range(3)]
    killer = connect_direct("test-killer")
    from recovery.engine import transaction as tx

    original = tx.decide
    calls = {"n": 0}

    def kill_on_second(evidence):
        calls["n"] += 1
        if calls["n"] == 2:
            pid = connection.cursor().connection.info.backend_pid
            killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return original(evidence)

    tx.decide = kill_on_second
    try:
        report = run_cycle()
    finally:
        tx.decide = original
        killer.close()
    assert report.errors == 1
    assert report.decisions == {"PAUSE": 2}
    follow_up = run_cycle()
    assert follow_up.decisions == {"PAUSE": 1}
    statuses = {evidence_for_workflow(b.workflow_id).workflow_status for b in built}
    assert statuses == {"PAUSED_RECOVERY"}
