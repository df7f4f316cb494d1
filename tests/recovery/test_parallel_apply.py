"""A cycle with many decisions applies them on several connections at once, each still one short
transaction of one workflow: every workflow gets exactly one decision, journaled in this cycle."""

import logging

import pytest

from recovery.engine import cycle as recovery_cycle
from recovery.engine.cycle import run_cycle
from recovery.engine.evidence import evidence_for_workflow
from recovery.models import RecoveryDecision

KINDS = {"job_missing": "PAUSE", "finish_terminal": "ADVANCE", "all_completed": "COMPLETE"}


def _build(wms, each: int) -> dict[int, str]:
    return {wms.build(kind).workflow_id: action for kind, action in KINDS.items() for _ in range(each)}


@pytest.mark.usefixtures("committed_db")
def test_many_decisions_are_applied_in_parallel_exactly_once(wms, caplog):
    each = recovery_cycle.APPLY_IN_PARALLEL_FROM  # 3 x that: well above the threshold
    built = _build(wms, each)
    with caplog.at_level(logging.INFO, logger="recovery.decisions"):
        report = run_cycle()
    assert report.succeeded and report.errors == 0 and report.backlog == 0
    assert report.decisions == {action: each for action in KINDS.values()}
    journal = list(RecoveryDecision.objects.values_list("workflow_id", "action", "cycle_id"))
    assert sorted(journal) == sorted((wid, action, report.cycle_id) for wid, action in built.items())
    # The workers ran on connections of their own, and their log lines carry the cycle id.
    threads = {r.threadName for r in caplog.records if r.name == "recovery.decisions"}
    assert len(threads) > 1 and all(name.startswith("recovery-apply-") for name in threads)
    assert {getattr(r, "cycle_id", None) for r in caplog.records if r.name == "recovery.decisions"} == {
        report.cycle_id}
    statuses = {evidence_for_workflow(wid).workflow_status for wid, action in built.items() if action == "PAUSE"}
    assert statuses == {"PAUSED_RECOVERY"}
    assert run_cycle().decisions == {}


@pytest.mark.usefixtures("committed_db")
def test_parallel_workers_start_nothing_after_the_deadline(wms):
    built = _build(wms, recovery_cycle.APPLY_IN_PARALLEL_FROM)
    report = run_cycle(max_seconds=0)
    assert report.succeeded and report.decisions == {} and report.backlog == len(built)
    assert not RecoveryDecision.objects.exists()
    follow_up = run_cycle()
    assert sum(follow_up.decisions.values()) == len(built) and follow_up.backlog == 0


def _apply_backends() -> set[int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
        return {row[0] for row in cursor.fetchall()}


def _gone(backends: set[int]) -> bool:
    """A closed connection's backend leaves pg_stat_activity a moment after the client closes."""
    import time

    deadline = time.monotonic() + 5
    while _apply_backends() & backends:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.usefixtures("committed_db")
def test_a_runners_apply_workers_keep_their_connections_between_cycles_and_close_them(wms):
    workers = recovery_cycle.ApplyWorkers(3)
    try:
        before = _apply_backends()
        _build(wms, recovery_cycle.APPLY_IN_PARALLEL_FROM)
        first = run_cycle(apply_workers=workers)
        assert sum(first.decisions.values()) == 3 * recovery_cycle.APPLY_IN_PARALLEL_FROM
        used = _apply_backends() - before
        assert len(used) == 3  # one connection per worker, still open after the cycle
        built = _build(wms, recovery_cycle.APPLY_IN_PARALLEL_FROM)
        second = run_cycle(apply_workers=workers)
        assert sum(second.decisions.values()) == len(built) and second.errors == 0
        assert _apply_backends() - before == used  # the same connections served the second cycle
        journal = RecoveryDecision.objects.filter(cycle_id=second.cycle_id)
        assert sorted(journal.values_list("workflow_id", flat=True)) == sorted(built)
    finally:
        workers.close()
    assert _gone(used)  # closed with the workers


@pytest.mark.usefixtures("committed_db")
def test_the_runner_closes_its_apply_workers_connections(wms, settings):
    from recovery.runtime.tasks import run_recovery_runner

    settings.RECOVERY_APPLY_WORKERS = 2
    before = _apply_backends()
    _build(wms, recovery_cycle.APPLY_IN_PARALLEL_FROM)
    result = run_recovery_runner(seconds=1, interval=30)
    assert result["cycles"] == 1 and RecoveryDecision.objects.count() == 3 * recovery_cycle.APPLY_IN_PARALLEL_FROM
    assert _gone(_apply_backends() - before)
