"""The repair flows floor staff use, driven in a real browser at desktop (1280×800) and phone
(390×844) width: reconcile with codes typed the way a scanner types them, cancel-and-release
proposed by one shift lead and approved by another in a second signed-in session, and a batch
re-check. Any console error, page error, failed request or 4xx/5xx response fails a test, and
no page may scroll sideways on a phone. Screenshots go to test-artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from console.models import CancelProposal, RepairAudit, RepairBatch
from recovery.engine.evidence import evidence_for_workflow
from tests.browser.strict import VIEWPORTS, assert_fits, watch
from tests.repair_support import make_user, paused, run_queued_tasks

REASON = "Checked on the floor: the tray stands at its target"
VIEWPORT_NAMES = list(VIEWPORTS)


class Session:
    """One signed-in browser context, watched for problems."""

    def __init__(self, browser, live_server, viewport: str, username: str, artifacts):
        self.context = browser.new_context(**VIEWPORTS[viewport])
        self.page = self.context.new_page()
        self.problems = watch(self.page)
        self.base, self.viewport, self.artifacts, self.username = live_server.url, viewport, artifacts, username
        self.page.goto(f"{self.base}/accounts/login/")
        self.page.get_by_label("User name").fill(username)
        self.page.get_by_label("Password").fill(f"{username}-pw")
        self.page.get_by_role("button", name="Sign in").click()
        expect(self.page.get_by_role("heading", name="Dashboard")).to_be_visible()

    def goto(self, path: str):
        self.page.goto(self.base + path)

    def shot(self, name: str):
        """A screenshot, and on a phone the check that nothing scrolls sideways."""
        self.page.screenshot(path=self.artifacts / f"{name}-{self.viewport}.png", full_page=True)
        if self.viewport == "phone":
            assert_fits(self.page)

    def close(self):
        assert self.problems == [], f"{self.username}: " + "\n".join(self.problems)
        self.context.close()


@pytest.fixture
def sessions(browser, live_server, artifacts):
    opened: list[Session] = []

    def open_session(viewport: str, username: str) -> Session:
        opened.append(Session(browser, live_server, viewport, username, artifacts))
        return opened[-1]

    yield open_session
    for s in opened:
        s.context.close()


@pytest.mark.parametrize("viewport", VIEWPORT_NAMES)
def test_an_operator_reconciles_with_scanned_codes(repair_db, live_server, sessions, viewport):
    make_user("olga", "operator")
    built = paused(repair_db, "active_not_pre_move")  # the job says 3, the records say target
    wid, mv = built.workflow_id, built.moves[0]
    olga = sessions(viewport, "olga")
    page = olga.page
    olga.goto(f"/workflows/{wid}/")
    page.locator(f"#repair-panel-{wid} a[href$='/reconcile-target/']").click()
    expect(page.locator("h1")).to_contain_text("target")
    page.get_by_label("Reason code").select_option("TRAY_FOUND_AT_TARGET")
    page.get_by_label("Written reason").fill(REASON)
    tray, space = page.locator("#id_tray_code"), page.locator("#id_space_code")
    olga.shot("reconcile-form")

    form_url = page.url
    tray.click()
    page.keyboard.type(mv.tray_code, delay=15)  # a scanner: fast keystrokes, then Enter
    page.keyboard.press("Enter")
    expect(space).to_be_focused()  # Enter moved on to the next code, it did not submit
    assert page.url == form_url
    page.keyboard.type(mv.target, delay=15)
    page.keyboard.press("Enter")  # the last code: Enter submits for the preview

    expect(page.get_by_role("heading", name=re.compile("^Preview:"))).to_be_visible()
    expect(page.get_by_text(f"Scanned: tray {mv.tray_code}, space {mv.target}")).to_be_visible()
    expect(page.locator("#preview-decision")).to_be_visible()
    assert evidence_for_workflow(wid).step.step_id == built.step_ids[0]  # nothing applied yet
    olga.shot("reconcile-preview")

    page.get_by_role("button", name="Confirm and apply").click()
    expect(page).to_have_url(re.compile(r"/repair/audit/\d+/$"))
    expect(page.locator("#entry-outcome")).to_have_text("APPLIED")
    expect(page.locator("#entry-decision")).to_contain_text("consistent")
    expect(page.locator("#entry-evidence tr.changed").first).to_be_visible()
    olga.shot("reconcile-applied")
    page.locator("#entry-evidence").screenshot(path=olga.artifacts / f"audit-evidence-table-{viewport}.png")

    ev = evidence_for_workflow(wid)
    assert ev.workflow_status == "ACTIVE" and ev.step.step_id == built.step_ids[1]  # advanced to step 2
    audit = RepairAudit.objects.get(stage="APPLY")
    assert (audit.action, audit.outcome, audit.inputs) == (
        "RECONCILE_TARGET", "APPLIED", {"tray_code": mv.tray_code, "space_code": mv.target})
    olga.close()


@pytest.mark.parametrize("viewport", VIEWPORT_NAMES)
def test_an_operator_reissues_only_with_the_tray_scanned_at_its_source(repair_db, live_server, sessions, viewport):
    """A missing job may have run (a lost acknowledgement): the re-issue form asks for the codes read
    on the floor; the tray scanned at its target is refused and audited, at its source it applies."""
    make_user("olga", "operator")
    built = paused(repair_db, "job_missing")
    wid, mv = built.workflow_id, built.moves[0]
    olga = sessions(viewport, "olga")
    page = olga.page
    olga.goto(f"/workflows/{wid}/")
    page.locator(f"#repair-panel-{wid} a[href$='/reissue/']").click()
    expect(page.locator("h1")).to_contain_text("Re-issue job")
    expect(page.get_by_text("its source space")).to_be_visible()
    page.get_by_label("Reason code").select_option("JOB_LOST_AT_RESTART")
    page.get_by_label("Written reason").fill("Job lost at the restart; checked the aisle")
    tray, space = page.locator("#id_tray_code"), page.locator("#id_space_code")
    olga.shot("reissue-form")

    tray.click()
    page.keyboard.type(mv.tray_code, delay=15)  # a scanner: fast keystrokes, then Enter
    page.keyboard.press("Enter")
    expect(space).to_be_focused()
    page.keyboard.type(mv.target, delay=15)  # the tray stands at the target: the move happened
    page.keyboard.press("Enter")
    expect(page.locator(".error").first).to_be_visible()
    expect(page.get_by_text("The scanned codes do not match the records").first).to_be_visible()
    olga.shot("reissue-refused")
    assert evidence_for_workflow(wid).workflow_status == "PAUSED_RECOVERY"
    (refused,) = RepairAudit.objects.all()
    assert (refused.action, refused.outcome, refused.inputs) == (
        "REISSUE", "REFUSED:CODES_DO_NOT_MATCH", {"tray_code": mv.tray_code, "space_code": mv.target})

    space.fill("")
    space.click()
    page.keyboard.type(mv.source, delay=15)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("^Preview:"))).to_be_visible()
    expect(page.get_by_text(f"Scanned: tray {mv.tray_code}, space {mv.source}")).to_be_visible()
    page.get_by_role("button", name="Confirm and apply").click()
    expect(page.locator("#entry-outcome")).to_have_text("APPLIED")
    olga.shot("reissue-applied")
    assert evidence_for_workflow(wid).workflow_status == "ACTIVE"
    audit = RepairAudit.objects.get(stage="APPLY")
    assert (audit.action, audit.inputs) == ("REISSUE", {"tray_code": mv.tray_code, "space_code": mv.source})
    olga.close()


@pytest.mark.parametrize("viewport", VIEWPORT_NAMES)
def test_one_shift_lead_proposes_a_cancel_and_another_approves_it(repair_db, live_server, sessions, viewport):
    make_user("lena", "shift lead")
    make_user("lars", "shift lead")
    wid = paused(repair_db, "job_missing").workflow_id
    lena, lars = sessions(viewport, "lena"), sessions(viewport, "lars")

    lena.goto(f"/workflows/{wid}/")
    lena.page.locator(f"#repair-panel-{wid} a[href$='/cancel/']").click()
    lena.page.get_by_label("Reason code").select_option("TIDY_NO_LONGER_NEEDED")
    lena.page.get_by_label("Written reason").fill("The tidy was re-planned by the day shift")
    lena.page.get_by_role("button", name="Preview the changes").click()
    expect(lena.page.get_by_text("this creates a proposal")).to_be_visible()
    lena.shot("cancel-propose-preview")
    lena.page.get_by_role("button", name="Propose cancel and release").click()
    expect(lena.page).to_have_url(re.compile(r"/repair/proposals/\d+/$"))
    expect(lena.page.locator("#proposal-status")).to_have_text("PENDING")
    expect(lena.page.get_by_text("You proposed this")).to_be_visible()
    expect(lena.page.get_by_role("button", name="Approve and apply")).to_have_count(0)  # not to the proposer
    lena.shot("cancel-proposed")
    assert evidence_for_workflow(wid).workflow_status == "PAUSED_RECOVERY"

    # The second shift lead, in a session of their own, finds it and approves it.
    lars.goto("/repair/proposals/")
    lars.page.locator("main").get_by_role("link", name=f"Workflow #{wid}", exact=True).click()
    expect(lars.page.locator("#proposal-status")).to_have_text("PENDING")
    approve = lars.page.locator("form[action$='/approve']")
    approve.get_by_label("Reason code").select_option("CANCEL_CHECKED_ON_FLOOR")
    approve.get_by_label("Written reason").fill("Checked on the floor: the tray is back in stock")
    lars.shot("cancel-approve-form")
    approve.get_by_role("button", name="Approve and apply").click()
    expect(lars.page).to_have_url(re.compile(r"/repair/audit/\d+/$"))
    expect(lars.page.locator("#entry-outcome")).to_have_text("APPLIED")
    lars.shot("cancel-approved")

    lena.page.reload()
    expect(lena.page.locator("#proposal-status")).to_have_text("APPLIED")
    expect(lena.page.get_by_text("Decided by")).to_be_visible()
    expect(lena.page.locator("form[action$='/reject'], form[action$='/approve']")).to_have_count(0)
    proposal = CancelProposal.objects.get()
    assert (proposal.status, proposal.proposed_by.username, proposal.decided_by.username) == (
        "APPLIED", "lena", "lars")
    assert evidence_for_workflow(wid).workflow_status == "CANCELLED"
    lena.close()
    lars.close()


@pytest.mark.parametrize("viewport", VIEWPORT_NAMES)
@pytest.mark.slow
def test_an_operator_rechecks_a_batch(repair_db, live_server, sessions, viewport):
    make_user("olga", "operator")
    fixed = paused(repair_db, "job_missing")
    repair_db.job(fixed, 0, status=1)  # the job was restored in the WMS
    unfixed = paused(repair_db, "job_missing")
    olga = sessions(viewport, "olga")
    page = olga.page

    olga.goto("/paused/")
    page.get_by_role("link", name=re.compile(r"Re-check all 2 paused workflows in one batch")).click()
    expect(page.locator("#batch-total")).to_have_text("2")
    expect(page.get_by_label(f"Select workflow {fixed.workflow_id}")).to_be_checked()  # would resume
    expect(page.get_by_label(f"Select workflow {unfixed.workflow_id}")).not_to_be_checked()
    page.get_by_label(f"Select workflow {unfixed.workflow_id}").check()
    olga.shot("batch-select")
    page.get_by_role("button", name="Review the selected workflows").click()

    expect(page.locator("#batch-count")).to_contain_text("2 paused workflows will be re-checked")
    items = page.locator(".batch-list li")
    expect(items).to_have_count(2)
    expect(items.filter(has_text=f"#{fixed.workflow_id}")).to_contain_text("would resume")
    expect(items.filter(has_text=f"#{unfixed.workflow_id}")).to_contain_text("would stay paused")
    page.get_by_label("Reason code").select_option("WMS_RECORDS_FIXED")
    page.get_by_label("Written reason").fill("Jobs restored from the WMS backup at 03:00")
    olga.shot("batch-preview")
    page.get_by_role("button", name="Re-check these 2").click()

    # The batch runs in the qcluster: the page shows its progress while the queued task (run here
    # as a cluster worker would) re-checks the workflows, then refreshes to the outcomes.
    expect(page).to_have_url(re.compile(r"/repair/batch/\d+/$"))
    assert run_queued_tasks() == 1
    expect(page.locator("#batch-summary")).to_contain_text("1 resumed, 1 refused", timeout=30_000)
    rows = page.locator("main table tbody tr")
    expect(rows.filter(has_text=f"#{fixed.workflow_id}")).to_contain_text("APPLIED")
    expect(rows.filter(has_text=f"#{unfixed.workflow_id}")).to_contain_text("REFUSED")
    olga.shot("batch-result")
    batch = RepairBatch.objects.get()
    assert dict(batch.audit.values_list("workflow_id", "outcome")) == {
        fixed.workflow_id: "APPLIED", unfixed.workflow_id: "REFUSED:PRECONDITION"}
    assert evidence_for_workflow(fixed.workflow_id).workflow_status == "ACTIVE"
    assert evidence_for_workflow(unfixed.workflow_id).workflow_status == "PAUSED_RECOVERY"
    olga.close()
