"""The case file: /workflows/<id>/case-file.json and .html, every event of one workflow in the
journals' order, through the real callbacks, cycles, notifications, notes and repairs."""

import re
from datetime import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from console.models import CancelProposal, Notification
from console.notes.services import note_create
from console.notifications.evaluate import evaluate_notifications
from console.notifications.services import notification_acknowledge
from recovery.engine.cycle import run_cycle
from recovery.models import CallbackReceipt, tidy_job_id
from tests.repair_support import at_source, fingerprint, key, paused
from tests.wcs_helpers import create, finish, status

REASON = "Checked on the floor with the shift lead"


def reissue(client, wid):
    preview = client.post(reverse("repair-preview", args=[wid, "reissue"]),
                          {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, **at_source(wid)})
    assert preview.status_code == 200
    response = client.post(reverse("repair-apply", args=[wid, "reissue"]), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON,
        "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": preview.context["key"],
        **at_source(wid)})
    assert response.status_code == 303, response.content.decode()[:400]


def case_json(client, wid) -> dict:
    response = client.get(f"/workflows/{wid}/case-file.json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    return response.json()


def kinds(case: dict) -> list[tuple]:
    """(kind, the detail that tells events of one kind apart) of every event, in order."""
    tell = {"callback": "result", "job_status": "result", "decision": "action", "step_event": "stage",
            "notification": "change", "repair": "action"}
    return [(e["kind"], e["details"].get(tell.get(e["kind"], ""))) if e["kind"] in tell else (e["kind"],)
            for e in case["events"]]


@pytest.fixture
def quiet_notifications(settings):
    settings.NOTIFY_EMAIL_TO = []
    settings.NOTIFY_WEBHOOK_URL = ""


@pytest.mark.usefixtures("committed_db")
def test_a_workflow_through_every_kind_of_event_lists_them_all_in_order(repair_db, operator, client,
                                                                         quiet_notifications):
    created, _ = create(repair_db, 2)
    wid, (s1, s2) = created.workflow_id, created.step_ids
    job1, job2 = tidy_job_id(wid, s1), tidy_job_id(wid, s2)
    assert status(client, job1, 2).status_code == 200
    assert finish(client, job1).status_code == 200
    assert finish(client, job1).status_code == 200  # a duplicate
    with connection.cursor() as cursor:  # the second step's job is lost
        cursor.execute("DELETE FROM mydo_job WHERE job_id = %s", [job2])
    run_cycle(mode="observe")
    run_cycle(mode="apply")
    assert finish(client, job2).status_code >= 400  # refused: the workflow is paused
    # A WCS report whose tray or delivery point differs from the step (design §11) is one more outcome.
    CallbackReceipt.objects.create(endpoint="job-finish", job_id=job2, workflow_id=wid, step_id=s2,
                                   stage="MOVE_FINISHED", http_status=409, outcome="REPORT_MISMATCH",
                                   message="reported tray T9 at A09-01-01")
    evaluate_notifications()
    notification = Notification.objects.get(workflow_id=wid)
    notification_acknowledge(notification_id=notification.pk, user=operator)
    note_create(workflow_id=wid, text="Vehicle 3 stopped with a fault; maintenance called", user=operator)
    client.force_login(operator)
    reissue(client, wid)
    assert finish(client, job2).status_code == 200
    evaluate_notifications()  # the cause is gone: resolved

    case = case_json(client, wid)
    assert case["workflow_id"] == wid and set(case) == {"workflow_id", "events", "after", "next"}
    assert (case["after"], case["next"]) == (None, None)  # one page holds it all
    assert [e["seq"] for e in case["events"]] == list(range(1, len(case["events"]) + 1))
    assert kinds(case) == [
        ("created",), ("job_status", "accepted"),
        ("callback", "accepted"), ("step_event", "MOVE_FINISHED"), ("callback", "duplicate"),
        ("decision", "PAUSE"), ("decision", "PAUSE"), ("paused",),
        ("callback", "refused"), ("callback", "mismatch"),
        ("notification", "opened"), ("acknowledged",), ("note",),
        # The operator's stage is recorded when the repair's transaction starts; its audit row at its end.
        ("step_event", "OPERATOR_REISSUED"), ("repair", "REISSUE"),
        ("callback", "accepted"), ("step_event", "MOVE_FINISHED"), ("completed",), ("locks_released",),
        ("notification", "resolved"),
    ]
    events = case["events"]
    observed, applied = events[5]["details"], events[6]["details"]
    assert (observed["observed"], applied["observed"]) == (True, False)
    assert applied["evidence"]["workflow_id"] == wid and applied["evidence"]["active_job"] is None
    assert applied["reason"] == "RECOVERY_JOB_MISSING" and events[7]["details"]["reason"] == "RECOVERY_JOB_MISSING"
    assert [e["actor"] for e in events[:3]] == ["wms", "wcs", "wcs"]
    assert events[12]["actor"] == "olga" and events[12]["details"]["text"].startswith("Vehicle 3")
    times = [datetime.fromisoformat(e["at"]) for e in events]
    assert times == sorted(times)  # here the journals' order is also the order of the times
    assert all(t.tzinfo is not None for t in times)
    assert "RECOVERY_JOB_MISSING" in events[7]["summary"]


@pytest.mark.usefixtures("committed_db")
def test_cancel_and_release_under_four_eyes_ends_the_case_file(repair_db, shiftlead, shiftlead2, client):
    built = paused(repair_db, "active_mismatch")
    wid = built.workflow_id
    client.force_login(shiftlead)
    preview = client.post(reverse("repair-preview", args=[wid, "cancel"]), {
        "reason_code": "JOB_ID_TAKEN_BY_OTHER_MOVE", "reason_text": REASON,
        "tray_code": built.moves[0].tray_code, "space_code": built.moves[0].source})
    client.post(reverse("repair-apply", args=[wid, "cancel"]), {
        "reason_code": "JOB_ID_TAKEN_BY_OTHER_MOVE", "reason_text": REASON,
        "tray_code": built.moves[0].tray_code, "space_code": built.moves[0].source,
        "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": preview.context["key"]})
    proposal = CancelProposal.objects.get()
    client.force_login(shiftlead2)
    assert client.post(reverse("repair-proposal-approve", args=[proposal.pk]), {
        "reason_code": "CANCEL_CHECKED_ON_FLOOR", "reason_text": REASON, "idempotency_key": key(),
        "fingerprint": fingerprint(wid)}).status_code == 303

    case = case_json(client, wid)
    assert kinds(case)[-5:] == [("repair", "CANCEL_PROPOSE"), ("step_event", "OPERATOR_CANCELLED"),
                                ("repair", "CANCEL_APPROVE"), ("cancelled",), ("locks_released",)]
    propose, _, approve, cancelled, _ = case["events"][-5:]
    assert (propose["details"]["four_eyes"], approve["details"]["four_eyes"]) == ("proposed", "approved")
    assert (propose["actor"], approve["actor"], cancelled["actor"]) == ("lena", "lars", "lars")


def test_a_refused_repair_is_in_the_case_file_too(repair_db, operator, client):
    built = paused(repair_db, "active_mismatch")  # a job is active: re-issue does not hold
    client.force_login(operator)
    client.post(reverse("repair-apply", args=[built.workflow_id, "reissue"]), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, "fingerprint": fingerprint(built.workflow_id),
        "idempotency_key": key()})
    (repair,) = [e for e in case_json(client, built.workflow_id)["events"] if e["kind"] == "repair"]
    assert repair["details"]["outcome"].startswith("REFUSED:") and "refused" in repair["summary"]


def test_the_printable_page_is_self_contained_and_allowed_by_the_content_security_policy(repair_db, operator,
                                                                                          client):
    built = paused(repair_db, "job_missing")
    client.force_login(operator)
    response = client.get(f"/workflows/{built.workflow_id}/case-file.html")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'rel="stylesheet"' not in html and "<script" not in html and " style=" not in html
    assert 'src="' not in html  # nothing fetched: the page is whole as it is
    (nonce,) = re.findall(r'<style nonce="([^"]+)">', html)
    policy = response["Content-Security-Policy"]
    style_src = next(d for d in policy.split(";") if d.strip().startswith("style-src"))
    assert f"'nonce-{nonce}'" in style_src and "unsafe-inline" not in policy
    assert "@media print" in html
    assert 'id="event-1"' in html and "RECOVERY_JOB_MISSING" in html
    page = client.get(f"/workflows/{built.workflow_id}/").content.decode()
    assert f'href="/workflows/{built.workflow_id}/case-file.html"' in page
    assert f'href="/workflows/{built.workflow_id}/case-file.json"' in page


def test_unknown_workflows_strangers_and_wrong_methods_are_answered_without_a_500(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    for suffix in ("json", "html"):
        url = f"/workflows/{built.workflow_id}/case-file.{suffix}"
        assert client.get(url).status_code == 302  # sign in first
    client.force_login(operator)
    for suffix in ("json", "html"):
        assert client.get(f"/workflows/999999/case-file.{suffix}").status_code == 404
        assert client.get(f"/workflows/99999999999999999999/case-file.{suffix}").status_code == 404
        assert client.post(f"/workflows/{built.workflow_id}/case-file.{suffix}").status_code == 405


def test_a_roleless_account_is_refused(repair_db, client):
    from tests.console_personas import make_user

    built = paused(repair_db, "job_missing")
    client.force_login(make_user("nobody"))
    assert client.get(f"/workflows/{built.workflow_id}/case-file.json").status_code == 403


@pytest.mark.usefixtures("committed_db")
def test_the_case_file_reads_a_fixed_number_of_queries(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    client.force_login(operator)
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    finish(client, job)
    with CaptureQueriesContext(connection) as few:
        case_json(client, built.workflow_id)
    for _ in range(10):
        finish(client, job)
        note_create(workflow_id=built.workflow_id, text="still looking", user=operator)
    with CaptureQueriesContext(connection) as many:
        assert len(case_json(client, built.workflow_id)["events"]) > 20
    assert len(many.captured_queries) == len(few.captured_queries)
