"""/active/: every ACTIVE workflow with its job, the stalled flag and its boundary, filters,
keyset pages, the live refresh, the dashboard tile and /flow/'s link to the oldest job."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse

from console.floor.selectors import ActiveFilters, active_workflows_page
from console.readers import Cursor
from console.readers.stalled import active_counts, stalled_workflows

LIST = reverse("active-workflows")


def age_job(job_id: str, age: timedelta) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - %(age)s, created_at = now() - %(age)s - "
                       "interval '1 minute' WHERE job_id = %(j)s", {"age": age, "j": job_id})
        assert cursor.rowcount == 1


def job_of(built, index: int = 0) -> str:
    return f"TDY-{built.workflow_id}-{built.step_ids[index]}"


@pytest.fixture
def floor(wms):
    made = {}
    made["fresh"] = wms.build("healthy", job_status=1)
    made["under"] = wms.build("healthy", job_status=2)
    made["over"] = wms.build("healthy", job_status=3, origin="MANUAL")
    made["old"] = wms.build("healthy", job_status=2)
    made["no_job"] = wms.build("job_missing")  # ACTIVE, no job: never stalled
    made["bad_status"] = wms.build("active_bad_status")  # ACTIVE, job status outside 1-3
    age_job(job_of(made["under"]), timedelta(minutes=15) - timedelta(seconds=10))
    age_job(job_of(made["over"]), timedelta(minutes=15) + timedelta(seconds=10))
    age_job(job_of(made["old"]), timedelta(hours=5))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - interval '3 hours' WHERE job_id = %s",
                       [job_of(made["bad_status"])])
    made["paused"] = wms.build("paused")
    made["completed"] = wms.build("completed")
    return made


def ids(page):
    return [r.workflow_id for r in page.rows]


def test_it_flags_stalled_only_past_the_threshold(floor):
    stalled = {s.workflow_id for s in stalled_workflows()}
    assert stalled == {floor["over"].workflow_id, floor["old"].workflow_id}
    assert active_counts().stalled == 2
    rows = {r.workflow_id: r for r in active_workflows_page(filters=ActiveFilters()).rows}
    assert rows[floor["under"].workflow_id].stalled is False  # 14 min 50 s: just under
    assert rows[floor["over"].workflow_id].stalled is True  # 15 min 10 s: just over
    assert rows[floor["bad_status"].workflow_id].stalled is False
    assert rows[floor["no_job"].workflow_id].stalled is False


def test_it_honours_stalled_after_minutes(floor, settings):
    settings.STALLED_AFTER_MINUTES = 14
    assert floor["under"].workflow_id in {s.workflow_id for s in stalled_workflows()}
    settings.STALLED_AFTER_MINUTES = 6 * 60
    assert stalled_workflows() == []


def test_it_lists_every_active_workflow_longest_unchanged_first(floor):
    page = active_workflows_page(filters=ActiveFilters())
    f = floor
    active = {f[k].workflow_id for k in ("fresh", "under", "over", "old", "no_job", "bad_status")}
    assert set(ids(page)) == active and page.counts.active == 6
    assert ids(page)[0] == f["old"].workflow_id  # unchanged for 5 hours
    row = page.rows[0]
    assert (row.job_id, row.job_status, row.step_no, row.tray_code) == (
        job_of(f["old"]), 2, 1, f["old"].moves[0].tray_code)
    sinces = [r.since for r in page.rows]
    assert sinces == sorted(sinces)


def test_it_filters_stalled_and_origin(floor):
    assert set(ids(active_workflows_page(filters=ActiveFilters(stalled=True)))) == {
        floor["over"].workflow_id, floor["old"].workflow_id}
    assert ids(active_workflows_page(filters=ActiveFilters(stalled=True, origin="MANUAL"))) == [
        floor["over"].workflow_id]


def test_it_pages_with_the_paused_list_cursor(floor):
    everything = ids(active_workflows_page(filters=ActiveFilters()))
    first = active_workflows_page(filters=ActiveFilters(), page_size=4)
    assert ids(first) == everything[:4] and isinstance(first.next_cursor, Cursor)
    second = active_workflows_page(filters=ActiveFilters(after=first.next_cursor), page_size=4)
    assert ids(second) == everything[4:] and second.next_cursor is None
    back = active_workflows_page(filters=ActiveFilters(before=second.prev_cursor), page_size=4)
    assert ids(back) == everything[:4]


def test_it_shows_the_last_callback_heard(floor, wms):
    wms.event(floor["old"], 0, stage="MOVE_STARTED")
    rows = {r.workflow_id: r for r in active_workflows_page(filters=ActiveFilters()).rows}
    assert rows[floor["old"].workflow_id].last_callback_at is not None
    assert rows[floor["fresh"].workflow_id].last_callback_at is None


def test_the_page_lists_them_with_a_live_refresh_and_real_links(floor, supervisor_client):
    response = supervisor_client.get(LIST, {"stalled": "1"})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'href="/workflows/{floor["over"].workflow_id}/"' in html
    assert f'/workflows/{floor["fresh"].workflow_id}/"' not in html
    assert html.count('class="stalled-flag"') == 2
    assert re.search(r'id="active-results" hx-get="/active/\?stalled=1" hx-trigger="every 10s', html)
    assert job_of(floor["over"]) in html


def test_an_htmx_refresh_gets_only_the_fragment(floor, supervisor_client):
    response = supervisor_client.get(LIST, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="active-results"') and "<html" not in html


def test_a_bad_position_falls_back_to_the_first_page_with_a_message(floor, supervisor_client):
    response = supervisor_client.get(LIST, {"after": "nonsense", "stalled": "maybe"})
    assert response.status_code == 200
    assert "That list position is not valid" in response.content.decode()
    response = supervisor_client.get(LIST, {"after": "1-2\x00", "origin": "x" * 500})
    assert response.status_code == 200
    assert "Null characters are not allowed" in response.content.decode()


def test_the_dashboard_counts_stalled_and_links_the_filtered_list(floor, supervisor_client):
    html = supervisor_client.get(reverse("dashboard")).content.decode()
    tile = re.search(r'<a class="tile" href="/active/\?stalled=1" id="tile-stalled">.*?</a>', html, re.S).group(0)
    assert '<span class="tile-value hot">2</span>' in tile


def test_flow_health_links_the_oldest_job_to_its_workflow(floor, supervisor_client):
    html = supervisor_client.get(reverse("flow-health")).content.decode()
    oldest = floor["old"]
    assert f'id="oldest-job-workflow" href="/workflows/{oldest.workflow_id}/"' in html


def test_it_refuses_users_without_a_role_and_sends_anonymous_to_sign_in(floor, client, personas):
    assert client.get(LIST).status_code == 302
    client.force_login(personas["norole"])
    assert client.get(LIST).status_code == 403
    assert client.post(LIST).status_code == 405
