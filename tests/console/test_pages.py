"""Every console page: sign-in required, roles, htmx fragment versus whole page, bounded queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from recovery.engine.cycle import run_cycle

# (url name, kwargs-builder, fragment id)
PAGES = [
    ("dashboard", "dashboard-live"),
    ("paused-workflows", "paused-results"),
    ("workflow-detail", "workflow-live"),
    ("locks", "locks-results"),
    ("reason-codes", "reason-catalog"),
    ("recovery-health", "recovery-live"),
    ("flow-health", "flow-live"),
]


@pytest.fixture
def paused(wms):
    built = wms.build("job_missing")
    wms.build("active_mismatch")
    wms.build("healthy")
    run_cycle()
    return built


def url(name, built):
    return reverse(name, args=[built.workflow_id]) if name == "workflow-detail" else reverse(name)


@pytest.mark.parametrize("name,fragment", PAGES)
def test_it_sends_anonymous_users_to_sign_in(client, paused, name, fragment):
    response = client.get(url(name, paused))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("name,fragment", PAGES)
def test_it_sends_an_expired_htmx_refresh_to_sign_in_in_the_whole_window(client, paused, name, fragment):
    response = client.get(url(name, paused), {"reason": "X"}, headers={
        "HX-Request": "true", "HX-Current-URL": "http://testserver/paused/?reason=X"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/accounts/login/?next=%2Fpaused%2F%3Freason%3DX"
    assert response.content == b""


@pytest.mark.parametrize("name,fragment", PAGES)
def test_it_refuses_a_signed_in_user_without_a_role(client, personas, paused, name, fragment):
    client.force_login(personas["norole"])
    response = client.get(url(name, paused))
    assert response.status_code == 403
    assert b"no console role" in response.content


@pytest.mark.parametrize("name,fragment", PAGES)
@pytest.mark.parametrize("who", ["supervisor", "operator", "shiftlead"])
def test_it_shows_every_page_to_every_role(client, personas, paused, name, fragment, who):
    client.force_login(personas[who])
    response = client.get(url(name, paused))
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" in body and f'id="{fragment}"' in body
    assert 'aria-current="page"' in body


@pytest.mark.parametrize("name,fragment", PAGES)
def test_it_answers_htmx_with_the_fragment_only(supervisor_client, paused, name, fragment):
    response = supervisor_client.get(url(name, paused), headers={"HX-Request": "true"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" not in body and "<nav aria-label=\"Main\"" not in body
    assert body.lstrip().startswith(f'<section id="{fragment}"') or body.lstrip().startswith(f'<div id="{fragment}"')


@pytest.mark.parametrize("name,fragment", PAGES)
def test_it_answers_a_history_restore_with_the_whole_page(supervisor_client, paused, name, fragment):
    response = supervisor_client.get(url(name, paused), headers={
        "HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<html" in response.content.decode()


def test_it_renders_the_fragment_the_htmx_target_names(supervisor_client, paused):
    response = supervisor_client.get(url("workflow-detail", paused), headers={
        "HX-Request": "true", "HX-Target": "workflow-history"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="workflow-history"')
    assert "Decision journal" in body and "Evidence: expected versus observed" not in body


def test_it_answers_404_for_an_unknown_workflow(supervisor_client, paused):
    response = supervisor_client.get(reverse("workflow-detail", args=[999999]))
    assert response.status_code == 404
    assert b"Workflow 999999 does not exist" in response.content


def _count_queries(client, path, **headers) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(path, headers=headers)
    assert response.status_code == 200
    return len(ctx.captured_queries)


LIST_PAGES = ["dashboard", "paused-workflows", "locks", "recovery-health", "flow-health", "reason-codes"]


@pytest.mark.parametrize("name", LIST_PAGES)
@pytest.mark.usefixtures("committed_db")
def test_it_runs_the_same_few_queries_whatever_the_row_count(wms, supervisor_client, name):
    def build(n):
        for i in range(n):
            wms.build("job_missing", age_minutes=i)
            wms.build("active_mismatch", origin="MANUAL")
        run_cycle()

    build(2)
    small = _count_queries(supervisor_client, reverse(name))
    small_fragment = _count_queries(supervisor_client, reverse(name), HX_Request="true")
    build(40)
    large = _count_queries(supervisor_client, reverse(name))
    large_fragment = _count_queries(supervisor_client, reverse(name), HX_Request="true")
    assert (large, large_fragment) == (small, small_fragment)
    # Fifteen reads, and the statement timeout set for the page's transaction (console.database.timeouts).
    assert large <= 16


def test_it_runs_the_same_queries_for_a_small_and_a_big_workflow(wms, supervisor_client):
    def workflow(steps: int):
        done = steps // 2
        built = wms.workflow(moves=[wms.move() for _ in range(steps)],
                             step_statuses=["COMPLETED"] * done + ["DISPATCHED"] + ["PENDING"] * (steps - done - 1))
        for i in range(done):
            wms.job(built, i, status=4, finished=True)
            wms.event(built, i)
        return built

    small, big = workflow(2), workflow(12)
    run_cycle()
    counts = [_count_queries(supervisor_client, reverse("workflow-detail", args=[b.workflow_id])) for b in (small, big)]
    assert counts[0] == counts[1] <= 25
