"""The apply-once frame: every repair write waits for the workflow row at most the lock timeout
(then 503, nothing changed, audited as BUSY, and the same form may be sent again); a signed-in
user without a console role is refused before anything is read or written; the batch re-check
selects exactly what the paused list shows."""

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.urls import reverse

from console.models import CancelProposal, RepairAudit
from console.readers.paused import PausedFilters, paused_workflows_page
from console.repair.selectors import batch_candidates
from recovery.demo.warehouse import Move
from recovery.engine.transaction import lock_workflow
from tests.repair_support import *  # noqa: F403  (fixtures)
from tests.repair_support import at_source, fingerprint, key, paused
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

REASON = "The job was lost when the WMS restarted at 02:10"
JOIN_SECONDS = 30


def while_locked(workflow_id: int, call):
    """`call()` in another thread (its own connection) while this one holds the workflow row."""
    answers = []
    with transaction.atomic():
        lock_workflow(workflow_id, skip_locked=False)
        waiting = threading.Thread(target=lambda: (answers.append(call()), connection.close()))
        waiting.start()
        waiting.join(JOIN_SECONDS)
    assert answers, "the call did not return while the row was held"
    return answers[0]


def reissue_form(wid: int, k: str) -> dict:
    return {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, "fingerprint": fingerprint(wid),
            "idempotency_key": k, **at_source(wid)}


def test_a_repair_that_waits_too_long_for_the_row_answers_503_and_changes_nothing(repair_db, operator, client,
                                                                                  settings):
    settings.WCS_CALLBACK_LOCK_TIMEOUT_MS = 200
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    data = reissue_form(wid, key())
    before = snapshot()
    response = while_locked(wid, lambda: client.post(reverse("repair-apply", args=[wid, "reissue"]), data))
    assert response.status_code == 503
    assert "busy" in response.content.decode() and "try again" in response.content.decode()
    assert diff(before, snapshot()) == {}
    refusal = RepairAudit.objects.get()
    assert (refusal.outcome, refusal.action, refusal.idempotency_key) == ("REFUSED:BUSY", "REISSUE", None)
    preview = while_locked(wid, lambda: client.post(reverse("repair-preview", args=[wid, "reissue"]), data))
    assert preview.status_code == 503 and diff(before, snapshot()) == {}
    # Once the row is free the same form goes through.
    again = client.post(reverse("repair-apply", args=[wid, "reissue"]), data)
    assert again.status_code == 303
    assert RepairAudit.objects.get(idempotency_key=data["idempotency_key"]).outcome == "APPLIED"


def test_every_four_eyes_step_goes_through_the_frame_and_its_lock_timeout(repair_db, shiftlead, shiftlead2,
                                                                          client, settings):
    settings.WCS_CALLBACK_LOCK_TIMEOUT_MS = 200
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    preview = client.post(reverse("repair-preview", args=[wid, "cancel"]),
                          {"reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON})
    propose = {"reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON,
               "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": key()}
    busy = while_locked(wid, lambda: client.post(reverse("repair-apply", args=[wid, "cancel"]), propose))
    assert busy.status_code == 503 and not CancelProposal.objects.exists()
    assert client.post(reverse("repair-apply", args=[wid, "cancel"]), propose).status_code == 303
    proposal = CancelProposal.objects.get()

    client.force_login(shiftlead2)
    # Viewing the proposal takes no workflow lock: it answers while another transaction holds the row.
    page = while_locked(wid, lambda: client.get(reverse("repair-proposal", args=[proposal.pk])))
    assert page.status_code == 200
    before = snapshot()
    for verb, code in (("approve", "CANCEL_CHECKED_ON_FLOOR"), ("reject", "REPAIRABLE_INSTEAD")):
        data = {"reason_code": code, "reason_text": REASON, "fingerprint": fingerprint(wid), "idempotency_key": key()}
        url = reverse(f"repair-proposal-{verb}", args=[proposal.pk])
        assert while_locked(wid, lambda url=url, data=data: client.post(url, data)).status_code == 503
    assert diff(before, snapshot()) == {}
    proposal.refresh_from_db()
    assert proposal.status == "PENDING"
    assert list(RepairAudit.objects.filter(outcome="REFUSED:BUSY").order_by("id").values_list("action", flat=True)) \
        == ["CANCEL_PROPOSE", "CANCEL_APPROVE", "CANCEL_REJECT"]


@pytest.fixture
def nobody(repair_db):
    return User.objects.create_user("nobody", password="nobody-pw")


def test_a_user_without_a_role_is_refused_before_anything_is_written(repair_db, nobody, shiftlead, client):
    built = paused(repair_db, "job_missing")
    wid = built.workflow_id
    client.force_login(shiftlead)
    preview = client.post(reverse("repair-preview", args=[wid, "cancel"]),
                          {"reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON})
    client.post(reverse("repair-apply", args=[wid, "cancel"]), {
        "reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON,
        "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": key()})
    proposal = CancelProposal.objects.get()
    audit_rows = RepairAudit.objects.count()

    client.force_login(nobody)
    before = snapshot()
    typed = {**reissue_form(wid, key()), "reason_text": "typed by someone without a role"}
    posts = [reverse("repair-preview", args=[wid, "reissue"]), reverse("repair-apply", args=[wid, "reissue"]),
             reverse("repair-proposal-approve", args=[proposal.pk]),
             reverse("repair-proposal-reject", args=[proposal.pk]),
             reverse("repair-batch-preview"), reverse("repair-batch-apply")]
    for url in posts:
        assert client.post(url, {**typed, "workflow": [f"{wid}:{typed['fingerprint']}"]}).status_code == 403, url
    gets = [reverse("repair-workflow", args=[wid]), reverse("repair-form", args=[wid, "reissue"]),
            reverse("repair-proposal", args=[proposal.pk]), reverse("repair-proposals"), reverse("repair-batch"),
            reverse("repair-audit"), reverse("repair-audit-entry", args=[RepairAudit.objects.first().pk])]
    for url in gets:
        page = client.get(url)
        assert page.status_code == 403, url
        assert built.moves[0].tray_code not in page.content.decode(), url  # no evidence on a 403 page
    assert diff(before, snapshot()) == {}
    assert RepairAudit.objects.count() == audit_rows
    assert not RepairAudit.objects.filter(reason_text__contains="without a role").exists()


def test_the_batch_selects_exactly_what_the_paused_list_shows(repair_db):
    wms = repair_db
    plain = wms.build("paused")
    other_reason = wms.build("paused", reason="RECOVERY_JOB_MISMATCH", origin="MANUAL", age_minutes=120)
    # A paused workflow whose first, COMPLETED step moved the tray searched for: the paused list
    # searches open steps, so this one is not shown for that tray, and must not be re-checked.
    done_tray = plain.moves[0].tray_code
    spaces = wms._two_moves()
    completed_first = wms.workflow(
        moves=[Move(done_tray, spaces[0].source, spaces[0].target), spaces[1]],
        step_statuses=["COMPLETED", "PAUSED_RECOVERY"], status="PAUSED_RECOVERY",
        pause_reason="RECOVERY_JOB_MISSING")
    cases = [{}, {"reason": "RECOVERY_JOB_MISSING"}, {"reason": "RECOVERY_JOB_MISMATCH"}, {"origin": "MANUAL"},
             {"age": "1h-8h"}, {"age": "lt1h"}, {"q": done_tray}, {"q": str(other_reason.workflow_id)},
             {"q": spaces[1].target}, {"q": "nothing-matches"}]
    for filters in cases:
        listed = paused_workflows_page(filters=PausedFilters(**filters), page_size=500)
        rows, total = batch_candidates(**filters)
        assert [r.workflow_id for r in rows] == [r.workflow_id for r in listed.rows], filters
        assert total == listed.total_matching, filters
    rows, _ = batch_candidates(q=done_tray)
    assert [r.workflow_id for r in rows] == [plain.workflow_id]
    assert completed_first.workflow_id in [r.workflow_id for r in batch_candidates()[0]]
