"""The paused list and the workflow page run the same queries at 2 and at 40 paused workflows,
whatever the filters, search and position; the workflow page's live fragment reads only what it
shows (docs/architecture.md, "Console pages")."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from console.readers.paused import PausedFilters, paused_workflows_page
from recovery.engine.cycle import run_cycle


def _queries(client, path, **headers) -> list[str]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(path, headers=headers)
    assert response.status_code == 200, (path, response.status_code)
    return [q["sql"] for q in ctx.captured_queries]


def _paused_paths(workflow_id: int) -> list[str]:
    middle = paused_workflows_page(filters=PausedFilters(), page_size=1).next_cursor.encode()
    return [
        "/paused/",
        "/paused/?reason=RECOVERY_JOB_MISSING&origin=AUTOMATIC&age=lt1h",
        "/paused/?sort=newest&reason=RECOVERY_JOB_MISMATCH",
        f"/paused/?q={workflow_id}",
        f"/paused/?after={middle}",
        f"/paused/?before={middle}&sort=newest",
    ]


@pytest.mark.usefixtures("committed_db")
def test_the_paused_list_runs_the_same_queries_at_any_size_and_filter(wms, supervisor_client):
    def build(n):
        for i in range(n):
            wms.build("job_missing", age_minutes=i)
            wms.build("active_mismatch", origin="MANUAL")
        run_cycle()

    def counts(first):
        return [(len(_queries(supervisor_client, p)), len(_queries(supervisor_client, p, HX_Request="true")))
                for p in _paused_paths(first.workflow_id)]

    first = wms.build("job_missing")
    build(1)
    small = counts(first)
    build(40)
    large = counts(first)
    assert large == small
    # Eight reads, and the statement timeout set for the page's transaction (console.database.timeouts).
    assert max(full for full, _ in large) <= 9


def test_the_workflow_live_fragment_reads_no_timeline_receipts_or_map(wms, supervisor_client):
    built = wms.build("job_missing")
    run_cycle()
    path = reverse("workflow-detail", args=[built.workflow_id])

    live = _queries(supervisor_client, path, HX_Request="true")
    history = _queries(supervisor_client, path, HX_Request="true", HX_Target="workflow-history")
    whole = _queries(supervisor_client, path)

    def touches(queries, table):
        return any(table in q for q in queries)

    # The ORM's quoted names: the evidence statement the live fragment needs reads some of the
    # same tables unquoted.
    for table in ('FROM "alg"."tidy_step"', 'FROM "public"."mydo_job_finish"', 'FROM "alg"."tidy_callback_event"',
                  'FROM "recovery_callbackreceipt"'):
        assert not touches(live, table), table
        assert touches(history, table) and touches(whole, table), table
    assert len(live) < len(history) < len(whole)


@pytest.mark.parametrize("target", ["workflow-live", "workflow-history"])
def test_each_workflow_fragment_runs_the_same_queries_for_a_small_and_a_big_workflow(wms, supervisor_client, target):
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
    counts = [len(_queries(supervisor_client, reverse("workflow-detail", args=[b.workflow_id]),
                           HX_Request="true", HX_Target=target)) for b in (small, big)]
    assert counts[0] == counts[1]
