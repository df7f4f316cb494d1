"""/help/ in a real browser: the user guide of docs/ (the real one, in English and in zh-Hans) at
desktop and phone width, with no browser-console error (the Content Security Policy included), no
request failing, every image loaded, and nothing scrolling sideways: wide tables and code scroll in
their own box. A pause reason's runbook link lands on its section."""

import pytest
from playwright.sync_api import expect

from recovery.engine.decisions import Reason
from tests.browser.strict import VIEWPORTS, sideways_overflow, watch
from tests.console_personas import make_user

PASSWORD = "help-browser-pw"


@pytest.fixture
def reader(live_server):
    make_user("hana", "operator", password=PASSWORD)
    return live_server


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_the_user_guide_reads_well_in_each_language_and_width(browser, reader, artifacts, language, viewport):
    context = browser.new_context(**VIEWPORTS[viewport], locale="zh-CN" if language == "zh-hans" else "en-US")
    page = context.new_page()
    problems = watch(page)
    page.goto(f"{reader.url}/help/")
    page.locator("#id_username").fill("hana")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    guide = page.locator("article.guide")
    expect(guide).to_have_attribute("lang", language)
    expect(guide.locator("h1").first).to_be_visible()
    expect(page.locator('nav.mainnav a[aria-current="page"]')).to_have_attribute("href", "/help/")
    page.wait_for_load_state("load")
    broken = page.evaluate("[...document.querySelectorAll('article.guide img')]"
                           ".filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    assert broken == []
    width = VIEWPORTS[viewport]["viewport"]["width"]
    assert sideways_overflow(page, width) <= 0
    page.screenshot(path=artifacts / f"help-{viewport}-{language}.png", full_page=True)

    # The runbook link of a pause reason (console_tags.guide_section_url) opens its section.
    reason = Reason.JOB_MISSING.value
    page.goto(f"{reader.url}/help/#{reason.lower()}")
    section = page.locator(f'article.guide h3[id="{reason.lower()}"]')
    expect(section).to_have_text(reason)
    expect(section).to_be_in_viewport()
    assert sideways_overflow(page, width) <= 0
    assert problems == []
    context.close()
