"""The issue's "done when": on the demo warehouse, every paused workflow can be brought back to a
consistent state by an operator through the console alone, each step audited."""

import pytest
from django.urls import reverse

from console import repair
from console.models import RepairAudit
from console.repair.registry import RepairAction
from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import Action, decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.management.commands.wms_demo import load_demo
from recovery.models import TidyWorkflow

REASON = "Walked to the aisle and checked the tray"
# What an operator tries first: the gentlest action the evidence allows.
PREFERENCE = (RepairAction.RECHECK, RepairAction.REISSUE, RepairAction.RECONCILE_SOURCE,
              RepairAction.RECONCILE_TARGET)
SLUG = {RepairAction.RECHECK: "recheck", RepairAction.REISSUE: "reissue",
        RepairAction.RECONCILE_SOURCE: "reconcile-source", RepairAction.RECONCILE_TARGET: "reconcile-target"}


@pytest.mark.usefixtures("committed_db")
def test_an_operator_brings_every_paused_demo_workflow_back(repair_db, operator, client):
    load_demo()
    run_cycle()
    paused_ids = list(TidyWorkflow.objects.filter(status="PAUSED_RECOVERY").values_list("workflow_id", flat=True))
    assert len(paused_ids) >= 15
    client.force_login(operator)
    used = {}
    for wid in paused_ids:
        ctx, offers = repair.repair_offers(user=operator, workflow_id=wid)
        available = [o.action for o in offers if o.available]
        action = next(a for a in PREFERENCE if a in available)
        pause_reason = TidyWorkflow.objects.get(pk=wid).pause_reason
        code = next(c.code for c in repair.codes_for(action, pause_reason))
        data = {"reason_code": code, "reason_text": REASON}
        if action in repair.RECONCILE or action == RepairAction.REISSUE:  # the codes read on the floor
            step = ctx.subject
            data |= {"tray_code": step.tray_code, "space_code": step.target_cargo_space_id
                     if action == RepairAction.RECONCILE_TARGET else step.cargo_space_id}
        preview = client.post(reverse("repair-preview", args=[wid, SLUG[action]]), data)
        assert preview.status_code == 200 and "preview" in preview.context, (wid, action)
        applied = client.post(reverse("repair-apply", args=[wid, SLUG[action]]), {
            **data, "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": preview.context["key"]})
        assert applied.status_code == 303, (wid, action, applied.content.decode()[:300])
        used[wid] = action

    for wid in paused_ids:
        ev = evidence_for_workflow(wid)
        assert ev.workflow_status != "PAUSED_RECOVERY"
        assert decide(ev).action is not Action.PAUSE, (wid, used[wid], decide(ev))
    audits = RepairAudit.objects.filter(outcome="APPLIED")
    assert audits.count() == len(paused_ids) and all(a.consistent_after for a in audits)
    assert all(a.username == "olga" and a.reason_text == REASON and a.evidence_before and a.evidence_after
               for a in audits)
    # The next recovery cycle finds nothing to pause among them.
    report = run_cycle()
    assert report.decisions.get("PAUSE", 0) == 0
