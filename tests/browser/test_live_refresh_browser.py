"""The paused list refreshes itself in a real browser: a new pause appears without reloading,
with the filters kept; while the keyboard focus is inside the list the refresh holds off, so
nothing is swapped from under the user. Any console error, page error, failed request or
4xx/5xx response fails the test."""

import time

import pytest
from playwright.sync_api import expect

from tests.browser.strict import DESKTOP, watch
from tests.console_personas import make_user

PASSWORD = "live-refresh-pw"
REASON = "RECOVERY_JOB_MISSING"


@pytest.fixture
def floor(wms, live_server, settings, audit_truncate_allowed):
    settings.CONSOLE_REFRESH_SECONDS = 1
    make_user("sven", "supervisor", password=PASSWORD)
    wms.build("paused", age_minutes=30)
    wms.build("paused", reason="RECOVERY_JOB_MISMATCH", age_minutes=20)
    return wms


def is_refresh(request) -> bool:
    return "/paused/" in request.url and request.headers.get("hx-request") == "true"


@pytest.fixture
def paused_page(browser, live_server, floor):
    context = browser.new_context(**DESKTOP)
    page = context.new_page()
    problems = watch(page)
    page.goto(f"{live_server.url}/paused/?reason={REASON}")
    page.get_by_label("User name").fill("sven")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#paused-results tbody tr")).to_have_count(1)
    yield page, problems
    context.close()


def test_a_new_pause_appears_without_reloading_and_the_filters_stay(paused_page, floor, artifacts):
    page, problems = paused_page
    rows = page.locator("#paused-results tbody tr")
    page.evaluate("window.notReloaded = true")  # gone if the page were loaded again
    page.locator("#nav-q").focus()  # the keyboard is parked outside the live region

    new = floor.build("paused", age_minutes=1)
    with page.expect_response(lambda r: is_refresh(r.request) and r.status == 200, timeout=10_000):
        pass  # the refresh request itself, not a reload
    expect(rows).to_have_count(2, timeout=5_000)
    expect(rows.filter(has_text=f"#{new.workflow_id}")).to_have_count(1)
    assert page.evaluate("window.notReloaded") is True
    assert page.url.endswith(f"/paused/?reason={REASON}")
    expect(page.locator("#id_reason")).to_have_value(REASON)
    assert page.evaluate("document.activeElement.id") == "nav-q"
    page.screenshot(path=artifacts / "paused-live-refresh.png", full_page=True)
    assert problems == []


def test_the_refresh_holds_off_while_the_focus_is_inside_the_list(paused_page, floor):
    page, problems = paused_page
    search = page.locator("#id_q")
    search.focus()
    # Let a request that started before the focus moved finish, then listen.
    page.wait_for_timeout(300)
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if is_refresh(r) else None)
    new = floor.build("paused", age_minutes=1)
    started = time.monotonic()
    page.wait_for_timeout(1_600)  # more than one and a half refresh intervals
    assert time.monotonic() - started >= 1.5
    assert seen == [], "the list refreshed while the focus was inside it"
    assert page.evaluate("document.activeElement.id") == "id_q"
    expect(page.locator("#paused-results tbody tr")).to_have_count(1)

    page.locator("#nav-q").focus()  # leaving the list lets the next refresh through
    with page.expect_request(is_refresh, timeout=5_000):
        pass
    expect(page.locator("#paused-results tbody tr").filter(has_text=f"#{new.workflow_id}")).to_have_count(1)
    assert problems == []
