"""/search/: every status, by workflow id, job id, tray and space; a single match opens the
workflow; bad input is a 400 naming the field; the box is in every page's navigation."""

import pytest
from django.db import connection
from django.urls import reverse

from console.floor.selectors import search_workflows

SEARCH = reverse("search")


@pytest.fixture
def history(wms):
    made = {"active": wms.build("healthy"), "paused": wms.build("paused"), "completed": wms.build("completed")}
    # A cancelled workflow whose steps are finished and whose locks are gone.
    cancelled = wms.build("healthy")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_workflow SET status = 'CANCELLED' WHERE workflow_id = %s",
                       [cancelled.workflow_id])
        cursor.execute("UPDATE alg.tidy_step SET status = 'CANCELLED' WHERE workflow_id = %s",
                       [cancelled.workflow_id])
        cursor.execute("DELETE FROM alg.tidy_space_lock WHERE workflow_id = %s", [cancelled.workflow_id])
    made["cancelled"] = cancelled
    return made


def found(q: str) -> list[int]:
    return [h.workflow_id for h in search_workflows(q=q).hits]


@pytest.mark.parametrize("kind", ["active", "paused", "completed", "cancelled"])
def test_it_finds_every_status_by_id_job_tray_and_space(history, kind):
    built = history[kind]
    mv = built.moves[1]
    job = f"TDY-{built.workflow_id}-{built.step_ids[1]}"
    for q in (str(built.workflow_id), job, job.lower(), mv.tray_code, mv.source, mv.target):
        assert found(q) == [built.workflow_id], (kind, q)


def test_it_says_how_each_workflow_matched(history):
    built = history["paused"]
    (hit,) = search_workflows(q=built.moves[0].source).hits
    assert hit.matched == ("locked space", "source space") and hit.status == "PAUSED_RECOVERY"


def test_it_lists_every_workflow_a_space_has_seen_newest_first(history, wms):
    space = history["completed"].moves[0].source
    again = wms.workflow(moves=[wms.move()], step_statuses=["COMPLETED"], status="COMPLETED", lock=False)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_step SET target_cargo_space_id = %s WHERE workflow_id = %s",
                       [space, again.workflow_id])
    assert found(space) == [again.workflow_id, history["completed"].workflow_id]
    assert found("NO-SUCH-CODE") == [] and found("TDY-1-999999") == []


def test_a_scan_matching_one_workflow_opens_it(history, supervisor_client):
    built = history["completed"]
    response = supervisor_client.get(SEARCH, {"q": f"  {built.moves[0].tray_code} "})
    assert response.status_code == 302
    assert response["Location"] == reverse("workflow-detail", args=[built.workflow_id])


def test_several_matches_are_listed_with_their_status(history, wms, supervisor_client):
    tray = history["completed"].moves[0].tray_code
    other = wms.workflow(moves=[wms.move()], step_statuses=["DISPATCHED"])
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_step SET tray_code = %s WHERE workflow_id = %s", [tray, other.workflow_id])
    response = supervisor_client.get(SEARCH, {"q": tray})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'href="/workflows/{other.workflow_id}/"' in html
    assert f'href="/workflows/{history["completed"].workflow_id}/"' in html
    assert "status-completed" in html and "status-active" in html


def test_nothing_found_says_so(history, supervisor_client):
    response = supervisor_client.get(SEARCH, {"q": "NOPE"})
    assert response.status_code == 200 and "No workflow in any status matches" in response.content.decode()


@pytest.mark.parametrize("q", ["T0\x001", "x" * 101, "A01\x07", "tab\there", "line\nbreak"])
def test_bad_input_is_a_400_naming_the_field(history, supervisor_client, q):
    response = supervisor_client.get(SEARCH, {"q": q})
    assert response.status_code == 400
    assert "q: " in response.content.decode()


def test_the_search_box_is_in_the_navigation_of_every_page(history, supervisor_client):
    for name in ("dashboard", "paused-workflows", "active-workflows", "locks", "handover"):
        html = supervisor_client.get(reverse(name)).content.decode()
        assert '<form class="navsearch" role="search" method="get" action="/search/">' in html, name


def test_it_refuses_users_without_a_role(history, client, personas):
    assert client.get(SEARCH, {"q": "1"}).status_code == 302
    client.force_login(personas["norole"])
    response = client.get(SEARCH, {"q": str(history["active"].workflow_id)})
    assert response.status_code == 403
    html = response.content.decode()
    assert "navsearch" not in html and 'href="/paused/"' not in html


# --- pages: 20 a page, newest first, keyset by workflow id (design §16: cost independent of history)


def a_busy_space(wms, space: str, count: int) -> list[int]:
    """`count` completed workflows whose first step took a tray from `space`, oldest first."""
    ids = []
    for _ in range(count):
        built = wms.workflow(moves=[wms.move()], step_statuses=["COMPLETED"], status="COMPLETED", lock=False)
        ids.append(built.workflow_id)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_step SET cargo_space_id = %s WHERE workflow_id = ANY(%s)", [space, ids])
    return ids


def test_a_busy_space_is_shown_twenty_a_page_newest_first(history, wms, supervisor_client):
    ids = a_busy_space(wms, "BUSY-01", 45)
    newest = sorted(ids, reverse=True)
    first = search_workflows(q="BUSY-01")
    assert [h.workflow_id for h in first.hits] == newest[:20] and first.older == newest[19]
    second = search_workflows(q="BUSY-01", before=first.older)
    assert [h.workflow_id for h in second.hits] == newest[20:40] and second.older == newest[39]
    third = search_workflows(q="BUSY-01", before=second.older)
    assert [h.workflow_id for h in third.hits] == newest[40:] and third.older is None

    html = supervisor_client.get(SEARCH, {"q": "BUSY-01"}).content.decode()
    assert html.count('class="wf"') == 20
    assert "Showing 20 workflows matching “BUSY-01”, newest first." in html
    assert f'href="/search/?q=BUSY-01&amp;before={newest[19]}">Older results →</a>' in html
    html = supervisor_client.get(SEARCH, {"q": "BUSY-01", "before": str(newest[39])}).content.decode()
    assert html.count('class="wf"') == 5 and "Older results" not in html
    assert 'href="/search/?q=BUSY-01">Newest</a>' in html

    html = supervisor_client.get(SEARCH, {"q": "BUSY-01"}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "显示 20 个匹配“BUSY-01”的工作流，最新的在前。" in html and "更早的结果 →" in html


def test_an_older_page_of_one_workflow_lists_it_rather_than_opening_it(history, wms, supervisor_client):
    ids = a_busy_space(wms, "BUSY-02", 21)
    response = supervisor_client.get(SEARCH, {"q": "BUSY-02", "before": str(sorted(ids)[1])})
    assert response.status_code == 200 and response.content.decode().count('class="wf"') == 1


@pytest.mark.parametrize("before", ["abc", "-1", "0", "1.5", "９", "99999999999999999999", "1\x00", " 1"])
def test_a_hostile_position_is_a_400_naming_the_field(history, supervisor_client, before):
    response = supervisor_client.get(SEARCH, {"q": "BUSY-01", "before": before})
    assert response.status_code == 400
    assert "before: " in response.content.decode()

