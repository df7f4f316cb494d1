"""A supervisor in a real browser: sign in, filter the paused list, open a workflow, read the
evidence card with its highlighted mismatch, see its locks; on a phone and without JavaScript."""

import re

import pytest
from playwright.sync_api import expect

from recovery.engine.cycle import run_cycle
from tests.browser.strict import sideways_overflow
from tests.console_personas import make_user

PASSWORD = "browser-test-pw"


@pytest.fixture
def floor(wms, live_server):
    """Paused workflows of several reasons and a supervisor account."""
    from django.contrib.auth.models import Group

    Group.objects.get_or_create(name="supervisor")
    make_user("sup", "supervisor", password=PASSWORD)
    built = {"missing": wms.build("job_missing"), "mismatch": wms.build("active_mismatch")}
    wms.build("job_missing")
    wms.build("finish_not_terminal")
    wms.build("healthy")
    run_cycle()
    return built


def sign_in(page, base: str, path: str = "/"):
    page.goto(base + path)
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    page.get_by_label("User name").fill("sup")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_it_takes_a_supervisor_from_sign_in_to_the_evidence_and_locks(page, live_server, floor, artifacts):
    base = live_server.url
    sign_in(page, base)
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    expect(page.locator(".tile-value").first).to_have_text("4")
    page.screenshot(path=artifacts / "console-dashboard.png", full_page=True)

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Paused workflows").click()
    rows = page.locator("#paused-results tbody tr")
    expect(rows).to_have_count(4)

    # Filter with htmx: the fragment is swapped in and the URL keeps the filter.
    page.get_by_label("Reason code", exact=True).select_option("RECOVERY_JOB_MISMATCH")
    expect(rows).to_have_count(1)
    expect(page).to_have_url(re.compile(r"reason=RECOVERY_JOB_MISMATCH"))
    expect(page.locator("#paused-results")).to_have_attribute("hx-get", re.compile("reason=RECOVERY_JOB_MISMATCH"))
    page.screenshot(path=artifacts / "console-paused-filtered.png", full_page=True)

    wid = floor["mismatch"].workflow_id
    page.get_by_role("link", name=f"#{wid}").click()
    expect(page.get_by_role("heading", name=f"Workflow #{wid}")).to_be_visible()

    now = page.locator("#evidence-now")
    decisive = now.locator('tr.check-mismatch.decisive[data-field="active.tray_code"]')
    expect(decisive).to_be_visible()
    expect(decisive).to_contain_text("Produced this decision")
    expect(now.locator("tr.check-mismatch")).to_have_count(1)
    # The highlight is really painted (the stylesheet is served and applies).
    background = decisive.locator("td").last.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(253, 232, 232)"
    expect(page.locator("#evidence-then tr.check-mismatch.decisive")).to_have_count(1)
    decisive.scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "console-workflow-evidence.png", full_page=True)

    locks = page.locator("#locks-h + .table-wrap tbody tr")
    expect(locks).to_have_count(4)
    for move in floor["mismatch"].moves:
        expect(page.locator("#workflow-history")).to_contain_text(move.source)
    page.locator("#locks-h").scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "console-workflow-locks.png")

    page.get_by_role("link", name="RECOVERY_JOB_MISMATCH").first.click()
    expect(page).to_have_url(re.compile(r"/reason-codes/#RECOVERY_JOB_MISMATCH$"))
    expect(page.locator("#RECOVERY_JOB_MISMATCH")).to_contain_text("What to check on the floor")


def test_it_refreshes_the_list_live_and_keeps_the_filter(page, live_server, floor, wms, settings, artifacts):
    settings.CONSOLE_REFRESH_SECONDS = 1
    sign_in(page, live_server.url, "/paused/?reason=RECOVERY_JOB_MISSING")
    rows = page.locator("#paused-results tbody tr")
    expect(rows).to_have_count(2)

    wms.build("job_missing")
    wms.build("active_mismatch")
    run_cycle()
    expect(rows).to_have_count(3, timeout=10_000)  # the poll brought the new one, still filtered
    expect(page.get_by_label("Reason code", exact=True)).to_have_value("RECOVERY_JOB_MISSING")


def test_it_works_without_javascript(browser, live_server, floor, artifacts):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, live_server.url, "/paused/")
    page.get_by_label("Origin").select_option("AUTOMATIC")
    page.get_by_label("Reason code", exact=True).select_option("RECOVERY_JOB_MISSING")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"reason=RECOVERY_JOB_MISSING"))
    expect(page.locator("#paused-results tbody tr")).to_have_count(2)
    page.locator("a.chip", has_text="RECOVERY_JOB_MISMATCH").click()  # a plain link
    expect(page.locator("#paused-results tbody tr")).to_have_count(1)
    page.screenshot(path=artifacts / "console-paused-no-js.png", full_page=True)
    context.close()


@pytest.mark.parametrize("path", ["/", "/paused/", "workflow", "/locks/", "/reason-codes/", "/recovery/", "/flow/"])
def test_it_fits_a_phone_screen(browser, live_server, floor, artifacts, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    target = f"/workflows/{floor['missing'].workflow_id}/" if path == "workflow" else path
    sign_in(page, live_server.url, target)
    expect(page.locator("main h1")).to_be_visible()
    # A page wider than the phone makes the browser zoom out (innerWidth grows past 390).
    overflow = sideways_overflow(page, 390)
    name = path.strip("/") or "dashboard"
    page.screenshot(path=artifacts / f"console-phone-{name}.png", full_page=True)
    assert overflow <= 0, f"{target} scrolls sideways by {overflow}px on a phone"
    context.close()


def test_it_moves_keyboard_focus_visibly(page, live_server, floor):
    sign_in(page, live_server.url, "/paused/")
    expect(page.locator("main h1")).to_have_text("Paused workflows")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    outline = page.locator(".skip-link").evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline == "solid"


def test_it_waits_with_the_refresh_while_the_keyboard_is_in_the_list(page, live_server, floor, wms, settings):
    settings.CONSOLE_REFRESH_SECONDS = 1
    sign_in(page, live_server.url, "/paused/")
    rows = page.locator("#paused-results tbody tr")
    expect(rows).to_have_count(4)
    link = page.locator("#paused-results a.wf").first
    link.focus()

    wms.build("job_missing")
    run_cycle()
    page.wait_for_timeout(2500)  # two refresh periods: a refresh now would take the focus away
    expect(rows).to_have_count(4)
    expect(link).to_be_focused()

    link.blur()
    expect(rows).to_have_count(5, timeout=10_000)


def test_it_shows_the_indicator_while_an_htmx_request_runs(page, live_server, floor, settings):
    settings.CONSOLE_REFRESH_SECONDS = 1
    sign_in(page, live_server.url, "/paused/")
    indicator = page.locator("#htmx-indicator")
    expect(indicator).to_have_css("opacity", "0")
    held = []
    page.route("**/paused/**", lambda route: held.append(route))  # the next refresh hangs until released
    expect(indicator).to_have_class(re.compile(r"\bhtmx-request\b"), timeout=5_000)
    expect(indicator).to_have_css("opacity", "1")
    page.unroute("**/paused/**")  # releases the held refresh (and lets later ones through)
    expect(indicator).not_to_have_class(re.compile(r"\bhtmx-request\b"), timeout=5_000)
    # No inline style element: htmx's own indicator styles are switched off (a strict CSP refuses them).
    assert page.locator("head style").count() == 0
