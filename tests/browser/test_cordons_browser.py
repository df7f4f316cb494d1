"""Cordons and the processes page in a real browser, at desktop (1280×800) and phone (390×844)
width: a shift lead cordons an aisle with a reason and an end, sees it on the rack map, then lifts
it; an operator reads the recovery processes. Any console error, page error, failed request or
4xx/5xx response fails a test, and no page may scroll sideways on a phone."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from console.notifications.schedule import ensure_notification_schedule
from recovery.engine.places import aisle_of
from recovery.models import Cordon, CordonLift, ProcessHeartbeat, RecoveryCycle
from recovery.runtime.schedule import ensure_recovery_schedule
from tests.browser.strict import VIEWPORTS, assert_fits, watch
from tests.console_personas import make_user

PASSWORD = "cordon-browser-pw"


def signed_in(browser, live_server, viewport: str, username: str):
    context = browser.new_context(**VIEWPORTS[viewport])
    page = context.new_page()
    problems = watch(page)
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    return context, page, problems


def shot(page, artifacts, name: str, viewport: str) -> None:
    page.screenshot(path=artifacts / f"{name}-{viewport}.png", full_page=True)
    if viewport == "phone":
        assert_fits(page)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_shift_lead_cordons_an_aisle_and_lifts_it(wms, live_server, browser, artifacts, viewport,
                                                     audit_truncate_allowed):
    make_user("lena", "shift lead", password=PASSWORD)
    mv = wms.move()
    aisle = aisle_of(mv.source)
    context, page, problems = signed_in(browser, live_server, viewport, "lena")
    page.goto(f"{live_server.url}/cordons/")
    expect(page.get_by_role("heading", name="Cordons", exact=True)).to_be_visible()
    expect(page.get_by_text("No cordon is in force")).to_be_visible()
    page.get_by_label("An aisle").check()
    page.get_by_label("Aisle or space code").fill(aisle)
    page.get_by_label("Reason", exact=True).fill("Shuttle 2 maintenance until the afternoon")
    ends = timezone.localtime() + timedelta(hours=6)
    page.get_by_label("Ends (optional)").fill(ends.strftime("%Y-%m-%dT%H:%M"))
    shot(page, artifacts, "cordon-form", viewport)
    page.get_by_role("button", name="Cordon", exact=True).click()

    table = page.locator("#cordons-in-force")
    expect(table).to_contain_text("Shuttle 2 maintenance until the afternoon")
    expect(table).to_contain_text(aisle)
    shot(page, artifacts, "cordons-in-force", viewport)
    cordon = Cordon.objects.get()
    assert (cordon.scope, cordon.place, cordon.created_by) == ("AISLE", aisle, "lena") and cordon.ends_at

    page.goto(f"{live_server.url}/map/?aisle={aisle}")
    expect(page.locator(".rk-cordon")).to_contain_text(f"Aisle cordoned (#{cordon.pk})")
    expect(page.locator(".rk-legend")).to_contain_text("cordoned: no new tidy work")
    expect(page.locator(f"rect.cd[aria-label*='{mv.source}']")).to_have_count(1)
    shot(page, artifacts, "rack-map-cordoned", viewport)

    page.goto(f"{live_server.url}/cordons/")
    page.get_by_role("button", name=f"Lift cordon #{cordon.pk} on {aisle}").click()
    expect(page.get_by_text("No cordon is in force")).to_be_visible()
    expect(page.locator("#cordons-history")).to_contain_text("lifted by lena")
    shot(page, artifacts, "cordon-lifted", viewport)
    assert list(CordonLift.objects.values_list("cordon_id", "lifted_by")) == [(cordon.pk, "lena")]
    assert problems == [], "\n".join(problems)
    context.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_an_operator_reads_the_recovery_processes(transactional_db, live_server, browser, artifacts, viewport,
                                                  settings):
    make_user("olga", "operator", password=PASSWORD)
    settings.RECOVERY_SHARDS = 2
    now = timezone.now()
    ProcessHeartbeat.objects.create(worker="node-1:4711", cluster="node-1:cluster-4700", host="node-1",
                                    cluster_pid=4700, started_at=now - timedelta(hours=2),
                                    last_seen_at=now - timedelta(seconds=3), shards=[0, 1], shard_count=2)
    RecoveryCycle.objects.create(started_at=now - timedelta(seconds=4), finished_at=now - timedelta(seconds=3),
                                 outcome="SUCCEEDED", worker="node-1:4711", shard=1, shard_count=2, duration_ms=45)
    # The schedules with their long task paths, as a running console lists them.
    ensure_recovery_schedule(shards=2)
    ensure_notification_schedule()
    context, page, problems = signed_in(browser, live_server, viewport, "olga")
    page.goto(f"{live_server.url}/recovery/processes/")
    expect(page.get_by_role("heading", name="Recovery processes")).to_be_visible()
    expect(page.locator("#clusters")).to_contain_text("node-1")
    expect(page.locator("#clusters")).to_contain_text("4700")
    expect(page.locator("#shards")).to_contain_text("node-1:cluster-4700")
    expect(page.locator("#schedules")).to_contain_text("console.notifications.tasks.run_notifications")
    assert_fits(page)
    shot(page, artifacts, "recovery-processes", viewport)
    assert problems == [], "\n".join(problems)
    context.close()
