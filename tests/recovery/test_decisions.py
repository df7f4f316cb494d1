"""decide() is a pure function: every rule of the table, on hand-made evidence."""

import dataclasses

import pytest

from recovery.engine.decisions import Action, Reason, Rule, decide
from recovery.engine.evidence import JobEvidence, StepEvidence, TidyRecoveryEvidence

STEP = StepEvidence(step_id=11, step_no=1, status="DISPATCHED", tray_code="T1", cargo_space_id="S1",
                    target_cargo_space_id="S2")
JOB = JobEvidence(job_id="TDY-1-11", in_or_out=28, status=2, tray_code="T1", cargo_space_id="S1",
                  target_cargo_space_id="S2")
FINISHED = dataclasses.replace(JOB, status=4)

PRE_MOVE = dict(stock_rows=3, stock_at_source=3, stock_at_target=0, stock_locations=("S1",),
                source_exists=True, source_tray_code="T1", target_exists=True, target_tray_code=None)
TERMINAL = dict(stock_rows=3, stock_at_source=0, stock_at_target=3, stock_locations=("S2",),
                source_exists=True, source_tray_code=None, target_exists=True, target_tray_code="T1")


def evidence(**overrides) -> TidyRecoveryEvidence:
    base = dict(workflow_id=1, workflow_status="ACTIVE", origin="AUTOMATIC", lock_count=2, step_count=2,
                completed_step_count=0, active_tidy_job_count=1, step=STEP, active_job=JOB, finish_job=None,
                finish_job_count=0, **PRE_MOVE)
    base.update(overrides)
    return TidyRecoveryEvidence(**base)


def test_it_leaves_a_paused_workflow_alone():
    d = decide(evidence(workflow_status="PAUSED_RECOVERY", active_job=None))
    assert (d.action, d.rule) == (Action.LEAVE, Rule.NOT_ACTIVE)


@pytest.mark.parametrize("status", ["COMPLETED", "CANCELLED", "SOMETHING_ELSE"])
def test_it_leaves_any_non_active_workflow_alone(status):
    assert decide(evidence(workflow_status=status)).action is Action.LEAVE


def test_it_completes_a_workflow_whose_steps_are_all_completed():
    d = decide(evidence(step=None, active_job=None, active_tidy_job_count=0, completed_step_count=2))
    assert (d.action, d.reason) == (Action.COMPLETE, None)


def test_it_pauses_completed_steps_with_a_tidy_job_still_active():
    d = decide(evidence(step=None, active_job=None, active_tidy_job_count=1, completed_step_count=2))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.ACTIVE_EVIDENCE_INVALID,
                                            Rule.COMPLETED_WITH_ACTIVE_JOB)


@pytest.mark.parametrize("status", [1, 2, 3])
def test_it_leaves_a_matching_active_job_in_the_pre_move_state(status):
    d = decide(evidence(active_job=dataclasses.replace(JOB, status=status)))
    assert (d.action, d.rule) == (Action.LEAVE, Rule.ACTIVE_JOB_PRE_MOVE)


def test_a_target_holding_another_tray_is_still_pre_move():
    assert decide(evidence(target_tray_code="T-OTHER")).action is Action.LEAVE


@pytest.mark.parametrize("change", [
    dict(stock_at_source=2, stock_at_target=1),  # split stock
    dict(stock_rows=0, stock_at_source=0),  # no stock rows at all
    dict(source_tray_code=None),  # source empty
    dict(source_tray_code="T-OTHER"),
    dict(target_tray_code="T1"),  # target already holds it
    dict(**TERMINAL),  # moved, never archived
])
def test_it_pauses_an_active_job_whose_evidence_is_not_pre_move(change):
    d = decide(evidence(**change))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.ACTIVE_EVIDENCE_INVALID,
                                            Rule.ACTIVE_JOB_NOT_PRE_MOVE)


@pytest.mark.parametrize("status", [0, 4, 5, 9, None])
def test_it_pauses_a_matching_active_job_with_an_invalid_status(status):
    d = decide(evidence(active_job=dataclasses.replace(JOB, status=status)))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.ACTIVE_EVIDENCE_INVALID,
                                            Rule.ACTIVE_JOB_BAD_STATUS)


@pytest.mark.parametrize("field,value", [
    ("in_or_out", 1), ("tray_code", "T9"), ("cargo_space_id", "S9"), ("target_cargo_space_id", "S9"),
])
def test_it_pauses_an_active_job_that_differs_from_the_step(field, value):
    d = decide(evidence(active_job=dataclasses.replace(JOB, **{field: value})))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.JOB_MISMATCH, Rule.ACTIVE_JOB_MISMATCH)


@pytest.mark.parametrize("inventory", [PRE_MOVE, TERMINAL])
def test_it_pauses_an_active_job_the_wcs_reported_finished_with_another_tray_or_place(inventory):
    d = decide(evidence(**inventory, finish_report_mismatch=True, finish_report_tray_code="T-OTHER"))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.WCS_REPORT_MISMATCH, Rule.WCS_REPORT_MISMATCH)


def test_a_finish_report_that_agreed_leaves_the_active_job_to_the_other_rules():
    d = decide(evidence(finish_report_mismatch=False, finish_report_tray_code="T1", finish_report_location="S2"))
    assert d.rule is Rule.ACTIVE_JOB_PRE_MOVE


def test_a_job_mismatch_or_bad_status_outranks_the_wcs_report():
    assert decide(evidence(active_job=dataclasses.replace(JOB, tray_code="T9"),
                           finish_report_mismatch=True)).rule is Rule.ACTIVE_JOB_MISMATCH
    assert decide(evidence(active_job=dataclasses.replace(JOB, status=7),
                           finish_report_mismatch=True)).rule is Rule.ACTIVE_JOB_BAD_STATUS


def test_it_advances_a_matching_terminal_finish_job():
    d = decide(evidence(active_job=None, finish_job=FINISHED, finish_job_count=1, **TERMINAL))
    assert (d.action, d.rule) == (Action.ADVANCE, Rule.FINISH_JOB_TERMINAL)


@pytest.mark.parametrize("field,value", [
    ("in_or_out", 1), ("tray_code", "T9"), ("cargo_space_id", "S9"), ("target_cargo_space_id", "S9"),
])
def test_it_pauses_a_finish_job_that_differs_from_the_step(field, value):
    d = decide(evidence(active_job=None, finish_job=dataclasses.replace(FINISHED, **{field: value}),
                        finish_job_count=1, **TERMINAL))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.JOB_MISMATCH, Rule.FINISH_JOB_MISMATCH)


@pytest.mark.parametrize("change", [
    dict(finish_job=dataclasses.replace(FINISHED, status=3)),
    dict(**PRE_MOVE),  # archived, not moved
    dict(source_tray_code="T-OTHER"),
    dict(target_tray_code=None),
    dict(stock_at_target=2, stock_at_source=1),
])
def test_it_pauses_a_finish_job_whose_evidence_is_not_terminal(change):
    base = dict(active_job=None, finish_job=FINISHED, finish_job_count=1, **TERMINAL)
    base.update(change)
    d = decide(evidence(**base))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.FINISH_EVIDENCE_INVALID,
                                            Rule.FINISH_JOB_NOT_TERMINAL)


def test_it_pauses_a_job_archived_twice():
    d = decide(evidence(active_job=None, finish_job=FINISHED, finish_job_count=2, **TERMINAL))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.FINISH_EVIDENCE_INVALID,
                                            Rule.FINISH_JOB_DUPLICATED)


def test_it_pauses_a_job_both_active_and_finished():
    d = decide(evidence(finish_job=FINISHED, finish_job_count=1))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.JOB_MISMATCH, Rule.ACTIVE_AND_FINISHED)


def test_it_pauses_when_no_job_exists():
    d = decide(evidence(active_job=None))
    assert (d.action, d.reason, d.rule) == (Action.PAUSE, Reason.JOB_MISSING, Rule.NO_JOB)


def test_every_rule_has_an_explanation():
    from recovery.engine.decisions import RULE_EXPLANATIONS

    assert set(RULE_EXPLANATIONS) == set(Rule)


def test_the_fingerprint_changes_with_the_evidence_and_only_with_it():
    a, b = evidence(), evidence()
    assert a.fingerprint == b.fingerprint
    assert evidence(source_tray_code=None).fingerprint != a.fingerprint


def test_evidence_survives_the_journal_round_trip():
    from recovery.engine.evidence import evidence_from_json

    e = evidence(active_job=None, finish_job=FINISHED, finish_job_count=1, **TERMINAL)
    assert evidence_from_json(e.as_json()) == e


def test_every_rule_has_one_fixed_decision_and_pauses_carry_a_reason():
    from recovery.engine.decisions import _DECISIONS

    assert set(_DECISIONS) == set(Rule)
    for rule, decision in _DECISIONS.items():
        assert decision.rule is rule
        assert (decision.reason is not None) == (decision.action is Action.PAUSE)


def test_it_returns_the_shared_decision_of_the_rules_spec():
    from recovery.engine.decisions import SPEC_BY_RULE

    for e in (evidence(), evidence(active_job=None), evidence(workflow_status="PAUSED_RECOVERY")):
        d = decide(e)
        assert d is SPEC_BY_RULE[d.rule].decision and decide(e) is d  # nothing allocated per call


@pytest.mark.parametrize("field,value", [
    ("job_id", "TDY-1-99"), ("in_or_out", 1), ("tray_code", "T9"), ("cargo_space_id", "S9"),
    ("target_cargo_space_id", "S9"),
])
def test_job_matches_and_job_mismatches_agree(field, value):
    e = evidence()
    other = dataclasses.replace(JOB, **{field: value})
    assert e.job_matches(JOB) and e.job_mismatches(JOB) == []
    assert not e.job_matches(other) and e.job_mismatches(other) == [field]


def test_a_disagreeing_fact_names_the_deciding_rule_if_it_checks_it_else_the_first_that_does():
    from recovery.engine.decisions import ExpectedState, checking_rule

    pre, terminal = ExpectedState.PRE_MOVE, ExpectedState.TERMINAL
    assert checking_rule("active.present", pre) is Rule.ACTIVE_AND_FINISHED
    assert checking_rule("active.present", None) is Rule.NO_JOB
    assert checking_rule("active.present", pre, Rule.NO_JOB) is Rule.NO_JOB
    assert checking_rule("source.tray", pre, Rule.ACTIVE_JOB_MISMATCH) is Rule.ACTIVE_JOB_NOT_PRE_MOVE
    assert checking_rule("stock.at_source", terminal) is Rule.FINISH_JOB_NOT_TERMINAL
    assert checking_rule("finish.status", pre, Rule.ACTIVE_AND_FINISHED) is Rule.FINISH_JOB_NOT_TERMINAL
    assert checking_rule("stock.at_source", None) is None  # no job: shown, compared by no rule
