"""The whole console walked in Simplified Chinese in a real browser, at desktop and phone width.

A shift lead whose stored language is zh-Hans signs in from a browser that asks for English: her
choice decides. Every console page is then read as the browser renders it: its visible text must
hold no English word (codes, ids and the data this test wrote aside, tests/visible_text.py), the
page must cause no console error or failed request, and on a phone it must not scroll sideways
(Chinese strings change widths). Every page is visited before the test fails, so one run names
every page that still shows English. Screenshots of each page go to test-artifacts/.
"""

import re
import shutil
import subprocess

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from console.models import UserLanguage
from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from recovery.engine.cycle import run_cycle
from tests.browser.strict import VIEWPORTS, sideways_overflow, watch
from tests.visible_text import english_left

PASSWORD = "zh-walk-browser-pw"
LEAD = "lena"
# Written by the test in Chinese, as the floor would: no data word of its own is English.
WRITTEN_REASON = "作业在重启时丢失，托盘仍在源货位上，已核对"
DATA_WORDS = {LEAD}


@pytest.fixture(scope="module", autouse=True)
def chinese_font():
    """Without a font with Chinese glyphs Chromium draws empty boxes: the screenshots say nothing
    and the widths measured on a phone are not those of real text."""
    fonts = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout if shutil.which(
        "fc-list") else ""
    if not fonts.strip():
        pytest.fail("no font with Chinese glyphs: run scripts/test (it installs Debian's fonts-wqy-microhei) "
                    "or `apt-get install fonts-wqy-microhei`", pytrace=False)


@pytest.fixture
def floor(repair_db, live_server, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    for role in ("supervisor", "operator", "shift lead"):
        Group.objects.get_or_create(name=role)
    lead = User.objects.create_user(LEAD, password=PASSWORD)
    lead.groups.add(Group.objects.get(name="shift lead"))
    UserLanguage.objects.create(user=lead, language="zh-hans")
    built = {"missing": repair_db.build("job_missing"), "mismatch": repair_db.build("active_mismatch")}
    repair_db.build("healthy")
    repair_db.stocked_tray()
    # An earlier, finished workflow that moved the same tray: searching the tray lists both.
    repair_db.workflow(moves=built["missing"].moves, step_statuses=["COMPLETED", "COMPLETED"], status="COMPLETED",
                       lock=False)
    run_cycle()
    evaluate_notifications()
    deliver_pending()
    return built


def _pages(floor) -> list[tuple[str, str]]:
    wid = floor["missing"].workflow_id
    tray = floor["missing"].moves[0].tray_code
    return [
        ("dashboard", "/"),
        ("paused", "/paused/"),
        ("active", "/active/"),
        ("workflow", f"/workflows/{wid}/"),
        ("locks", "/locks/"),
        ("reason-codes", "/reason-codes/"),
        ("search", f"/search/?q={tray}"),
        ("search-nothing", "/search/?q=T-NOWHERE-9"),
        ("handover", "/handover/"),
        ("recovery", "/recovery/"),
        ("recovery-observe", "/recovery/observe/"),
        ("recovery-preview", "/recovery/preview/"),
        ("case-file", f"/workflows/{wid}/case-file.html"),
        ("analytics", "/analytics/"),
        ("flow", "/flow/"),
        ("rack-map", "/map/"),
        ("cordons", "/cordons/"),
        ("recovery-processes", "/recovery/processes/"),
        ("notifications", "/notifications/"),
        ("thresholds", "/notifications/thresholds/"),
        ("security", "/security/"),
        ("repair-form", f"/repair/workflow/{wid}/reissue/"),
        ("repair-audit", "/repair/audit/"),
    ]


def _read(page, name: str, viewport: str, artifacts, found: dict, problems: list) -> None:
    """Record what the rendered page still says in English, and how far a phone scrolls sideways."""
    page.wait_for_load_state("load")
    assert page.locator("html").get_attribute("lang") == "zh-hans", f"{name} is not in zh-Hans"
    left = english_left(page.content(), allow=DATA_WORDS)
    if left:
        found[f"{name} ({viewport})"] = left
    if viewport == "phone":
        overflow = sideways_overflow(page, 390)
        if overflow > 0:
            found[f"{name} (phone) scrolls sideways by {overflow}px"] = []
    page.screenshot(path=artifacts / f"zh-Hans-{name}-{viewport}.png", full_page=True)
    if problems:
        found[f"{name} ({viewport}) browser problems"] = list(problems)
        problems.clear()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.slow
def test_the_whole_console_speaks_chinese(browser, live_server, floor, artifacts, viewport):
    # The browser asks for English: the stored choice must still decide.
    context = browser.new_context(**VIEWPORTS[viewport], locale="en-US")
    page = context.new_page()
    problems = watch(page)
    found: dict[str, list[str]] = {}

    page.goto(live_server.url + "/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    page.fill("#id_username", LEAD)
    page.fill("#id_password", PASSWORD)
    page.locator("form[method=post] button[type=submit]").last.click()
    expect(page.locator("h1")).to_have_text("总览")

    for name, path in _pages(floor):
        page.goto(live_server.url + path)
        if name == "search":
            assert page.locator("h1").count() == 1 and "/search/" in page.url, "the tray names two workflows"
        _read(page, name, viewport, artifacts, found, problems)
        if name == "repair-form":
            # The preview of a re-issue: a reason code, a written reason and the codes read on the
            # floor (the tray at its source), posted by the form.
            page.locator("#id_reason_code").select_option(index=1)
            page.fill("#id_reason_text", WRITTEN_REASON)
            page.fill("#id_tray_code", floor["missing"].moves[0].tray_code)
            page.fill("#id_space_code", floor["missing"].moves[0].source)
            page.locator("form.repair-form button[type=submit]").click()
            page.wait_for_url(re.compile(r"/preview$"))
            expect(page.locator("#preview-summary")).to_be_visible()
            _read(page, "repair-preview", viewport, artifacts, found, problems)

    # Signed out, the device keeps her language: the sign-in page speaks Chinese too.
    # Signing out lands on the sign-in page; wait for it rather than cut that navigation short.
    with page.expect_navigation(url=re.compile(r"/accounts/login/$")):
        page.locator("form.signout button[type=submit]").click()
    _read(page, "sign-in", viewport, artifacts, found, problems)
    context.close()

    report = "\n".join(f"{where}: {left}" for where, left in found.items())
    assert found == {}, f"English left or a layout problem on: {', '.join(found)}\n{report}"
