"""Load identity and explicit order on the callbacks: a job-finish naming another tray or place
than the step's moves nothing and is answered 409 REPORT_MISMATCH with both sides (a repeat
too); a job-status whose sequence is not newer than the job's highest recorded one changes
nothing and is answered 200 STALE_REPORT."""

from console.readers.recovery import callback_refusals
from console.workflows.evidence_card import build_evidence_card
from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import Rule, decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.models import CallbackReceipt
from tests.wcs_helpers import create, finish, rows, status
from tests.wms_state import diff, snapshot

JOB_STATUS = "SELECT status FROM mydo_job WHERE job_id = %s"
WORKFLOW = "SELECT status, pause_reason FROM alg.tidy_workflow WHERE workflow_id = %s"


def test_a_finish_reporting_the_steps_tray_and_target_completes_the_move_and_is_recorded(wms, client):
    created, moves = create(wms, 2)
    response = finish(client, created.first_job_id, tray_code=moves[0].tray_code, location=moves[0].target,
                      sequence=4)
    assert response.status_code == 200, response.content
    assert response.json()["outcome"] == "ACCEPTED"
    receipt = CallbackReceipt.objects.get()
    assert (receipt.tray_code, receipt.location, receipt.sequence, receipt.mismatch) == (
        moves[0].tray_code, moves[0].target, 4, None)


def test_a_finish_reporting_another_tray_moves_nothing_and_answers_both_sides_every_time(wms, client):
    created, moves = create(wms, 2)
    before = snapshot()
    answers = [finish(client, created.first_job_id, tray_code="T-WRONG", location=moves[0].target)
               for _ in range(2)]
    for response in answers:
        assert response.status_code == 409
        body = response.json()
        assert body["outcome"] == "REPORT_MISMATCH"
        assert body["expected"] == {"tray_code": moves[0].tray_code, "location": moves[0].target}
        assert body["reported"] == {"tray_code": "T-WRONG", "location": moves[0].target}
        assert body["inventory_moved"] is False
    assert diff(before, snapshot()) == {}
    receipts = list(CallbackReceipt.objects.order_by("id").values_list("http_status", "outcome", "tray_code",
                                                                       "mismatch"))
    mismatch = {"expected": {"tray_code": moves[0].tray_code, "location": moves[0].target},
                "reported": {"tray_code": "T-WRONG", "location": moves[0].target}}
    assert receipts == [(409, "REPORT_MISMATCH", "T-WRONG", mismatch)] * 2


def test_a_move_finish_delivered_to_another_place_is_a_mismatch(wms, client):
    created, moves = create(wms, 1)
    before = snapshot()
    response = finish(client, created.first_job_id, location="SOMEWHERE-ELSE")
    assert (response.status_code, response.json()["outcome"]) == (409, "REPORT_MISMATCH")
    assert response.json()["expected"]["location"] == moves[0].target
    assert diff(before, snapshot()) == {}


def test_another_stages_location_is_recorded_not_compared(wms, client):
    created, moves = create(wms, 2)
    assert finish(client, created.first_job_id).status_code == 200
    response = finish(client, created.first_job_id, stage="OUTBOUND_FINISHED", location="OUTBOUND-DOCK-3",
                      tray_code=moves[0].tray_code)
    assert (response.status_code, response.json()["outcome"]) == (200, "DUPLICATE")
    assert CallbackReceipt.objects.order_by("-id").values_list("location", flat=True)[0] == "OUTBOUND-DOCK-3"


def test_a_mismatch_is_a_refusal_on_the_recovery_page_and_a_stale_report_is_not(wms, client):
    created, _ = create(wms, 1)
    finish(client, created.first_job_id, tray_code="T-WRONG")
    status(client, created.first_job_id, 2, sequence=5)
    status(client, created.first_job_id, 2, sequence=5)
    assert callback_refusals().counts == [("job-finish", "REPORT_MISMATCH", 1)]


def test_a_status_older_than_the_jobs_highest_sequence_changes_nothing(wms, client):
    created, _ = create(wms, 1)
    job = created.first_job_id
    assert status(client, job, 3, sequence=5).json()["outcome"] == "ACCEPTED"
    before = snapshot()
    stale = status(client, job, 2, sequence=4)
    assert stale.status_code == 200
    assert (stale.json()["outcome"], stale.json()["highest_sequence"]) == ("STALE_REPORT", 5)
    same = status(client, job, 3, sequence=5)
    assert (same.status_code, same.json()["outcome"]) == (200, "STALE_REPORT")
    assert diff(before, snapshot()) == {}
    assert rows(JOB_STATUS, [job]) == [(3,)]


def test_a_newer_sequence_applies_as_today(wms, client):
    created, _ = create(wms, 1)
    job = created.first_job_id
    assert status(client, job, 2, sequence=1).json()["outcome"] == "ACCEPTED"
    assert status(client, job, 3, sequence=2).json()["outcome"] == "ACCEPTED"
    assert rows(JOB_STATUS, [job]) == [(3,)]


def test_a_status_delivered_after_the_finish_is_stale_not_a_conflict(wms, client):
    created, moves = create(wms, 2)
    job = created.first_job_id
    assert finish(client, job, sequence=9).status_code == 200
    late = status(client, job, 3, sequence=8)
    assert (late.status_code, late.json()["outcome"]) == (200, "STALE_REPORT")
    assert callback_refusals().counts == []


def test_without_a_sequence_status_reports_stay_forward_only(wms, client):
    created, _ = create(wms, 1)
    job = created.first_job_id
    assert status(client, job, 3, sequence=5).json()["outcome"] == "ACCEPTED"
    backwards = status(client, job, 2)
    assert (backwards.status_code, backwards.json()["outcome"]) == (409, "REFUSED_CONFLICT")


def test_a_report_the_server_could_not_process_does_not_set_the_highest_sequence(wms, client):
    created, _ = create(wms, 1)
    job = created.first_job_id
    CallbackReceipt.objects.create(endpoint="job-status", job_id=job, http_status=503, outcome="UNAVAILABLE",
                                   sequence=7)
    retried = status(client, job, 2, sequence=7)  # the WCS retries the report the 503 answered
    assert retried.json()["outcome"] == "ACCEPTED"


def test_the_next_cycle_pauses_the_workflow_and_a_repeat_still_gets_the_mismatch(wms, client):
    created, moves = create(wms, 2)
    finish(client, created.first_job_id, tray_code="T-WRONG")
    run_cycle()
    assert rows(WORKFLOW, [created.workflow_id]) == [("PAUSED_RECOVERY", "RECOVERY_WCS_REPORT_MISMATCH")]
    evidence = evidence_for_workflow(created.workflow_id)
    assert (evidence.finish_report_mismatch, evidence.finish_report_tray_code) == (True, "T-WRONG")
    repeat = finish(client, created.first_job_id, tray_code="T-WRONG")
    assert (repeat.status_code, repeat.json()["outcome"]) == (409, "REPORT_MISMATCH")
    card = build_evidence_card(evidence)
    assert card.rule is Rule.WCS_REPORT_MISMATCH
    tray = card.field("wcs_report.tray")
    assert (tray.expected, tray.observed, tray.mismatch, tray.decisive) == (moves[0].tray_code, "T-WRONG", True, True)
    assert card.field("wcs_report.location").observed == "not reported"


def test_a_finish_that_agrees_before_the_cycle_supersedes_the_mismatch(wms, client):
    created, moves = create(wms, 2)
    finish(client, created.first_job_id, tray_code="T-WRONG")
    agreed = finish(client, created.first_job_id, tray_code=moves[0].tray_code, location=moves[0].target)
    assert (agreed.status_code, agreed.json()["outcome"]) == (200, "ACCEPTED")
    run_cycle()
    assert rows(WORKFLOW, [created.workflow_id])[0][0] == "ACTIVE"


def test_an_operator_answer_on_the_floor_settles_an_earlier_mismatch(wms, client):
    built = wms.build("wcs_report_mismatch")
    assert decide(evidence_for_workflow(built.workflow_id)).rule is Rule.WCS_REPORT_MISMATCH
    CallbackReceipt.objects.update(received_at="2000-01-01T00:00:00Z")
    wms.event(built, 0, stage="OPERATOR_RECONCILED_SOURCE")
    assert decide(evidence_for_workflow(built.workflow_id)).rule is Rule.ACTIVE_JOB_PRE_MOVE
