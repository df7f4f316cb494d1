"""Dashboard, recovery and flow health: counts, the stale-schedule warning, queue sizing."""

from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from console.readers.flow import flow_health
from console.readers.recovery import recovery_health
from console.workflows.selectors import dashboard_counts
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def test_it_counts_active_paused_per_reason_and_completed_today(wms):
    wms.build("healthy")
    wms.build("job_missing")
    wms.build("job_missing")
    wms.build("active_mismatch")
    wms.build("all_completed")
    wms.build("completed")
    run_cycle()
    counts = dashboard_counts()
    assert (counts.active, counts.paused, counts.completed_today) == (1, 3, 2)
    assert counts.paused_by_reason == {"RECOVERY_JOB_MISMATCH": 1, "RECOVERY_JOB_MISSING": 2}
    assert counts.retained_locks == 12
    assert timezone.now() - counts.oldest_paused_since < timedelta(minutes=1)


def test_it_does_not_count_workflows_completed_before_midnight(wms):
    built = wms.build("completed")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_workflow SET completed_at = now() - interval '2 days', "
                       "updated_at = now() - interval '2 days' WHERE workflow_id = %s", [built.workflow_id])
    assert dashboard_counts().completed_today == 0


def _cycle(age_seconds: float, outcome="SUCCEEDED", **kw) -> RecoveryCycle:
    finished = timezone.now() - timedelta(seconds=age_seconds)
    return RecoveryCycle.objects.create(started_at=finished - timedelta(milliseconds=40), finished_at=finished,
                                        outcome=outcome, duration_ms=40, **kw)


@pytest.mark.parametrize("age,stale", [(5, False), (29, False), (31, True), (600, True)])
def test_it_is_stale_after_the_configured_intervals(transactional_db, settings, age, stale):
    settings.RECOVERY_INTERVAL_SECONDS = 10
    settings.RECOVERY_STALE_AFTER_INTERVALS = 3
    _cycle(age)
    assert recovery_health().stale is stale


def test_it_is_stale_when_no_cycle_ever_succeeded(transactional_db):
    _cycle(1, outcome="FAILED", error_text="evidence query failed: boom")
    health = recovery_health()
    assert health.stale and health.latest_failed


@pytest.mark.parametrize("name", ["dashboard", "paused-workflows", "recovery-health"])
def test_it_warns_unmistakably_when_the_schedule_is_stale(supervisor_client, wms, name):
    _cycle(3600)
    body = supervisor_client.get(reverse(name)).content.decode()
    assert '<div class="banner stale" role="alert">' in body and "Recovery is stale." in body

    _cycle(1)
    body = supervisor_client.get(reverse(name)).content.decode()
    assert "Recovery is stale." not in body


def test_it_shows_recent_cycles_with_decisions_and_a_chart(supervisor_client, wms):
    wms.build("job_missing")
    run_cycle()
    run_cycle()
    body = supervisor_client.get(reverse("recovery-health")).content.decode()
    assert body.count('<tr class="">') == 2
    assert "PAUSE 1" in body
    assert 'href="/reason-codes/#RECOVERY_JOB_MISSING"' in body
    assert body.count("<polyline") == 2 and 'role="img"' in body


def test_it_says_so_when_no_cycle_has_run(supervisor_client, wms):
    body = supervisor_client.get(reverse("recovery-health")).content.decode()
    assert "No recovery cycle has run yet." in body
    assert "No recovery cycle has succeeded yet." in body


def _jobs(n: int, *, created_min_ago: float, finished_min_ago: float | None = None, prefix="J"):
    with connection.cursor() as cursor:
        for i in range(n):
            params = {"j": f"{prefix}-{created_min_ago}-{i}", "c": created_min_ago, "f": finished_min_ago}
            if finished_min_ago is None:
                cursor.execute("INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, "
                               "target_cargo_space_id, created_at) VALUES (%(j)s, 28, 2, 'T', 'S', 'G', "
                               "now() - make_interval(secs => %(c)s * 60))", params)
            else:
                cursor.execute("INSERT INTO mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, "
                               "target_cargo_space_id, created_at, finished_at) VALUES (%(j)s, 28, 4, 'T', 'S', "
                               "'G', now() - make_interval(secs => %(c)s * 60), "
                               "now() - make_interval(secs => %(f)s * 60))", params)


def test_it_projects_the_time_to_drain_the_backlog(wms):
    # a queue-sizing budget scaled to one hour: 60 arrivals, 120 completions -> net 1/min
    _jobs(30, created_min_ago=90)  # backlog from before the window: the oldest job is 90 min old
    _jobs(60, created_min_ago=30)  # arrived in the last hour, still active
    _jobs(120, created_min_ago=120, finished_min_ago=20)  # finished in the window, arrived before it
    with connection.cursor() as cursor:  # not a tidy move: ignored
        cursor.execute("INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, "
                       "target_cargo_space_id) VALUES ('OUT-1', 1, 2, 'T', 'S', 'G')")
    flow = flow_health()
    assert (flow.backlog, flow.arrivals, flow.completions) == (90, 60, 120)
    assert flow.arrival_rate == 1.0 and flow.completion_rate == 2.0
    assert flow.drain_time == timedelta(minutes=90)
    assert timedelta(minutes=89) < flow.oldest_age < timedelta(minutes=91)


def test_it_says_when_the_backlog_is_not_draining(supervisor_client, wms):
    _jobs(120, created_min_ago=10)
    _jobs(60, created_min_ago=30, finished_min_ago=5, prefix="F")
    flow = flow_health()
    assert flow.arrivals == 180 and flow.completions == 60 and flow.drain_time is None
    body = supervisor_client.get(reverse("flow-health")).content.decode()
    assert "Not draining." in body and "the backlog grows by about 2.0 per minute" in body


def test_it_shows_an_empty_queue_as_nothing_to_drain(supervisor_client, wms):
    assert flow_health().drain_time == timedelta(0)
    assert "Nothing to drain: no active tidy job." in supervisor_client.get(reverse("flow-health")).content.decode()
