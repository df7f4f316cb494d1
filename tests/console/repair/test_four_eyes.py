"""Cancel-and-release under four eyes: proposed by one shift lead, applied only on a different
shift lead's approval; proposal, approval and rejection audited; nobody approves their own."""

from django.urls import reverse

from console.models import CancelProposal, RepairAudit
from recovery.models import tidy_job_id
from tests.repair_support import covers, fingerprint, key, paused
from tests.wms_state import diff, snapshot

REASON = "The tidy was re-planned by the day shift"


def propose(client, wid, code="TIDY_NO_LONGER_NEEDED", floor=None):
    """`floor`: (tray, space) found on the floor, needed while a job is status 2 or 3."""
    scanned = {"tray_code": floor[0], "space_code": floor[1]} if floor else {}
    preview = client.post(reverse("repair-preview", args=[wid, "cancel"]),
                          {"reason_code": code, "reason_text": REASON, **scanned})
    assert preview.status_code == 200, preview.content.decode()[:500]
    response = client.post(reverse("repair-apply", args=[wid, "cancel"]), {
        "reason_code": code, "reason_text": REASON, "fingerprint": preview.context["preview"].fingerprint,
        "idempotency_key": preview.context["key"], **scanned})
    return response


def at_source(built):
    """The floor confirmation that the step's tray stands where the records say: its source."""
    return built.moves[0].tray_code, built.moves[0].source


def decide_proposal(client, proposal, verb, *, code, text=REASON, fp=None):
    data = {"reason_code": code, "reason_text": text, "idempotency_key": key()}
    if verb == "approve":
        data["fingerprint"] = fp or fingerprint(proposal.workflow_id)
    return client.post(reverse(f"repair-proposal-{verb}", args=[proposal.pk]), data)


@covers("CANCEL_PROPOSE")
def test_it_records_a_proposal_and_changes_nothing_in_the_wms(repair_db, shiftlead, client):
    built = paused(repair_db, "active_mismatch")
    wid = built.workflow_id
    client.force_login(shiftlead)
    before = snapshot()
    response = propose(client, wid, "JOB_ID_TAKEN_BY_OTHER_MOVE", floor=at_source(built))
    proposal = CancelProposal.objects.get()
    assert response.status_code == 303 and response["Location"] == reverse("repair-proposal", args=[proposal.pk])
    assert diff(before, snapshot()) == {}
    assert (proposal.status, proposal.proposed_by, proposal.fingerprint) == ("PENDING", shiftlead, fingerprint(wid))
    (audit,) = RepairAudit.objects.all()
    assert (audit.action, audit.outcome, audit.proposal) == ("CANCEL_PROPOSE", "PROPOSED", proposal)


def test_it_refuses_self_approval(repair_db, shiftlead, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    proposal = CancelProposal.objects.get()
    before = snapshot()
    response = decide_proposal(client, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR")
    assert response.status_code == 403
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "PENDING"
    assert RepairAudit.objects.filter(action="CANCEL_APPROVE").get().outcome == "REFUSED:SELF_APPROVAL"


def test_it_refuses_approval_by_an_operator(repair_db, shiftlead, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    client.force_login(operator)
    before = snapshot()
    assert decide_proposal(client, CancelProposal.objects.get(), "approve",
                           code="CANCEL_CHECKED_ON_FLOOR").status_code == 403
    assert diff(before, snapshot()) == {}
    assert RepairAudit.objects.filter(action="CANCEL_APPROVE").get().outcome == "REFUSED:FORBIDDEN"


@covers("CANCEL_APPROVE")
def test_it_applies_cancel_and_release_when_a_second_shift_lead_approves(repair_db, shiftlead, shiftlead2, client):
    built = paused(repair_db, "active_mismatch")  # an active job with the step's id, describing another tray
    wid, (s1, s2) = built.workflow_id, built.step_ids
    client.force_login(shiftlead)
    propose(client, wid, "JOB_ID_TAKEN_BY_OTHER_MOVE", floor=at_source(built))
    proposal = CancelProposal.objects.get()
    client.force_login(shiftlead2)
    page = client.get(reverse("repair-proposal", args=[proposal.pk]))
    assert page.status_code == 200 and "Approve and apply" in page.content.decode()
    before = snapshot()
    response = decide_proposal(client, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR",
                               fp=page.context["preview"].fingerprint)
    assert response.status_code == 303

    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "alg.tidy_space_lock", "mydo_job",
                            "mydo_job_finish", "alg.tidy_callback_event"}
    assert changes["alg.tidy_workflow"]["changed"] == {wid: {"status": ("PAUSED_RECOVERY", "CANCELLED")}}
    assert changes["alg.tidy_step"]["changed"] == {s1: {"status": ("PAUSED_RECOVERY", "CANCELLED")},
                                                   s2: {"status": ("PENDING", "CANCELLED")}}
    assert changes["alg.tidy_space_lock"]["added"] == {} and changes["alg.tidy_space_lock"]["changed"] == {}
    assert len(changes["alg.tidy_space_lock"]["removed"]) == 4
    job = tidy_job_id(wid, s1)
    assert list(changes["mydo_job"]["removed"]) == [job]
    (archived,) = changes["mydo_job_finish"]["added"].values()
    assert (archived["job_id"], archived["status"]) == (job, 2)  # archived with its own status, never deleted
    assert [e["stage"] for e in changes["alg.tidy_callback_event"]["added"].values()] == ["OPERATOR_CANCELLED"]
    assert "bas_stock" not in changes and "bas_cargo_space" not in changes

    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("APPLIED", shiftlead2)
    approve = RepairAudit.objects.get(action="CANCEL_APPROVE")
    assert (approve.outcome, approve.username, approve.proposal) == ("APPLIED", "lars", proposal)
    assert approve.consistent_after and approve.evidence_after["workflow_status"] == "CANCELLED"


@covers("CANCEL_REJECT")
def test_it_leaves_everything_as_it_was_on_rejection(repair_db, shiftlead, shiftlead2, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    proposal = CancelProposal.objects.get()
    client.force_login(shiftlead2)
    before = snapshot()
    assert decide_proposal(client, proposal, "reject", code="REPAIRABLE_INSTEAD").status_code == 303
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "REJECTED"
    assert RepairAudit.objects.get(action="CANCEL_REJECT").outcome == "REJECTED"
    # A rejected proposal cannot be approved afterwards.
    assert decide_proposal(client, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR").status_code == 409
    assert diff(before, snapshot()) == {}


def test_it_closes_a_proposal_whose_evidence_changed(repair_db, shiftlead, shiftlead2, client):
    built = paused(repair_db, "job_missing")
    client.force_login(shiftlead)
    propose(client, built.workflow_id)
    repair_db.add_stock(built.moves[0].tray_code, built.moves[0].source, 1)
    proposal = CancelProposal.objects.get()
    client.force_login(shiftlead2)
    before = snapshot()
    response = decide_proposal(client, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR")
    assert response.status_code == 409
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "STALE"
    assert RepairAudit.objects.get(action="CANCEL_APPROVE").outcome == "REFUSED:STALE_EVIDENCE"


def test_it_refuses_a_second_pending_proposal(repair_db, shiftlead, shiftlead2, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    client.force_login(shiftlead2)
    response = client.post(reverse("repair-preview", args=[wid, "cancel"]),
                           {"reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON})
    assert "already waiting" in response.content.decode()
    assert CancelProposal.objects.count() == 1


def test_it_requires_a_written_reason_to_approve(repair_db, shiftlead, shiftlead2, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    client.force_login(shiftlead2)
    before = snapshot()
    response = decide_proposal(client, CancelProposal.objects.get(), "approve", code="CANCEL_CHECKED_ON_FLOOR",
                               text="ok")
    assert response.status_code == 200 and "Write at least" in response.content.decode()
    assert diff(before, snapshot()) == {}
    assert RepairAudit.objects.get(action="CANCEL_APPROVE").outcome == "REFUSED:REASON_TOO_SHORT"


def test_the_workflow_panel_links_the_pending_proposal(repair_db, shiftlead, shiftlead2, supervisor, client):
    from django.template.loader import render_to_string

    from console.repair.selectors import repair_panel

    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    proposal = CancelProposal.objects.get()

    def panel(user):
        return render_to_string("repair/_panel.html", {"panel": repair_panel(user=user, workflow_id=wid)})

    assert "review, approve or reject" in panel(shiftlead2)
    assert reverse("repair-proposal", args=[proposal.pk]) in panel(supervisor)
    assert "already waiting for approval" in panel(shiftlead2)  # no second proposal offered


def test_it_keeps_the_proposal_open_when_only_the_approvers_preview_is_stale(repair_db, shiftlead, shiftlead2,
                                                                             client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    propose(client, wid)
    proposal = CancelProposal.objects.get()
    client.force_login(shiftlead2)
    before = snapshot()
    assert decide_proposal(client, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR", fp="0" * 64).status_code == 409
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "PENDING"
    assert decide_proposal(client, proposal, "approve", code="CANCEL_CHECKED_ON_FLOOR").status_code == 303
