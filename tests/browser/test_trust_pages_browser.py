"""The observe page, the preview, the case file and the analytics in Chromium, at desktop and phone
width, in English and in Chinese: nothing scrolls sideways, no Content Security Policy violation
(the case file's own stylesheet included) or other console error, the banner while recovery
observes; the case file printed to PDF. Screenshots go to test-artifacts/."""

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from console.models import UserLanguage
from recovery.demo.warehouse import WarehouseBuilder
from recovery.engine.cycle import run_cycle
from tests.browser.strict import VIEWPORTS, sideways_overflow, watch
from tests.console.analytics.test_analytics import pause
from tests.console_personas import make_user

PASSWORD = "trust-browser-pw"
HEADINGS = {
    "en": {"observe": "Observed decisions", "preview": "Next cycle preview", "analytics": "How long pauses wait",
           "case": "Case file of workflow"},
    "zh-hans": {"observe": "观察到的决策", "preview": "下一周期预览", "analytics": "暂停等待人工处理的时长",
                "case": "的案卷"},
}
BANNER = {"en": "Recovery is observing.", "zh-hans": "恢复正在观察模式下运行。"}


@pytest.fixture
def trust(wms, live_server, audit_truncate_allowed, settings):
    settings.RECOVERY_MODE = "observe"
    settings.NOTIFY_EMAIL_TO, settings.NOTIFY_WEBHOOK_URL = [], ""
    lead = make_user("lena", "shift lead", password=PASSWORD)
    for kind in ("job_missing", "finish_terminal", "active_mismatch", "healthy", "all_completed"):
        wms.build(kind)
    run_cycle()  # observed
    paused = wms.build("job_missing")
    run_cycle(mode="apply")  # one applied pause for the case file
    pause(WarehouseBuilder(space_prefix="B"), "RECOVERY_JOB_MISSING", datetime.now(UTC) - timedelta(hours=4),
          ended_after=25)
    return lead, paused


def sign_in(page, base: str, user, language: str) -> None:
    UserLanguage.objects.update_or_create(user=user, defaults={"language": language})
    page.goto(base + "/accounts/login/")
    page.locator("#id_username").fill("lena")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page.locator("main h1")).to_be_visible()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_pages_fit_and_raise_no_error(browser, live_server, trust, artifacts, viewport, language):
    lead, paused = trust
    context = browser.new_context(**VIEWPORTS[viewport])
    page = context.new_page()
    problems = watch(page)
    sign_in(page, live_server.url, lead, language)
    width = VIEWPORTS[viewport]["viewport"]["width"]
    pages = {"observe": "/recovery/observe/", "preview": "/recovery/preview/", "analytics": "/analytics/",
             "case": f"/workflows/{paused.workflow_id}/case-file.html"}
    for name, path in pages.items():
        page.goto(live_server.url + path)
        expect(page.locator("h1")).to_contain_text(HEADINGS[language][name])
        if name != "case":  # the case file is a document of its own, without the console's frame
            expect(page.locator(".observe-banner")).to_contain_text(BANNER[language])
        overflow = sideways_overflow(page, width if viewport == "phone" else None)
        page.screenshot(path=artifacts / f"trust-{name}-{viewport}-{language}.png", full_page=True)
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px ({viewport}, {language})"
    # The case file's own stylesheet applied (its nonce allowed by the policy): the table is styled.
    page.goto(live_server.url + pages["case"])
    collapse = page.locator("table").evaluate("t => getComputedStyle(t).borderCollapse")
    assert collapse == "collapse"
    assert problems == [], problems
    context.close()


def test_the_case_file_prints_and_links_back(browser, live_server, trust, artifacts):
    lead, paused = trust
    context = browser.new_context(**VIEWPORTS["desktop"])
    page = context.new_page()
    problems = watch(page)
    sign_in(page, live_server.url, lead, "en")
    page.goto(f"{live_server.url}/workflows/{paused.workflow_id}/")
    page.get_by_role("link", name="Case file: every event in order (printable)").click()
    expect(page.locator("h1")).to_contain_text(f"Case file of workflow #{paused.workflow_id}")
    rows = page.locator("tbody tr")
    expect(rows.first.locator(".kind")).to_have_text("created")
    expect(page.locator("tbody tr .kind-paused")).to_have_count(1)
    page.emulate_media(media="print")
    expect(page.locator(".links")).to_be_hidden()
    pdf = page.pdf(path=str(artifacts / "trust-case-file.pdf"))
    assert pdf[:4] == b"%PDF"
    page.emulate_media(media="screen")
    page.get_by_role("link", name="Back to the workflow page").click()
    expect(page).to_have_url(f"{live_server.url}/workflows/{paused.workflow_id}/")
    assert problems == [], problems
    context.close()


def test_the_observe_page_filters_without_javascript(browser, live_server, trust):
    lead, _ = trust
    context = browser.new_context(java_script_enabled=False, **VIEWPORTS["phone"])
    page = context.new_page()
    sign_in(page, live_server.url, lead, "en")
    page.goto(live_server.url + "/recovery/observe/")
    page.locator("#id_action").select_option("ADVANCE")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(f"{live_server.url}/recovery/observe/?action=ADVANCE&reason=")
    expect(page.locator("#list-h + .table-wrap tbody tr")).to_have_count(1)
    context.close()
