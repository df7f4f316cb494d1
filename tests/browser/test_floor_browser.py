"""The floor pages in a real browser, at desktop and phone width: the active list with its
stalled flag, filter and live refresh; the search box; a note added with htmx; the handover on
screen and in print. Any browser console error or page error fails the test."""

import re

import pytest
from django.db import connection
from playwright.sync_api import expect

from tests.browser.strict import sideways_overflow
from tests.console_personas import make_user

PASSWORD = "floor-browser-pw"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def make_stalled(built, minutes: int = 90) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - make_interval(mins => %s) WHERE job_id = %s",
                       [minutes, f"TDY-{built.workflow_id}-{built.step_ids[0]}"])


@pytest.fixture
def floor(wms, live_server, audit_truncate_allowed):
    make_user("lena", "shift lead", password=PASSWORD)
    built = {"stalled": wms.build("healthy", job_status=3), "moving": wms.build("healthy", job_status=2),
             "later": wms.build("healthy", job_status=1), "paused": wms.build("paused", age_minutes=120)}
    make_stalled(built["stalled"])
    return built


def watch(page) -> list[str]:
    """Every console error and uncaught page error, to assert none happened."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    return errors


def sign_in(page, base: str, path: str):
    page.goto(base + path)
    page.get_by_label("User name").fill("lena")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def no_sideways_scroll(page, width: int = 390) -> None:
    overflow = sideways_overflow(page, width)
    assert overflow <= 0, f"{page.url} scrolls sideways by {overflow}px on a phone"


def test_the_active_list_flags_filters_and_refreshes(page, live_server, floor, settings, artifacts):
    settings.CONSOLE_REFRESH_SECONDS = 1
    errors = watch(page)
    sign_in(page, live_server.url, "/")
    stalled_tile = page.locator("#tile-stalled")
    expect(stalled_tile.locator(".tile-value")).to_have_text("1")
    stalled_tile.click()
    expect(page).to_have_url(re.compile(r"/active/\?stalled=1$"))
    rows = page.locator("#active-results tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(f"#{floor['stalled'].workflow_id}")
    expect(rows.first.locator(".stalled-flag")).to_be_visible()

    page.get_by_label(re.compile("Stalled only")).uncheck()  # htmx swaps the list, the URL follows
    expect(rows).to_have_count(3)
    expect(page).not_to_have_url(re.compile(r"stalled=1"))
    page.screenshot(path=artifacts / "floor-active-desktop.png", full_page=True)

    page.get_by_label(re.compile("Stalled only")).check()
    expect(rows).to_have_count(1)
    # The list waits while the keyboard is inside it; leave it so the poll may replace it.
    page.evaluate("document.activeElement && document.activeElement.blur()")
    make_stalled(floor["later"], minutes=30)  # the next poll brings it, still filtered
    expect(rows).to_have_count(2, timeout=10_000)
    expect(page.get_by_label(re.compile("Stalled only"))).to_be_checked()
    assert errors == []


def test_a_scan_in_the_search_box_opens_the_workflow_and_a_note_is_added_in_place(page, live_server, floor,
                                                                                  artifacts):
    errors = watch(page)
    sign_in(page, live_server.url, "/active/")
    built = floor["moving"]
    page.get_by_label("Find a workflow by id, job id, tray or space").fill(built.moves[0].tray_code)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/workflows/{built.workflow_id}/$"))
    notes = page.locator("#notes")
    notes.get_by_label("Add a note").fill("Vehicle 3 fault, maintenance called.")
    notes.get_by_role("button", name="Add note").click()
    expect(page.locator("#notes .notes-list li")).to_have_count(1)
    expect(page.locator("#notes")).to_contain_text("Vehicle 3 fault, maintenance called.")
    expect(page).to_have_url(re.compile(rf"/workflows/{built.workflow_id}/$"))  # no reload, no redirect
    page.locator("#notes").scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "floor-workflow-notes.png")
    assert errors == []


def test_the_handover_on_screen_and_in_print(page, live_server, floor, artifacts):
    errors = watch(page)
    sign_in(page, live_server.url, "/handover/")
    expect(page.get_by_role("heading", name=re.compile("Shift handover"))).to_be_visible()
    expect(page.locator("#h-stalled")).to_contain_text("(1)")
    expect(page.locator("#h-open")).to_contain_text("(1)")
    page.screenshot(path=artifacts / "floor-handover-desktop.png", full_page=True)
    page.emulate_media(media="print")
    expect(page.locator(".topbar")).to_be_hidden()
    expect(page.locator(".handover-nav")).to_be_hidden()
    expect(page.locator("#h-stalled")).to_be_visible()
    page.screenshot(path=artifacts / "floor-handover-print.png", full_page=True)
    assert errors == []


@pytest.mark.parametrize("path", ["/active/", "/handover/", "/search/?q=NOPE"])
def test_the_floor_pages_fit_a_phone(browser, live_server, floor, artifacts, path):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    errors = watch(page)
    sign_in(page, live_server.url, path)
    expect(page.locator("main h1")).to_be_visible()
    expect(page.get_by_label("Find a workflow by id, job id, tray or space")).to_be_visible()
    name = path.strip("/").split("/")[0]
    page.screenshot(path=artifacts / f"floor-phone-{name}.png", full_page=True)
    no_sideways_scroll(page)
    assert errors == []
    context.close()


def test_the_active_list_and_search_work_without_javascript(browser, live_server, floor):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, live_server.url, "/active/")
    page.get_by_label(re.compile("Stalled only")).check()
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"stalled=1"))
    expect(page.locator("#active-results tbody tr")).to_have_count(1)
    page.get_by_label("Find a workflow by id, job id, tray or space").fill(f"TDY-{floor['paused'].workflow_id}-"
                                                                       f"{floor['paused'].step_ids[0]}")
    page.get_by_role("button", name="Find").click()
    expect(page).to_have_url(re.compile(rf"/workflows/{floor['paused'].workflow_id}/$"))
    context.close()
