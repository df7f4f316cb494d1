"""An operator repairs a RECOVERY_JOB_MISSING workflow end to end in a real browser (preview,
confirm, the workflow resumes); a supervisor sees the audit trail and no repair controls."""

import re

import pytest
from playwright.sync_api import expect

from console.models import RepairAudit
from recovery.engine.evidence import evidence_for_workflow
from recovery.models import tidy_job_id
from tests.repair_support import make_user, paused

REASON = "Job lost at the 02:10 restart; tray seen at its source"


@pytest.fixture
def floor(repair_db, live_server):
    for name, role in (("olga", "operator"), ("sven", "supervisor")):
        user = make_user(name, role)
        user.set_password(f"{name}-browser-pw")
        user.save()
    return paused(repair_db, "job_missing")


def sign_in(page, base: str, username: str, path: str):
    page.goto(base + path)
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(f"{username}-browser-pw")
    page.get_by_role("button", name="Sign in").click()


def test_an_operator_reissues_a_missing_job_end_to_end(page, live_server, floor, artifacts):
    wid, step_id = floor.workflow_id, floor.step_ids[0]
    job = tidy_job_id(wid, step_id)
    sign_in(page, live_server.url, "olga", f"/workflows/{wid}/")
    expect(page.get_by_role("heading", name=f"Workflow #{wid}")).to_be_visible()

    panel = page.locator(f"#repair-panel-{wid}")
    expect(panel.get_by_role("link", name="Re-issue job")).to_be_visible()
    expect(panel.get_by_role("link", name="Re-check and resume")).to_have_count(0)  # the table still pauses
    expect(panel).to_contain_text("still says pause with RECOVERY_JOB_MISSING")
    panel.get_by_role("link", name="Re-issue job").click()

    expect(page.get_by_role("heading", name="Re-issue job")).to_be_visible()
    page.get_by_label("Reason code").select_option("JOB_LOST_AT_RESTART")
    page.get_by_label("Written reason").fill("lost")  # too short first
    page.get_by_role("button", name="Preview the changes").click()
    expect(page.get_by_role("alert").first).to_be_visible()
    expect(page.locator(".error")).to_contain_text("at least 15 characters")
    page.get_by_label("Written reason").fill(REASON)
    mv = floor.moves[0]  # read on the floor: the tray, standing at its source
    page.locator("#id_tray_code").fill(mv.tray_code)
    page.locator("#id_space_code").fill(mv.source)
    page.get_by_role("button", name="Preview the changes").click()

    expect(page.get_by_role("heading", name="Preview: Re-issue job")).to_be_visible()
    expect(page.locator("#preview-summary")).to_contain_text(f"job {job} created again")
    expect(page.locator('tr[data-table="mydo_job"][data-kind="added"]')).to_contain_text(job)
    expect(page.locator("#preview-decision")).to_contain_text("ACTIVE: LEAVE")
    page.screenshot(path=artifacts / "repair-preview.png", full_page=True)
    assert evidence_for_workflow(wid).workflow_status == "PAUSED_RECOVERY"  # nothing applied yet

    page.get_by_role("button", name="Confirm and apply").click()
    expect(page).to_have_url(re.compile(r"/repair/audit/\d+/$"))
    expect(page.locator("#entry-outcome")).to_have_text("APPLIED")
    expect(page.locator("#entry-decision")).to_contain_text("consistent")
    page.screenshot(path=artifacts / "repair-applied.png", full_page=True)

    assert evidence_for_workflow(wid).workflow_status == "ACTIVE"
    assert evidence_for_workflow(wid).active_job.job_id == job
    assert list(RepairAudit.objects.values_list("username", "action", "stage", "outcome")) == [
        ("olga", "REISSUE", "APPLY", "APPLIED"), ("olga", "REISSUE", "PREVIEW", "REFUSED:REASON_TOO_SHORT")]

    page.get_by_role("link", name=f"Open workflow #{wid}").click()
    expect(page.locator(f"#repair-panel-{wid}")).to_contain_text("repairs are only for PAUSED_RECOVERY")
    expect(page.locator(f"#repair-panel-{wid} .audit-trail")).to_contain_text("APPLIED")


def test_a_supervisor_sees_the_trail_and_no_repair_controls(page, live_server, floor, artifacts):
    wid = floor.workflow_id
    sign_in(page, live_server.url, "sven", f"/workflows/{wid}/")
    expect(page.get_by_role("heading", name=f"Workflow #{wid}")).to_be_visible()
    panel = page.locator(f"#repair-panel-{wid}")
    expect(panel.get_by_role("heading", name="Repair audit trail")).to_be_visible()
    expect(panel.get_by_role("heading", name="Repair", exact=True)).to_have_count(0)
    expect(panel.locator("a[href*='/repair/workflow/']")).to_have_count(0)
    expect(panel.locator("form, button")).to_have_count(0)
    page.screenshot(path=artifacts / "repair-supervisor.png", full_page=True)
    # Typing the URL does not help either.
    response = page.goto(f"{live_server.url}/repair/workflow/{wid}/reissue/")
    assert response.status == 403
