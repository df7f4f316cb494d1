"""The reason-code runbook agrees with the decision table and is linked from every reason."""

import pytest
from django.urls import reverse

from console.runbook import CATALOG, Correction, allowed_corrections, reason_code
from recovery.demo.warehouse import EXPECTED
from recovery.engine.decisions import PAUSE_REASONS, Action, Reason, Rule


def test_it_has_one_entry_per_pause_reason():
    assert set(CATALOG) == set(Reason) == set(PAUSE_REASONS)


@pytest.mark.parametrize("kind", [k for k, (a, _) in EXPECTED.items() if a == "PAUSE"])
def test_it_lists_the_rule_that_produces_each_reason(wms, kind):
    from console.workflows.evidence_card import table_decision
    from recovery.engine.evidence import evidence_for_workflow

    decision = table_decision(evidence_for_workflow(wms.build(kind).workflow_id))
    assert decision.action is Action.PAUSE
    assert decision.rule in CATALOG[decision.reason].rules


def test_every_pausing_rule_belongs_to_exactly_one_reason():
    pausing = {r for r in Rule} - {Rule.NOT_ACTIVE, Rule.ALL_STEPS_COMPLETED, Rule.ACTIVE_JOB_PRE_MOVE,
                                   Rule.FINISH_JOB_TERMINAL}
    listed = [rule for entry in CATALOG.values() for rule in entry.rules]
    assert sorted(listed) == sorted(pausing)


def test_it_offers_re_issue_only_when_no_job_exists():
    assert [r for r in Reason if Correction.REISSUE in allowed_corrections(r.value)] == [Reason.JOB_MISSING]
    for reason in Reason:
        # A WCS report mismatch: the WMS records are consistent, so a re-check would only find the
        # same report; only the floor (a scanned reconcile) or a four-eyes cancel settles it.
        floor_only = reason is Reason.WCS_REPORT_MISMATCH
        assert ({Correction.CANCEL, Correction.RECONCILE} | (set() if floor_only else {Correction.RECHECK})
                <= set(allowed_corrections(reason)))
        assert (Correction.RECHECK not in allowed_corrections(reason)) is floor_only
        entry = CATALOG[reason]
        assert set(entry.corrections).isdisjoint(a.correction for a in entry.not_allowed)
        assert set(entry.corrections) | {a.correction for a in entry.not_allowed} == set(Correction)


def test_it_allows_only_re_check_and_cancel_for_an_unknown_code():
    assert reason_code("SOMETHING_ELSE") is None
    assert allowed_corrections("SOMETHING_ELSE") == (Correction.RECHECK, Correction.CANCEL)


def test_the_page_has_an_anchor_floor_checks_and_corrections_per_reason(supervisor_client, wms):
    wms.build("paused", reason="RECOVERY_JOB_MISSING")
    body = supervisor_client.get(reverse("reason-codes")).content.decode()
    for reason in Reason:
        assert f'id="{reason.value}"' in body
    assert body.count("What to check on the floor") == len(PAUSE_REASONS)
    assert body.count("<strong>Re-issue job</strong>") == len(PAUSE_REASONS)  # allowed once, else refused with why
    assert '<a href="/paused/?reason=RECOVERY_JOB_MISSING">1 workflow paused with this reason now</a>' in body
