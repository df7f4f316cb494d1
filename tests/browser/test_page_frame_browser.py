"""The page frame: at desktop width the navigation is one row of three groups under the brand, the
search and the account, so the first screen is the page's own content; on a phone it wraps as
before and nothing scrolls sideways. Measured in Chromium, in English and in Chinese, as a shift
lead (who sees every link, Security included)."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from recovery.engine.cycle import run_cycle
from tests.browser.strict import sideways_overflow
from tests.console_personas import make_user

PASSWORD = "frame-test-password"
DESKTOP = {"width": 1280, "height": 800}
HEADER_MAX_PX = 120  # it was about 370 px at 1280 px with the links stacked in a column
NAV_ROW_MAX_PX = 44  # one row of links


@pytest.fixture
def workflow(wms, live_server):
    for name in ("supervisor", "operator", "shift lead"):
        Group.objects.get_or_create(name=name)
    make_user("lead", "shift lead", password=PASSWORD)
    built = wms.build("job_missing")
    run_cycle()
    return built


def sign_in(page, base: str, language: str):
    """Signed in as the shift lead, whose stored language (applied at sign-in) is `language`."""
    from django.contrib.auth import get_user_model

    from console.models import UserLanguage

    UserLanguage.objects.update_or_create(user=get_user_model().objects.get(username="lead"),
                                          defaults={"language": language})
    page.goto(base + "/accounts/login/")
    page.locator("#id_username").fill("lead")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page.locator("main h1")).to_be_visible()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_at_desktop_width_the_navigation_is_one_row_and_the_content_starts_on_the_first_screen(
        browser, live_server, workflow, artifacts, language):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    sign_in(page, live_server.url, language)
    for path in ("/", "/map/", f"/workflows/{workflow.workflow_id}/"):
        page.goto(live_server.url + path)
        expect(page.locator("main h1")).to_be_visible()
        header = page.locator("header.topbar").bounding_box()
        links = page.locator("nav.mainnav a")
        tops = {round(links.nth(i).bounding_box()["y"]) for i in range(links.count())}
        heading = page.locator("main h1").bounding_box()
        name = path.strip("/").replace("/", "-") or "dashboard"
        page.screenshot(path=artifacts / f"frame-desktop-{language}-{name}.png")
        assert links.count() == 13, "every navigation link of a shift lead is there"
        assert header["height"] <= HEADER_MAX_PX, f"{path}: the header is {header['height']:.0f} px tall"
        assert max(tops) - min(tops) <= NAV_ROW_MAX_PX - 20, f"{path}: the links wrap onto {len(tops)} rows"
        assert heading["y"] + heading["height"] < DESKTOP["height"] / 2, f"{path}: the page starts too low"
    context.close()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_the_navigation_wraps_and_nothing_scrolls_sideways(browser, live_server, workflow, artifacts,
                                                                        language):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    sign_in(page, live_server.url, language)
    for path in ("/", "/map/", f"/workflows/{workflow.workflow_id}/"):
        page.goto(live_server.url + path)
        expect(page.locator("main h1")).to_be_visible()
        for group in page.locator("nav.mainnav .navgroup").all():
            expect(group).to_be_visible()
        overflow = sideways_overflow(page, 390)
        name = path.strip("/").replace("/", "-") or "dashboard"
        page.screenshot(path=artifacts / f"frame-phone-{language}-{name}.png", full_page=True)
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px on a phone"
    context.close()
