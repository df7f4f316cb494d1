"""The four repair actions through the console's HTTP endpoints: success paths with the whole
WMS state afterwards, every refusal audited and changing nothing else."""

import pytest
from django.db import connection
from django.urls import reverse

from console.models import RepairAudit
from recovery.engine.decisions import decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.models import tidy_job_id
from tests.repair_support import at_source, covers, fingerprint, key, paused
from tests.wms_state import diff, snapshot

REASON = "Checked on the floor with the shift lead"


def apply_url(wid, slug):
    return reverse("repair-apply", args=[wid, slug])


def preview_url(wid, slug):
    return reverse("repair-preview", args=[wid, slug])


def post_apply(client, wid, slug, *, code, text=REASON, fp=None, k=None, **extra):
    """A re-issue carries the matching floor scans unless the test gives its own."""
    scans = at_source(wid) if slug == "reissue" else {}
    data = {"reason_code": code, "reason_text": text, "fingerprint": fp or fingerprint(wid),
            "idempotency_key": k or key(), **scans, **extra}
    return client.post(apply_url(wid, slug), data)


def only_audit() -> RepairAudit:
    (row,) = RepairAudit.objects.all()
    return row


def unchanged_except_nothing(before):
    assert diff(before, snapshot()) == {}


# --- re-issue ---------------------------------------------------------------------------------


@covers("REISSUE")
def test_it_reissues_a_missing_job(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    wid, (s1, _) = built.workflow_id, built.step_ids
    client.force_login(operator)
    before = snapshot()
    preview = client.post(preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON,
                                                        **at_source(wid)})
    assert preview.status_code == 200
    assert f"TDY-{wid}-{s1}" in preview.content.decode()
    assert diff(before, snapshot()) == {}  # the preview changed nothing

    response = post_apply(client, wid, "reissue", code="JOB_LOST_AT_RESTART",
                          fp=preview.context["preview"].fingerprint, k=preview.context["key"])
    audit = only_audit()
    assert response.status_code == 303 and response["Location"] == reverse("repair-audit-entry", args=[audit.pk])

    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "mydo_job", "alg.tidy_callback_event"}
    assert changes["alg.tidy_workflow"]["changed"] == {
        wid: {"status": ("PAUSED_RECOVERY", "ACTIVE"), "pause_reason": ("RECOVERY_JOB_MISSING", None)}}
    assert changes["alg.tidy_step"]["changed"] == {
        s1: {"status": ("PAUSED_RECOVERY", "DISPATCHED"), "pause_reason": ("RECOVERY_JOB_MISSING", None)}}
    mv = built.moves[0]
    job = tidy_job_id(wid, s1)
    assert changes["mydo_job"] == {"added": {job: {
        "job_id": job, "in_or_out": 28, "status": 1, "tray_code": mv.tray_code, "cargo_space_id": mv.source,
        "target_cargo_space_id": mv.target}}, "removed": {}, "changed": {}}
    (event,) = changes["alg.tidy_callback_event"]["added"].values()
    assert (event["step_id"], event["job_id"], event["stage"]) == (s1, job, "OPERATOR_REISSUED")

    assert (audit.username, audit.action, audit.outcome, audit.reason_code) == (
        "olga", "REISSUE", "APPLIED", "JOB_LOST_AT_RESTART")
    assert audit.inputs == {"tray_code": mv.tray_code, "space_code": mv.source}
    assert audit.reason_text == REASON and audit.pause_reason == "RECOVERY_JOB_MISSING"
    assert audit.evidence_before["workflow_status"] == "PAUSED_RECOVERY"
    assert audit.evidence_after["workflow_status"] == "ACTIVE"
    assert audit.fingerprint_previewed == audit.fingerprint_before != audit.fingerprint_after
    assert audit.consistent_after is True and audit.decision_after.startswith("ACTIVE: LEAVE")
    assert [(c["table"], c["kind"]) for c in audit.changes] == [
        (c["table"], c["kind"]) for c in preview.context["preview"].result.changes]
    assert decide(evidence_for_workflow(wid)).action.value == "LEAVE"


@pytest.mark.parametrize("scans", [
    {},  # nothing scanned
    {"tray_code": "T-WRONG", "space_code": "{source}"},
    {"tray_code": "{tray}", "space_code": "{target}"},  # the tray stands at the target: the move happened
    {"tray_code": "{tray}", "space_code": "   "},
])
def test_it_refuses_a_reissue_whose_floor_scans_do_not_match_and_audits_it(repair_db, operator, client, scans):
    """A missing job in the pre-move state may still have been executed (a lost acknowledgement):
    re-issue needs the tray and the space it stands in, read on the floor, to be the step's tray
    and source."""
    built = paused(repair_db, "job_missing")
    wid, mv = built.workflow_id, built.moves[0]
    scans = {k: v.format(tray=mv.tray_code, source=mv.source, target=mv.target) for k, v in scans.items()}
    client.force_login(operator)
    before = snapshot()
    data = {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, "fingerprint": fingerprint(wid),
            "idempotency_key": key(), "tray_code": "", "space_code": "", **scans}
    response = client.post(apply_url(wid, "reissue"), data)
    assert response.status_code == 409
    unchanged_except_nothing(before)
    audit = only_audit()
    assert (audit.action, audit.stage, audit.outcome) == ("REISSUE", "APPLY", "REFUSED:CODES_DO_NOT_MATCH")
    assert audit.inputs == {"tray_code": data["tray_code"], "space_code": data["space_code"]}


def test_the_reissue_form_asks_for_the_floor_scans(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    html = client.get(reverse("repair-form", args=[wid, "reissue"])).content.decode()
    assert 'name="tray_code"' in html and 'name="space_code"' in html and "its source space" in html


def test_it_applies_a_double_submit_once_and_shows_the_first_result(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    fp, k = fingerprint(wid), key()
    first = post_apply(client, wid, "reissue", code="JOB_LOST_AT_RESTART", fp=fp, k=k)
    after_first = snapshot()
    second = post_apply(client, wid, "reissue", code="JOB_LOST_AT_RESTART", fp=fp, k=k)
    assert second.status_code == 303 and second["Location"] == first["Location"]
    assert diff(after_first, snapshot()) == {}
    assert only_audit().outcome == "APPLIED"


def test_it_refuses_a_stale_fingerprint_and_shows_the_new_evidence(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    wid = built.workflow_id
    client.force_login(operator)
    seen = fingerprint(wid)
    repair_db.add_stock(built.moves[0].tray_code, built.moves[0].source, 1)  # someone books more stock
    before = snapshot()
    response = post_apply(client, wid, "reissue", code="JOB_LOST_AT_RESTART", fp=seen)
    assert response.status_code == 409
    assert "evidence changed" in response.content.decode()
    assert response.context["evidence"].fingerprint == fingerprint(wid) != seen
    unchanged_except_nothing(before)
    audit = only_audit()
    assert audit.outcome == "REFUSED:STALE_EVIDENCE" and audit.fingerprint_previewed == seen
    assert audit.evidence_before["stock_rows"] == 4


def test_it_refuses_reissue_when_the_job_is_not_missing(repair_db, operator, client):
    built = paused(repair_db, "active_bad_status")  # the job exists, with status 9
    wid = built.workflow_id
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, wid, "reissue", code="WRONG_JOB_REMOVED_IN_WMS")
    assert response.status_code == 409
    unchanged_except_nothing(before)
    audit = only_audit()
    assert audit.outcome == "REFUSED:PRECONDITION" and "is not missing" in audit.message


def test_it_refuses_reissue_when_the_pre_move_state_does_not_hold(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    repair_db.put_tray_at_target(built.moves[0])
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, built.workflow_id, "reissue", code="JOB_LOST_AT_RESTART")
    assert response.status_code == 409
    unchanged_except_nothing(before)
    assert only_audit().outcome == "REFUSED:PRECONDITION"


def test_it_refuses_reissue_when_a_finish_row_exists(repair_db, operator, client):
    wid = paused(repair_db, "finish_not_terminal").workflow_id
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "reissue", code="WRONG_JOB_REMOVED_IN_WMS").status_code == 409
    unchanged_except_nothing(before)
    assert "finish row" in only_audit().message


@pytest.mark.parametrize(("text", "outcome"), [("", "REFUSED:REASON_MISSING"), ("   ", "REFUSED:REASON_MISSING"),
                                               ("job gone", "REFUSED:REASON_TOO_SHORT")])
def test_it_refuses_a_missing_or_short_reason(repair_db, operator, client, text, outcome):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "reissue", code="JOB_LOST_AT_RESTART", text=text).status_code == 409
    unchanged_except_nothing(before)
    assert only_audit().outcome == outcome


def test_it_shows_a_short_reason_on_the_form_at_200(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    before = snapshot()
    response = client.post(preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": "gone"},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "Write at least 15 characters" in response.content.decode()
    unchanged_except_nothing(before)
    audit = only_audit()
    assert (audit.stage, audit.outcome) == ("PREVIEW", "REFUSED:REASON_TOO_SHORT")


def test_it_refuses_a_reason_code_not_allowed_for_the_action(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "reissue", code="TRAY_FOUND_AT_TARGET").status_code == 409
    assert post_apply(client, wid, "reissue", code="NOT_A_CODE").status_code == 409
    unchanged_except_nothing(before)
    assert list(RepairAudit.objects.values_list("outcome", flat=True)) == ["REFUSED:REASON_CODE_NOT_ALLOWED"] * 2


def test_it_refuses_a_supervisor_with_403_and_audits_it(repair_db, supervisor, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(supervisor)
    before = snapshot()
    assert post_apply(client, wid, "reissue", code="JOB_LOST_AT_RESTART").status_code == 403
    assert client.post(preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART",
                                                     "reason_text": REASON}).status_code == 403
    assert client.get(reverse("repair-form", args=[wid, "reissue"])).status_code == 403
    unchanged_except_nothing(before)
    assert sorted(RepairAudit.objects.values_list("username", "stage", "outcome")) == [
        ("sven", "APPLY", "REFUSED:FORBIDDEN"), ("sven", "PREVIEW", "REFUSED:FORBIDDEN")]


def test_it_refuses_an_operator_who_proposes_a_cancel(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "cancel", code="TIDY_NO_LONGER_NEEDED").status_code == 403
    unchanged_except_nothing(before)
    assert only_audit().outcome == "REFUSED:FORBIDDEN"


@pytest.mark.parametrize("slug", ["recheck", "reissue", "reconcile-source", "reconcile-target", "cancel"])
def test_it_sends_anonymous_posts_to_sign_in(repair_db, client, slug):
    wid = paused(repair_db, "job_missing").workflow_id
    before = snapshot()
    for url in (preview_url(wid, slug), apply_url(wid, slug)):
        response = client.post(url, {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON})
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    unchanged_except_nothing(before)
    assert RepairAudit.objects.count() == 0


@pytest.mark.parametrize("slug", ["recheck", "reissue", "reconcile-source", "reconcile-target", "cancel"])
def test_it_rejects_get_on_every_post_endpoint(repair_db, operator, client, slug):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    assert client.get(preview_url(wid, slug)).status_code == 405
    assert client.get(apply_url(wid, slug)).status_code == 405


def test_it_rejects_get_on_proposal_and_batch_posts(repair_db, operator, client):
    client.force_login(operator)
    for name, args in (("repair-proposal-approve", [1]), ("repair-proposal-reject", [1]),
                       ("repair-batch-preview", []), ("repair-batch-apply", [])):
        assert client.get(reverse(name, args=args)).status_code == 405


# --- re-check and resume -------------------------------------------------------------------------


@covers("RECHECK")
def test_it_resumes_after_the_job_was_restored_in_the_wms(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    wid, (s1, _) = built.workflow_id, built.step_ids
    repair_db.job(built, 0, status=2)  # the WMS team restored the job
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "recheck", code="WMS_RECORDS_FIXED").status_code == 303
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "alg.tidy_callback_event"}
    assert changes["alg.tidy_workflow"]["changed"][wid]["status"] == ("PAUSED_RECOVERY", "ACTIVE")
    assert changes["alg.tidy_step"]["changed"][s1]["status"] == ("PAUSED_RECOVERY", "DISPATCHED")
    assert [e["stage"] for e in changes["alg.tidy_callback_event"]["added"].values()] == ["OPERATOR_RESUMED"]
    assert only_audit().consistent_after


def test_it_resumes_and_advances_a_finish_recorded_after_the_pause(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    wid, (s1, s2) = built.workflow_id, built.step_ids
    repair_db.job(built, 0, status=4, finished=True)
    repair_db.put_tray_at_target(built.moves[0])
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "recheck", code="FINISH_RECORDED_LATE").status_code == 303
    changes = diff(before, snapshot())
    assert changes["alg.tidy_step"]["changed"] == {
        s1: {"status": ("PAUSED_RECOVERY", "COMPLETED"), "pause_reason": ("RECOVERY_JOB_MISSING", None)},
        s2: {"status": ("PENDING", "DISPATCHED")}}
    assert list(changes["mydo_job"]["added"]) == [tidy_job_id(wid, s2)]
    assert "bas_stock" not in changes and "bas_cargo_space" not in changes  # no second move
    assert [e["stage"] for e in changes["alg.tidy_callback_event"]["added"].values()] == ["OPERATOR_RESUMED"]
    audit = only_audit()
    assert audit.outcome == "APPLIED" and audit.consistent_after


def test_it_refuses_recheck_while_the_table_still_pauses(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, wid, "recheck", code="WMS_RECORDS_FIXED")
    assert response.status_code == 409
    assert "RECOVERY_JOB_MISSING" in response.content.decode()
    unchanged_except_nothing(before)
    assert only_audit().outcome == "REFUSED:PRECONDITION"


def test_it_refuses_any_action_on_a_workflow_that_is_not_paused(repair_db, operator, client):
    wid = repair_db.build("healthy").workflow_id
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "recheck", code="WMS_RECORDS_FIXED").status_code == 409
    unchanged_except_nothing(before)
    assert "only for PAUSED_RECOVERY" in only_audit().message


# --- reconcile to physical location ----------------------------------------------------------------


@covers("RECONCILE_TARGET")
def test_it_reconciles_to_the_target_archiving_the_job_and_advancing(repair_db, operator, client):
    built = paused(repair_db, "active_not_pre_move")  # job status 3, records already at target
    wid, (s1, s2) = built.workflow_id, built.step_ids
    mv = built.moves[0]
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, wid, "reconcile-target", code="TRAY_FOUND_AT_TARGET",
                          tray_code=mv.tray_code, space_code=mv.target)
    assert response.status_code == 303
    changes = diff(before, snapshot())
    job1, job2 = tidy_job_id(wid, s1), tidy_job_id(wid, s2)
    assert changes["mydo_job"]["removed"].keys() == {job1}
    assert list(changes["mydo_job"]["added"]) == [job2]
    (archived,) = changes["mydo_job_finish"]["added"].values()
    assert (archived["job_id"], archived["status"], archived["tray_code"]) == (job1, 4, mv.tray_code)
    assert changes["alg.tidy_step"]["changed"][s1]["status"] == ("PAUSED_RECOVERY", "COMPLETED")
    assert [e["stage"] for e in changes["alg.tidy_callback_event"]["added"].values()] == ["OPERATOR_RECONCILED_TARGET"]
    assert "bas_stock" not in changes and "bas_cargo_space" not in changes  # the records were right already
    audit = only_audit()
    assert audit.inputs == {"tray_code": mv.tray_code, "space_code": mv.target} and audit.consistent_after


@covers("RECONCILE_SOURCE")
def test_it_reconciles_to_the_source_correcting_stock_and_spaces(repair_db, operator, client):
    built = paused(repair_db, "active_not_pre_move")  # records say target; the tray is found at source
    wid, (s1, _) = built.workflow_id, built.step_ids
    mv = built.moves[0]
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, wid, "reconcile-source", code="TRAY_FOUND_AT_SOURCE",
                          tray_code=mv.tray_code, space_code=mv.source)
    assert response.status_code == 303
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_step", "alg.tidy_callback_event", "bas_stock",
                            "bas_cargo_space"}
    assert {c["cargo_space_id"] for c in changes["bas_stock"]["changed"].values()} == {(mv.target, mv.source)}
    assert changes["bas_cargo_space"]["changed"] == {mv.source: {"tray_code": (None, mv.tray_code)},
                                                     mv.target: {"tray_code": (mv.tray_code, None)}}
    assert changes["alg.tidy_step"]["changed"][s1]["status"] == ("PAUSED_RECOVERY", "DISPATCHED")
    audit = only_audit()
    assert len([c for c in audit.changes if c["table"] == "bas_stock"]) == 3  # before and after per row
    assert audit.consistent_after and "LEAVE" in audit.decision_after


def test_it_resets_an_invalid_job_status_when_the_tray_is_at_the_source(repair_db, operator, client):
    built = paused(repair_db, "active_bad_status")
    wid, (s1, _) = built.workflow_id, built.step_ids
    mv = built.moves[0]
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "reconcile-source", code="JOB_STATUS_INVALID", tray_code=mv.tray_code,
                      space_code=mv.source).status_code == 303
    changes = diff(before, snapshot())
    assert changes["mydo_job"]["changed"] == {tidy_job_id(wid, s1): {"status": (9, 1)}}
    assert only_audit().consistent_after


def test_it_completes_a_workflow_whose_last_job_was_left_active(repair_db, operator, client):
    built = paused(repair_db, "completed_job_active")
    wid, (_, s2) = built.workflow_id, built.step_ids
    mv = built.moves[1]
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "reconcile-target", code="TRAY_FOUND_AT_TARGET", tray_code=mv.tray_code,
                      space_code=mv.target).status_code == 303
    changes = diff(before, snapshot())
    assert changes["alg.tidy_workflow"]["changed"][wid]["status"] == ("PAUSED_RECOVERY", "COMPLETED")
    assert changes["alg.tidy_space_lock"]["removed"] and not changes["alg.tidy_space_lock"]["added"]
    assert list(changes["mydo_job"]["removed"]) == [tidy_job_id(wid, s2)]
    assert [r["job_id"] for r in changes["mydo_job_finish"]["added"].values()] == [tidy_job_id(wid, s2)]
    assert only_audit().consistent_after


def test_it_refuses_reconcile_to_source_when_the_job_is_archived(repair_db, operator, client):
    built = paused(repair_db, "finish_not_terminal")
    mv = built.moves[0]
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, built.workflow_id, "reconcile-source", code="TRAY_FOUND_AT_SOURCE",
                          tray_code=mv.tray_code, space_code=mv.source)
    assert response.status_code == 409
    unchanged_except_nothing(before)
    assert "cannot be un-archived" in only_audit().message


@pytest.mark.parametrize(("tray", "space"), [("T99999", None), (None, "Z99-99-99"), (None, "source")])
def test_it_refuses_scanned_codes_that_do_not_match(repair_db, operator, client, tray, space):
    built = paused(repair_db, "active_not_pre_move")
    mv = built.moves[0]
    space = mv.source if space == "source" else space  # the other end of the move
    client.force_login(operator)
    before = snapshot()
    response = post_apply(client, built.workflow_id, "reconcile-target", code="TRAY_FOUND_AT_TARGET",
                          tray_code=tray or mv.tray_code, space_code=space or mv.target)
    assert response.status_code == 409
    unchanged_except_nothing(before)
    audit = only_audit()
    assert audit.outcome == "REFUSED:CODES_DO_NOT_MATCH"
    assert audit.inputs == {"tray_code": tray or mv.tray_code, "space_code": space or mv.target}


def test_it_shows_mismatching_codes_on_the_form(repair_db, operator, client):
    built = paused(repair_db, "active_not_pre_move")
    mv = built.moves[0]
    client.force_login(operator)
    response = client.post(preview_url(built.workflow_id, "reconcile-target"), {
        "reason_code": "TRAY_FOUND_AT_TARGET", "reason_text": REASON, "tray_code": mv.tray_code,
        "space_code": mv.source})
    assert response.status_code == 200
    assert "other end of the move" in response.content.decode()
    assert only_audit().outcome == "REFUSED:CODES_DO_NOT_MATCH"


def test_it_refuses_to_overwrite_a_space_that_records_another_tray(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    mv = built.moves[0]
    other, _ = repair_db.stocked_tray()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s", [other, mv.target])
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, built.workflow_id, "reconcile-target", code="TRAY_FOUND_AT_TARGET",
                      tray_code=mv.tray_code, space_code=mv.target).status_code == 409
    unchanged_except_nothing(before)
    assert "records another tray" in only_audit().message


def test_it_sends_anonymous_proposal_and_batch_posts_to_sign_in(repair_db, client):
    for name, args in (("repair-proposal-approve", [1]), ("repair-proposal-reject", [1]),
                       ("repair-batch-preview", []), ("repair-batch-apply", [])):
        response = client.post(reverse(name, args=args), {"reason_text": REASON})
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert RepairAudit.objects.count() == 0


def test_it_completes_on_recheck_once_the_leftover_job_was_archived_in_the_wms(repair_db, operator, client):
    built = paused(repair_db, "completed_job_active")
    wid, (_, s2) = built.workflow_id, built.step_ids
    with connection.cursor() as cursor:  # the WMS team removed the duplicate active row
        cursor.execute("DELETE FROM mydo_job WHERE job_id = %s", [tidy_job_id(wid, s2)])
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "recheck", code="WMS_RECORDS_FIXED").status_code == 303
    changes = diff(before, snapshot())
    assert set(changes) == {"alg.tidy_workflow", "alg.tidy_space_lock"}
    assert changes["alg.tidy_workflow"]["changed"][wid]["status"] == ("PAUSED_RECOVERY", "COMPLETED")
    assert len(changes["alg.tidy_space_lock"]["removed"]) == 4
    audit = only_audit()
    assert audit.consistent_after and audit.decision_after.startswith("COMPLETED")


def test_it_archives_a_job_for_another_move_with_its_own_status_on_reconcile_to_target(repair_db, operator, client):
    built = paused(repair_db, "active_mismatch")  # TDY-<w>-<s1> names another tray, status 2
    wid, (s1, s2) = built.workflow_id, built.step_ids
    mv = built.moves[0]
    client.force_login(operator)
    before = snapshot()
    assert post_apply(client, wid, "reconcile-target", code="MOVE_DONE_NOT_RECORDED", tray_code=mv.tray_code,
                      space_code=mv.target).status_code == 303
    changes = diff(before, snapshot())
    (archived,) = changes["mydo_job_finish"]["added"].values()
    assert (archived["job_id"], archived["status"]) == (tidy_job_id(wid, s1), 2)  # not claimed finished
    assert archived["tray_code"] != mv.tray_code
    assert {c["cargo_space_id"] for c in changes["bas_stock"]["changed"].values()} == {(mv.source, mv.target)}
    assert changes["bas_cargo_space"]["changed"] == {mv.source: {"tray_code": (mv.tray_code, None)},
                                                     mv.target: {"tray_code": (None, mv.tray_code)}}
    assert list(changes["mydo_job"]["added"]) == [tidy_job_id(wid, s2)]
    assert only_audit().consistent_after
