"""Cancel-and-release while a vehicle may be moving the tray (a job in status 2 or 3): refused
unless the proposal records a floor confirmation (the step's tray, and an existing space holding
no other tray where it stands); on approval the stock and space records are corrected to that
space in the cancel's own transaction. Status 1 or no job: no confirmation, as before."""

import json
from html import unescape

import pytest
from django.urls import reverse

from console.models import CancelProposal, RepairAudit
from recovery.models import tidy_job_id
from tests.repair_support import fingerprint, key, paused
from tests.wcs_helpers import rows
from tests.wms_state import diff, snapshot

REASON = "Vehicle 3 stopped mid-aisle, tidy abandoned"


def moving(repair_db):
    """Step 1's job is executing (status 3) and the records already show the tray at the target."""
    return paused(repair_db, "active_not_pre_move")


def preview(client, wid, **scanned):
    return client.post(reverse("repair-preview", args=[wid, "cancel"]),
                       {"reason_code": "TRAY_MISSING_OR_DAMAGED", "reason_text": REASON, **scanned})


def apply(client, wid, fp, **scanned):
    return client.post(reverse("repair-apply", args=[wid, "cancel"]), {
        "reason_code": "TRAY_MISSING_OR_DAMAGED", "reason_text": REASON, "fingerprint": fp,
        "idempotency_key": key(), **scanned})


def approve(client, proposal, fp=None):
    return client.post(reverse("repair-proposal-approve", args=[proposal.pk]), {
        "reason_code": "CANCEL_CHECKED_ON_FLOOR", "reason_text": REASON, "idempotency_key": key(),
        "fingerprint": fp or fingerprint(proposal.workflow_id)})


def test_the_form_asks_for_the_floor_confirmation_only_while_a_job_moves(repair_db, shiftlead, client):
    wid = moving(repair_db).workflow_id
    quiet = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    page = client.get(reverse("repair-form", args=[wid, "cancel"]))
    html = page.content.decode()
    assert page.status_code == 200 and 'name="tray_code"' in html and 'name="space_code"' in html
    assert "A vehicle may be moving this tray" in html and "(status 3)" in html
    html = client.get(reverse("repair-form", args=[quiet, "cancel"])).content.decode()
    assert 'name="tray_code"' not in html and "A vehicle may be moving" not in html


def test_it_refuses_a_cancel_without_the_floor_confirmation(repair_db, shiftlead, client):
    built = moving(repair_db)
    wid = built.workflow_id
    client.force_login(shiftlead)
    before = snapshot()
    page = preview(client, wid)
    html = page.content.decode()
    assert page.status_code == 200 and "Scan or type the tray code read on the tray." in html
    assert "Scan or type the space where the tray stands now." in html
    assert f"a vehicle may be moving tray {built.moves[0].tray_code}" in html
    # A hand-made apply without the codes is refused too, and proposes nothing.
    refused = apply(client, wid, fingerprint(wid))
    assert refused.status_code == 409 and "dispatched or executing" in refused.content.decode()
    assert diff(before, snapshot()) == {} and not CancelProposal.objects.exists()
    assert list(RepairAudit.objects.order_by("id").values_list("stage", "outcome")) == [
        ("PREVIEW", "REFUSED:FLOOR_CONFIRMATION_REQUIRED"), ("APPLY", "REFUSED:FLOOR_CONFIRMATION_REQUIRED")]
    job = tidy_job_id(wid, built.step_ids[0])
    assert f"Job(s) {job} (status 3) are dispatched or executing" in RepairAudit.objects.last().message


@pytest.mark.parametrize("case", ["other_tray", "unknown_space", "occupied_space"])
def test_it_refuses_a_floor_confirmation_that_does_not_fit_the_records(repair_db, shiftlead, client, case):
    built = moving(repair_db)
    wid, tray = built.workflow_id, built.moves[0].tray_code
    other_tray, occupied = repair_db.stocked_tray()
    scanned = {"other_tray": {"tray_code": other_tray, "space_code": repair_db.add_space(None)},
               "unknown_space": {"tray_code": tray, "space_code": "Z99-99-99"},
               "occupied_space": {"tray_code": tray, "space_code": occupied}}[case]
    expected = {"other_tray": f"Scanned tray {other_tray} is not the step's tray {tray}.",
                "unknown_space": "Space Z99-99-99 does not exist in bas_cargo_space.",
                "occupied_space": f"Space {occupied} records another tray ({other_tray})"}[case]
    field = "tray_code" if case == "other_tray" else "space_code"
    client.force_login(shiftlead)
    before = snapshot()
    page = preview(client, wid, **scanned)
    assert page.status_code == 200 and expected in unescape(page.content.decode())
    assert expected in " ".join(page.context["form"].errors[field])
    refused = apply(client, wid, fingerprint(wid), **scanned)
    assert refused.status_code == 409 and expected in unescape(refused.content.decode())
    assert diff(before, snapshot()) == {} and not CancelProposal.objects.exists()
    audits = list(RepairAudit.objects.order_by("id"))
    assert [(a.stage, a.outcome) for a in audits] == [("PREVIEW", "REFUSED:CODES_DO_NOT_MATCH"),
                                                      ("APPLY", "REFUSED:CODES_DO_NOT_MATCH")]
    assert audits[1].inputs == scanned and expected in audits[1].message


def test_an_approved_cancel_corrects_stock_and_space_to_the_confirmed_space(repair_db, shiftlead, shiftlead2, client):
    built = moving(repair_db)
    wid, (s1, s2) = built.workflow_id, built.step_ids
    tray, source, target = built.moves[0].tray_code, built.moves[0].source, built.moves[0].target
    found_at = repair_db.add_space(None)  # the vehicle set the tray down one space further on
    client.force_login(shiftlead)
    page = preview(client, wid, tray_code=f" {tray} ", space_code=found_at)
    assert page.status_code == 200
    summary = page.context["result"].summary.english()
    assert f"tray {tray} recorded at {found_at}, where it was found on the floor" in summary
    before = snapshot()
    response = apply(client, wid, page.context["preview"].fingerprint, tray_code=f" {tray} ", space_code=found_at)
    proposal = CancelProposal.objects.get()
    assert response.status_code == 303 and diff(before, snapshot()) == {}  # proposing changes nothing
    assert (proposal.floor_tray_code, proposal.floor_space_code) == (tray, found_at)
    propose_audit = RepairAudit.objects.get(action="CANCEL_PROPOSE")
    assert propose_audit.inputs == {"tray_code": f" {tray} ", "space_code": found_at}
    assert f"floor confirmation: tray {tray} stands at {found_at}" in propose_audit.message

    client.force_login(shiftlead2)
    page = client.get(reverse("repair-proposal", args=[proposal.pk]))
    html = page.content.decode()
    assert f"tray <code>{tray}</code> found standing at space <code>{found_at}</code>" in html
    assert {c["table"] for c in page.context["result"].changes} >= {"bas_stock", "bas_cargo_space"}

    stock_ids = [r[0] for r in rows("SELECT stock_id FROM bas_stock WHERE tray_code = %s ORDER BY stock_id", [tray])]
    before = snapshot()
    assert approve(client, proposal, page.context["preview"].fingerprint).status_code == 303
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "alg.tidy_space_lock", "mydo_job",
                            "mydo_job_finish", "alg.tidy_callback_event", "bas_stock", "bas_cargo_space"}
    assert changes["bas_stock"] == {"added": {}, "removed": {}, "changed": {
        sid: {"cargo_space_id": (target, found_at)} for sid in stock_ids}}
    assert changes["bas_cargo_space"] == {"added": {}, "removed": {}, "changed": {
        target: {"tray_code": (tray, None)}, found_at: {"tray_code": (None, tray)}}}
    assert rows("SELECT tray_code FROM bas_cargo_space WHERE cargo_space_id = %s", [source]) == [(None,)]
    assert changes["alg.tidy_workflow"]["changed"] == {wid: {"status": ("PAUSED_RECOVERY", "CANCELLED")}}
    assert changes["alg.tidy_step"]["changed"] == {s1: {"status": ("PAUSED_RECOVERY", "CANCELLED")},
                                                   s2: {"status": ("PENDING", "CANCELLED")}}
    job = tidy_job_id(wid, s1)
    assert list(changes["mydo_job"]["removed"]) == [job]
    (archived,) = changes["mydo_job_finish"]["added"].values()
    assert (archived["job_id"], archived["status"]) == (job, 3)
    (event,) = changes["alg.tidy_callback_event"]["added"].values()
    assert event["stage"] == "OPERATOR_CANCELLED"
    payload = event["payload"] if isinstance(event["payload"], dict) else json.loads(event["payload"])
    assert payload["floor_confirmation"] == {"tray_code": tray, "space_code": found_at}
    assert len(changes["alg.tidy_space_lock"]["removed"]) == 4
    approval = RepairAudit.objects.get(action="CANCEL_APPROVE")
    assert approval.outcome == "APPLIED" and f"recorded at {found_at}" in approval.message
    assert {(c["table"], c["key"]) for c in approval.changes if c["table"].startswith("bas_")} == {
        *(("bas_stock", str(s)) for s in stock_ids), ("bas_cargo_space", target), ("bas_cargo_space", found_at)}


def test_approval_checks_the_confirmed_space_again(repair_db, shiftlead, shiftlead2, client):
    built = moving(repair_db)
    wid, tray = built.workflow_id, built.moves[0].tray_code
    found_at = repair_db.add_space(None)
    client.force_login(shiftlead)
    page = preview(client, wid, tray_code=tray, space_code=found_at)
    apply(client, wid, page.context["preview"].fingerprint, tray_code=tray, space_code=found_at)
    proposal = CancelProposal.objects.get()
    rows("UPDATE bas_cargo_space SET tray_code = 'T-STRAY' WHERE cargo_space_id = %s", [found_at])
    client.force_login(shiftlead2)
    page = unescape(client.get(reverse("repair-proposal", args=[proposal.pk])).content.decode())
    assert f"Approving would be refused now: The floor confirmation does not fit the records: Space {found_at} " \
           "records another tray (T-STRAY)" in page
    before = snapshot()
    response = approve(client, proposal)
    assert f"Space {found_at} records another tray (T-STRAY)" in unescape(response.content.decode())
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "PENDING"
    refusal = RepairAudit.objects.get(action="CANCEL_APPROVE")
    assert refusal.outcome == "REFUSED:CODES_DO_NOT_MATCH" and "T-STRAY" in refusal.message


def test_a_job_in_status_1_needs_no_confirmation_and_moves_no_inventory(repair_db, shiftlead, shiftlead2, client):
    built = repair_db.build("paused", reason="RECOVERY_ACTIVE_EVIDENCE_INVALID")
    repair_db.job(built, 0, status=1)
    wid = built.workflow_id
    client.force_login(shiftlead)
    page = preview(client, wid)
    assert page.status_code == 200, page.content.decode()[:400]
    assert apply(client, wid, page.context["preview"].fingerprint).status_code == 303
    proposal = CancelProposal.objects.get()
    assert (proposal.floor_tray_code, proposal.floor_space_code) == (None, None)
    client.force_login(shiftlead2)
    assert "not needed: no vehicle was moving the tray" in client.get(
        reverse("repair-proposal", args=[proposal.pk])).content.decode()
    before = snapshot()
    assert approve(client, proposal).status_code == 303
    changes = diff(before, snapshot())
    assert "bas_stock" not in changes and "bas_cargo_space" not in changes
    assert changes["alg.tidy_workflow"]["changed"] == {wid: {"status": ("PAUSED_RECOVERY", "CANCELLED")}}
    assert RepairAudit.objects.get(action="CANCEL_APPROVE").outcome == "APPLIED"
