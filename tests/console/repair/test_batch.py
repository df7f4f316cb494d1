"""Batch re-check: choose paused workflows, see the count and list first, one reason, an
outcome per workflow linked back to the batch."""

import pytest
from django.urls import reverse

from console.models import RepairAudit, RepairBatch
from recovery.engine.evidence import evidence_for_workflow
from tests.repair_support import *  # noqa: F403  (fixtures)
from tests.repair_support import key, paused, run_queued_tasks
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

REASON = "Jobs restored from the WMS backup at 03:00"


def fixed_and_unfixed(wms):
    fixed = paused(wms, "job_missing")
    wms.job(fixed, 0, status=1)  # restored in the WMS
    unfixed = paused(wms, "job_missing")
    return fixed.workflow_id, unfixed.workflow_id


def test_it_lists_the_matching_paused_workflows_first(repair_db, operator, client):
    fixed, unfixed = fixed_and_unfixed(repair_db)
    repair_db.build("healthy")
    client.force_login(operator)
    page = client.get(reverse("repair-batch"), {"reason": "RECOVERY_JOB_MISSING"})
    assert page.status_code == 200 and page.context["total"] == 2
    assert [(r.workflow_id, r.would_resume) for r in page.context["rows"]] == [(fixed, True), (unfixed, False)]
    before = snapshot()
    preview = client.post(reverse("repair-batch-preview"), {"all_matching": "1",
                                                            "reason": "RECOVERY_JOB_MISSING"})
    assert preview.status_code == 200
    assert [r.workflow_id for r in preview.context["rows"]] == [fixed, unfixed]
    assert "<strong>2</strong> paused workflows will be re-checked" in preview.content.decode()
    assert diff(before, snapshot()) == {} and RepairAudit.objects.count() == 0


def test_it_rechecks_each_workflow_and_links_the_outcomes_to_the_batch(repair_db, operator, client):
    fixed, unfixed = fixed_and_unfixed(repair_db)
    client.force_login(operator)
    preview = client.post(reverse("repair-batch-preview"), {"workflow": [str(fixed), str(unfixed)]})
    rows = preview.context["rows"]
    k = key()
    data = {"workflow": [f"{r.workflow_id}:{r.fingerprint}" for r in rows], "reason_code": "WMS_RECORDS_FIXED",
            "reason_text": REASON, "idempotency_key": k}
    response = client.post(reverse("repair-batch-apply"), data)
    batch = RepairBatch.objects.get()
    assert response.status_code == 303 and response["Location"] == reverse("repair-batch-result", args=[batch.pk])
    assert run_queued_tasks() == 1  # the qcluster's part
    outcomes = dict(batch.audit.values_list("workflow_id", "outcome"))
    assert outcomes == {fixed: "APPLIED", unfixed: "REFUSED:PRECONDITION"}
    assert evidence_for_workflow(fixed).workflow_status == "ACTIVE"
    assert evidence_for_workflow(unfixed).workflow_status == "PAUSED_RECOVERY"
    assert set(batch.audit.values_list("reason_text", flat=True)) == {REASON}

    result = client.get(response["Location"])
    assert "<strong>1</strong> resumed, <strong>1</strong> refused" in result.content.decode()

    # A double submit returns the first batch and applies nothing again.
    after = snapshot()
    again = client.post(reverse("repair-batch-apply"), data)
    assert again["Location"] == response["Location"]
    assert diff(after, snapshot()) == {} and RepairAudit.objects.count() == 2
    assert run_queued_tasks() == 0  # nothing enqueued again


def test_it_refuses_a_batch_without_a_proper_reason(repair_db, operator, client):
    fixed, _ = fixed_and_unfixed(repair_db)
    client.force_login(operator)
    before = snapshot()
    response = client.post(reverse("repair-batch-apply"), {
        "workflow": [f"{fixed}:x"], "reason_code": "WMS_RECORDS_FIXED", "reason_text": "fixed",
        "idempotency_key": key()})
    assert response.status_code == 200 and "Write at least" in response.content.decode()
    assert diff(before, snapshot()) == {} and RepairBatch.objects.count() == 0
    assert RepairAudit.objects.get().outcome == "REFUSED:REASON_TOO_SHORT"


def test_it_refuses_a_batch_to_a_supervisor(repair_db, supervisor, client):
    fixed, _ = fixed_and_unfixed(repair_db)
    client.force_login(supervisor)
    before = snapshot()
    assert client.get(reverse("repair-batch")).status_code == 403
    assert client.post(reverse("repair-batch-preview"), {"workflow": [str(fixed)]}).status_code == 403
    assert client.post(reverse("repair-batch-apply"), {
        "workflow": [f"{fixed}:x"], "reason_code": "WMS_RECORDS_FIXED", "reason_text": REASON,
        "idempotency_key": key()}).status_code == 403
    assert diff(before, snapshot()) == {} and RepairBatch.objects.count() == 0
    assert set(RepairAudit.objects.values_list("outcome", flat=True)) == {"REFUSED:FORBIDDEN"}


def test_it_refuses_a_workflow_whose_evidence_changed_since_the_list(repair_db, operator, client):
    fixed, _ = fixed_and_unfixed(repair_db)
    client.force_login(operator)
    response = client.post(reverse("repair-batch-apply"), {
        "workflow": [f"{fixed}:0000"], "reason_code": "WMS_RECORDS_FIXED", "reason_text": REASON,
        "idempotency_key": key()})
    assert response.status_code == 303
    run_queued_tasks()
    assert RepairAudit.objects.get().outcome == "REFUSED:STALE_EVIDENCE"
    assert evidence_for_workflow(fixed).workflow_status == "PAUSED_RECOVERY"
