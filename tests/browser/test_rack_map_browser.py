"""The rack map in a real browser, at desktop and phone width: a paused workflow's spaces are
marked (the stylesheet really paints them), a click opens the workflow, whose page shows its
aisle; on a phone the map scrolls inside its frame and the page does not scroll sideways.
Any browser console error, page error or failed request fails the test."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.strict import sideways_overflow
from tests.console_personas import make_user

PASSWORD = "rack-map-browser-pw"
PAUSED_RED = "rgb(164, 22, 26)"  # .rk rect.p.o in static/console/rack-map.css


@pytest.fixture
def floor(wms, live_server):
    from django.db import connection

    make_user("sup", "supervisor", password=PASSWORD)
    paused = wms.build("paused")
    wms.build("healthy")
    wms.stocked_tray()
    with connection.cursor() as cursor:  # a long aisle: wider than a phone
        cursor.execute("""INSERT INTO bas_cargo_space (cargo_space_id, tray_code)
                          SELECT format('W01-%s-%s', l, p), CASE WHEN mod(p, 3) = 0 THEN 'TW' || l || '-' || p END
                          FROM generate_series(1, 4) l, generate_series(1, 60) p""")
        cursor.execute("INSERT INTO bas_cargo_space (cargo_space_id) VALUES ('DOCK-1')")
    return paused


@pytest.fixture
def clean_browser():
    """Attach to a page: collects console errors, page errors, failed and 4xx/5xx requests."""
    problems = []

    def watch(page):
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status}: {r.url}"))
        return page

    yield watch
    assert not problems, problems


def sign_in(page, base: str, path: str):
    page.goto(base + path)
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    page.get_by_label("User name").fill("sup")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_a_supervisor_sees_the_paused_workflow_on_the_map_and_opens_it(browser, live_server, floor, artifacts,
                                                                        clean_browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = clean_browser(context.new_page())
    sign_in(page, live_server.url, "/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Rack map").click()
    expect(page.get_by_role("heading", name="Rack map", level=1)).to_be_visible()
    expect(page.locator("svg.rk[aria-label]")).to_have_count(2)  # aisles A01 and W01

    move = floor.moves[0]
    source = page.locator(f'a[aria-label^="{move.source} · "]')
    target = page.locator(f'a[aria-label^="{move.target} · "]')
    expect(source).to_have_attribute("aria-label", re.compile(f"locked by paused workflow #{floor.workflow_id}"))
    expect(source.locator("rect")).to_have_class("p o")
    expect(target.locator("rect")).to_have_class("p")
    # The stylesheet sizes and paints the rects (no inline styles on the page).
    box = source.locator("rect").bounding_box()
    assert box and box["width"] >= 11 and box["height"] >= 11, box
    assert source.locator("rect").evaluate("e => getComputedStyle(e).fill") == PAUSED_RED
    expect(page.locator(f'svg.rk path.ar:has(title:text("workflow #{floor.workflow_id} step 1"))')).to_have_count(1)
    expect(page.locator("#rk-unmatched")).to_contain_text("DOCK-1")
    # Screen readers reach each locked space as a link named by its label.
    label = f"{move.source} · tray {move.tray_code} · locked by paused workflow #{floor.workflow_id}"
    expect(page.get_by_role("group", name="A01").get_by_role("link", name=label, exact=True)).to_have_count(1)
    source.focus()
    expect(source).to_be_focused()
    # Focus and hover show the space's label in the status line (the tooltip never shows on focus).
    expect(page.locator("#rk-status")).to_have_text(label)
    page.locator('svg.rk[aria-label="W01"] rect.o', has=page.locator("title", has_text="W01-4-3 ·")).hover()
    expect(page.locator("#rk-status")).to_have_text(re.compile(r"^W01-4-3 · tray TW4-3 · not locked$"))
    page.screenshot(path=artifacts / "rack-map-desktop.png", full_page=True)

    source.click()
    expect(page).to_have_url(re.compile(rf"/workflows/{floor.workflow_id}/$"))
    mini = page.locator("#rack-mini svg.rk")
    expect(mini).to_have_count(1)
    expect(mini.locator("rect.hs")).to_have_count(1)
    expect(mini.locator("rect.ht")).to_have_count(1)
    page.locator("#rack-mini").scroll_into_view_if_needed()
    page.locator("#rack-mini").screenshot(path=artifacts / "rack-map-workflow-mini.png")

    page.get_by_role("link", name="Open the rack map").click()
    expect(page).to_have_url(re.compile(r"/map/\?aisle=A01$"))
    page.get_by_role("link", name="Show the same spaces as a table (text alternative)").click()
    expect(page.locator("table.rk-table tbody tr")).to_have_count(2 * 4 + 1)  # two 2-move workflows, a tray
    expect(page.locator("table.rk-table")).to_contain_text(move.source)
    context.close()


def test_on_a_phone_the_map_scrolls_in_its_frame_and_a_tap_opens_the_workflow(browser, live_server, floor, artifacts,
                                                                               clean_browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = clean_browser(context.new_page())
    sign_in(page, live_server.url, "/map/")
    expect(page.get_by_role("heading", name="Rack map", level=1)).to_be_visible()
    overflow = sideways_overflow(page, 390)
    page.screenshot(path=artifacts / "rack-map-phone.png", full_page=True)
    assert overflow <= 0, f"/map/ scrolls sideways by {overflow}px on a phone"
    wide = page.locator("section.rk-aisle", has=page.locator("#aisle-W01")).locator(".rk-frame")
    assert wide.evaluate("e => e.scrollWidth > e.clientWidth")  # the long aisle scrolls inside its frame

    source = page.locator(f'a[aria-label^="{floor.moves[0].source} · "]')
    expect(source.locator("rect")).to_have_class("p o")
    source.locator("rect").tap()
    expect(page).to_have_url(re.compile(rf"/workflows/{floor.workflow_id}/$"))
    expect(page.locator("#rack-mini svg.rk")).to_have_count(1)
    overflow = sideways_overflow(page, 390)
    assert overflow <= 0, f"the workflow page scrolls sideways by {overflow}px on a phone"
    context.close()
