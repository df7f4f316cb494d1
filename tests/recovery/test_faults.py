import pytest

from recovery.engine.faults import FaultInjected, fault_point
from recovery.engine.transaction import Outcome, reconcile_workflow
from tests.wms_state import diff, snapshot


def test_fault_points_are_inert_without_configuration(monkeypatch):
    monkeypatch.delenv("TIDY_FAULTS", raising=False)
    fault_point("recovery.before_commit")


def test_a_raising_fault_inside_a_recovery_transaction_rolls_it_back(wms, monkeypatch):
    built = wms.build("finish_terminal")
    before = snapshot()
    monkeypatch.setenv("TIDY_FAULTS", "advance.RECOVERY_FINISHED:raise")
    with pytest.raises(FaultInjected):
        reconcile_workflow(built.workflow_id)
    assert diff(before, snapshot()) == {}
    monkeypatch.setenv("TIDY_FAULTS", "other.point:raise")
    assert reconcile_workflow(built.workflow_id).outcome is Outcome.APPLIED


def test_a_fault_in_one_workflow_is_counted_and_the_cycle_goes_on(wms, monkeypatch):
    from recovery.engine.cycle import run_cycle

    wms.build("finish_terminal")
    wms.build("job_missing")
    monkeypatch.setenv("TIDY_FAULTS", "advance.RECOVERY_FINISHED:raise")
    report = run_cycle()
    assert report.succeeded
    assert (report.errors, report.decisions) == (1, {"PAUSE": 1})
