"""The screenshots of the guides: the paused list and a workflow's evidence at desktop width, on the
demo's pauses, photographed into test-artifacts/ on every run and, with TIDY_UPDATE_DOC_IMAGES=1,
into docs/images/ too (paused-list.png, workflow-evidence.png; README and the user guide show them).
Each is clipped to what it shows and kept under MAX_BYTES, so the repository stays small. Any
console error, page error, failed request or 4xx/5xx response fails the test."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from recovery.demo.warehouse import EXPECTED
from recovery.engine.cycle import run_cycle
from tests.browser.strict import DESKTOP, watch
from tests.console_personas import make_user

PASSWORD = "doc-images-pw"
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
MAX_BYTES = 300_000
PAUSING_KINDS = sorted(kind for kind, (action, _) in EXPECTED.items() if action == "PAUSE")


@pytest.fixture
def demo(wms, live_server, audit_truncate_allowed):
    """One paused workflow of each kind the demo pauses, as the demo's first recovery cycle leaves them."""
    make_user("sam", "supervisor", password=PASSWORD)
    built = {kind: wms.build(kind) for kind in PAUSING_KINDS}
    run_cycle()
    return built


def publish(shot: Path) -> None:
    assert 0 < shot.stat().st_size < MAX_BYTES, f"{shot.name} is {shot.stat().st_size} bytes"
    if os.environ.get("TIDY_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOC_IMAGES / shot.name)


def test_it_photographs_the_paused_list_and_a_workflows_evidence(browser, live_server, demo, artifacts):
    context = browser.new_context(**DESKTOP)
    page = context.new_page()
    problems = watch(page)
    page.goto(f"{live_server.url}/paused/")
    page.get_by_label("User name").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    rows = page.locator("#paused-results tbody tr")
    expect(rows).to_have_count(len(PAUSING_KINDS))
    page.wait_for_load_state("load")
    # The frame and the list down to its last row: what a supervisor sees first.
    bottom = page.locator("#paused-results table").bounding_box()
    shot = artifacts / "paused-list.png"
    page.screenshot(path=shot, clip={"x": 0, "y": 0, "width": DESKTOP["viewport"]["width"],
                                     "height": bottom["y"] + bottom["height"] + 16}, full_page=True)
    publish(shot)

    page.goto(f"{live_server.url}/workflows/{demo['active_mismatch'].workflow_id}/")
    evidence = page.locator('section[aria-labelledby="evidence-h"]')
    expect(evidence.locator(".cards2")).to_be_visible()
    page.wait_for_load_state("load")
    shot = artifacts / "workflow-evidence.png"
    evidence.screenshot(path=shot)
    publish(shot)
    assert problems == []
    context.close()
