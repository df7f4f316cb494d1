"""The paused list: filters, search, facet counts, keyset pages, live refresh, bad input."""

import re

import pytest
from django.urls import reverse

from console.readers import Cursor
from console.readers.paused import PausedFilters, paused_workflows_page
from recovery.engine.decisions import PAUSE_REASONS

LIST = reverse("paused-workflows")


@pytest.fixture
def warehouse(wms):
    """Paused workflows of every reason, both origins and several ages, plus bystanders."""
    made = {}
    made["missing_old"] = wms.build("paused", reason="RECOVERY_JOB_MISSING", age_minutes=30 * 60)
    made["missing_new"] = wms.build("paused", reason="RECOVERY_JOB_MISSING", age_minutes=10, origin="MANUAL")
    made["mismatch"] = wms.build("paused", reason="RECOVERY_JOB_MISMATCH", age_minutes=3 * 60)
    made["finish"] = wms.build("paused", reason="RECOVERY_FINISH_EVIDENCE_INVALID", age_minutes=12 * 60,
                               origin="MANUAL")
    made["active_ev"] = wms.build("paused", reason="RECOVERY_ACTIVE_EVIDENCE_INVALID", age_minutes=20)
    wms.build("healthy")
    wms.build("completed")
    return made


def ids(page):
    return [r.workflow_id for r in page.rows]


def test_it_lists_only_paused_workflows_oldest_first(warehouse):
    page = paused_workflows_page(filters=PausedFilters())
    w = warehouse
    assert ids(page) == [w[k].workflow_id for k in ("missing_old", "finish", "mismatch", "active_ev", "missing_new")]
    assert page.total_matching == page.total_paused == 5
    row = page.rows[0]
    assert (row.lock_count, row.step_no, row.tray_code) == (4, 1, w["missing_old"].moves[0].tray_code)


def test_it_sorts_newest_first(warehouse):
    page = paused_workflows_page(filters=PausedFilters(sort="newest"))
    assert ids(page)[0] == warehouse["missing_new"].workflow_id


@pytest.mark.parametrize("filters,expected", [
    (PausedFilters(reason="RECOVERY_JOB_MISSING"), {"missing_old", "missing_new"}),
    (PausedFilters(origin="MANUAL"), {"missing_new", "finish"}),
    (PausedFilters(age="lt1h"), {"missing_new", "active_ev"}),
    (PausedFilters(age="1h-8h"), {"mismatch"}),
    (PausedFilters(age="8h-24h"), {"finish"}),
    (PausedFilters(age="gt24h"), {"missing_old"}),
    (PausedFilters(reason="RECOVERY_JOB_MISSING", origin="MANUAL"), {"missing_new"}),
    (PausedFilters(reason="RECOVERY_JOB_MISMATCH", origin="MANUAL"), set()),
])
def test_it_filters_by_reason_origin_and_age(warehouse, filters, expected):
    page = paused_workflows_page(filters=filters)
    assert set(ids(page)) == {warehouse[k].workflow_id for k in expected}
    assert page.total_matching == len(expected)


def test_it_searches_by_workflow_id_tray_and_space(warehouse):
    built = warehouse["mismatch"]
    mv = built.moves[1]
    for q in (str(built.workflow_id), mv.tray_code, mv.source, mv.target):
        assert ids(paused_workflows_page(filters=PausedFilters(q=q))) == [built.workflow_id], q
    assert ids(paused_workflows_page(filters=PausedFilters(q="NO-SUCH-TRAY"))) == []


def test_it_counts_each_facet_under_the_other_facets_selections(warehouse):
    page = paused_workflows_page(filters=PausedFilters(origin="MANUAL", reason="RECOVERY_JOB_MISSING"))
    reason = {f.value: f.count for f in page.facets["reason"]}
    origin = {f.value: f.count for f in page.facets["origin"]}
    # reason counts among MANUAL; origin counts among JOB_MISSING
    assert reason == {**{r.value: 0 for r in PAUSE_REASONS},  # every pause reason is offered, 0 included
                      "RECOVERY_JOB_MISSING": 1, "RECOVERY_FINISH_EVIDENCE_INVALID": 1}
    assert origin == {"AUTOMATIC": 1, "MANUAL": 1}
    assert [f.value for f in page.facets["reason"] if f.selected] == ["RECOVERY_JOB_MISSING"]


@pytest.mark.parametrize("sort", ["oldest", "newest"])
def test_it_walks_every_row_once_with_keyset_pages_both_ways(wms, sort):
    made = [wms.build("paused", age_minutes=m).workflow_id for m in (5, 5, 5, 9, 1, 7, 7, 3)]
    forward, cursor = [], None
    pages = []
    while True:
        page = paused_workflows_page(filters=PausedFilters(sort=sort, after=cursor), page_size=3)
        pages.append(page)
        forward += ids(page)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sorted(forward) == sorted(made) and len(forward) == len(made)
    assert [len(p.rows) for p in pages] == [3, 3, 2]
    assert pages[0].prev_cursor is None

    # back from the last page with `before`
    back = paused_workflows_page(filters=PausedFilters(sort=sort, before=pages[-1].prev_cursor), page_size=3)
    assert ids(back) == ids(pages[1])
    back = paused_workflows_page(filters=PausedFilters(sort=sort, before=back.prev_cursor), page_size=3)
    assert ids(back) == ids(pages[0]) and back.prev_cursor is None


def test_it_keeps_filters_and_position_in_the_live_refresh_url(supervisor_client, wms):
    for m in range(60):
        wms.build("paused", reason="RECOVERY_JOB_MISSING", age_minutes=m)
    first = supervisor_client.get(LIST, {"reason": "RECOVERY_JOB_MISSING"}).content.decode()
    next_href = re.search(r'rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    assert "reason=RECOVERY_JOB_MISSING" in next_href and "after=" in next_href

    second = supervisor_client.get(next_href, headers={"HX-Request": "true"}).content.decode()
    poll = re.search(r'<section id="paused-results" hx-get="([^"]+)"', second).group(1).replace("&amp;", "&")
    assert poll == next_href  # the refresh asks for this very page with these filters
    assert 'hx-trigger="every 10s' in second
    assert second.count('class="wf"') == 10  # 60 rows, 50 per page


def test_it_works_without_javascript_through_plain_links_and_forms(supervisor_client, warehouse):
    body = supervisor_client.get(LIST).content.decode()
    assert '<form id="paused-filters" class="filters card" method="get" action="/paused/"' in body
    assert re.search(r'<a class="chip" href="/paused/\?reason=RECOVERY_JOB_MISSING"', body)
    filtered = supervisor_client.get(LIST, {"reason": "RECOVERY_JOB_MISSING", "origin": "MANUAL"}).content.decode()
    assert filtered.count('class="wf"') == 1
    assert f'#{warehouse["missing_new"].workflow_id}</a>' in filtered


def test_it_explains_bad_input_and_shows_the_first_page(supervisor_client, warehouse):
    response = supervisor_client.get(LIST, {"after": "garbage", "age": "forever", "q": "x" * 101})
    body = response.content.decode()
    assert response.status_code == 200
    assert "That list position is not valid; showing the first page." in body
    assert "age: Select a valid choice. forever is not one of the available choices." in body
    assert "q: Ensure this value has at most 100 characters (it has 101)." in body
    assert body.count('class="wf"') == 5


def test_it_filters_by_a_reason_the_catalog_does_not_know(supervisor_client, wms):
    odd = wms.build("paused", reason="LEGACY_HAND_PAUSED")
    wms.build("paused")
    body = supervisor_client.get(LIST, {"reason": "LEGACY_HAND_PAUSED"}).content.decode()
    assert body.count('class="wf"') == 1 and f"#{odd.workflow_id}</a>" in body
    assert "LEGACY_HAND_PAUSED</span> <span class=\"count\">1</span>" in body


def test_it_says_what_an_empty_list_means(supervisor_client, wms):
    wms.build("healthy")
    body = supervisor_client.get(LIST).content.decode()
    assert "No workflow is paused: recovery has nothing waiting for an operator." in body
    body = supervisor_client.get(LIST, {"q": "T99999"}).content.decode()
    assert "No paused workflow matches these filters" in body


def test_it_links_every_reason_to_the_catalog(supervisor_client, warehouse):
    body = supervisor_client.get(LIST).content.decode()
    assert body.count('href="/reason-codes/#RECOVERY_JOB_MISSING"') == 2


def test_cursor_round_trips_exactly():
    from datetime import UTC, datetime

    c = Cursor(datetime(2026, 12, 1, 3, 4, 5, 123456, tzinfo=UTC), 42)
    assert Cursor.decode(c.encode()) == c
    with pytest.raises(ValueError):
        Cursor.decode("12-x")


def test_it_offers_operators_a_batch_re_check_of_the_filtered_list_and_supervisors_none(wms, client):
    from django.contrib.auth.models import Group, User

    wms.build("paused", reason="RECOVERY_JOB_MISSING")
    for name, role in (("op-batch", "operator"), ("sup-batch", "supervisor")):
        user = User.objects.create_user(name, password="pw-for-tests")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    client.login(username="op-batch", password="pw-for-tests")
    page = client.get("/paused/?reason=RECOVERY_JOB_MISSING").content.decode()
    assert 'href="/repair/batch/?reason=RECOVERY_JOB_MISSING"' in page
    assert 'href="/repair/audit/"' in page
    client.logout()
    client.login(username="sup-batch", password="pw-for-tests")
    page = client.get("/paused/?reason=RECOVERY_JOB_MISSING").content.decode()
    assert "/repair/batch/" not in page
    assert 'href="/repair/audit/"' in page
