"""A cycle with many decisions applies them on several connections at once, each still one short
transaction of one workflow: every workflow gets exactly one decision, journaled in this cycle."""

import logging

from recovery import cycle as recovery_cycle
from recovery.cycle import run_cycle
from recovery.evidence import evidence_for_workflow
from recovery.models import RecoveryDecision

KINDS = {"job_missing": "PAUSE", "finish_terminal": "ADVANCE", "all_completed": "COMPLETE"}


def _build(wms, each: int) -> dict[int, str]:
    return {wms.build(kind).workflow_id: action for kind, action in KINDS.items() for _ in range(each)}


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


def test_parallel_workers_start_nothing_after_the_deadline(wms):
    built = _build(wms, recovery_cycle.APPLY_IN_PARALLEL_FROM)
    report = run_cycle(max_seconds=0)
    assert report.succeeded and report.decisions == {} and report.backlog == len(built)
    assert not RecoveryDecision.objects.exists()
    follow_up = run_cycle()
    assert sum(follow_up.decisions.values()) == len(built) and follow_up.backlog == 0
