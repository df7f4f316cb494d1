"""/analytics/: time to acknowledge and time to resolve, p50 and p90 with counts, by reason, aisle
and shift, over 7 and 30 days, weekly, and as CSV; checked against fixed data whose percentiles
are known (percentile_cont: linear interpolation between the ranks)."""

import csv
import io
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.analytics.schedule import SCHEDULE_NAME, ensure_analytics_schedule
from console.analytics.selectors import analytics, compute_figures, newest_snapshot, shaped
from console.analytics.services import KEEP_SNAPSHOTS
from console.analytics.tasks import refresh_analytics
from console.models import AnalyticsSnapshot, Notification
from recovery.demo.warehouse import WarehouseBuilder
from recovery.models import RecoveryDecision

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # a Tuesday; the warehouse is on UTC in the tests
MIN = 60.0


def day(days_back: int, hour: int, minute: int = 0) -> datetime:
    return (NOW - timedelta(days=days_back)).replace(hour=hour, minute=minute)


def paused_workflow(builder: WarehouseBuilder, reason: str) -> tuple[int, int]:
    built = builder.workflow(moves=[builder.move()], step_statuses=["PAUSED_RECOVERY"], status="PAUSED_RECOVERY",
                             pause_reason=reason)
    return built.workflow_id, built.step_ids[0]


def pause(builder, reason: str, at: datetime, *, ended_after: float | None = None, how: str = "completed",
          observed: bool = False) -> int:
    """A workflow paused by recovery at `at`, completed or cancelled `ended_after` minutes later."""
    wid, step_id = paused_workflow(builder, reason)
    decision = RecoveryDecision.objects.create(workflow_id=wid, step_id=step_id, action="PAUSE", reason=reason,
                                               rule="no-job", evidence={}, fingerprint="f", observed=observed)
    RecoveryDecision.objects.filter(pk=decision.pk).update(decided_at=at)
    if ended_after is not None:
        end = at + timedelta(minutes=ended_after)
        with connection.cursor() as cursor:
            if how == "completed":
                cursor.execute("UPDATE alg.tidy_workflow SET status = 'COMPLETED', completed_at = %s, updated_at = %s "
                               "WHERE workflow_id = %s", [end, end, wid])
            else:
                cursor.execute("UPDATE alg.tidy_workflow SET status = 'CANCELLED', updated_at = %s "
                               "WHERE workflow_id = %s", [end, wid])
    return wid


def notify(user, *, workflow_id: int | None, reason: str, opened: datetime, acknowledged_after: float | None):
    n = Notification.objects.create(event="paused" if workflow_id else "recovery_stale",
                                    dedup_key=f"k{Notification.objects.count()}", subject="s", workflow_id=workflow_id,
                                    reason=reason, url_path="/", opened_at=opened, last_seen_at=opened,
                                    resolved_at=opened)
    if acknowledged_after is not None:
        with connection.cursor() as cursor:  # the acknowledgement is append-only: written as it happened
            cursor.execute("INSERT INTO console_notificationacknowledgement (notification_id, at, user_id, username) "
                           "VALUES (%s, %s, %s, %s)",
                           [n.pk, opened + timedelta(minutes=acknowledged_after), user.pk, user.username])
    return n


@pytest.fixture
def history(wms, personas, audit_truncate_allowed):
    aisle_a, aisle_b = WarehouseBuilder(space_prefix="A"), WarehouseBuilder(space_prefix="B")
    missing, mismatch = "RECOVERY_JOB_MISSING", "RECOVERY_JOB_MISMATCH"
    a1 = pause(aisle_a, missing, day(1, 7), ended_after=10)
    a2 = pause(aisle_a, missing, day(2, 8), ended_after=20)
    pause(aisle_a, missing, day(3, 15), ended_after=30)
    pause(aisle_a, missing, day(4, 23), ended_after=40)
    b1 = pause(aisle_b, mismatch, day(1, 16), ended_after=60, how="cancelled")
    pause(aisle_b, mismatch, day(5, 2), ended_after=120)
    pause(aisle_b, mismatch, day(2, 10))  # still paused
    pause(aisle_a, missing, day(20, 7), ended_after=300)  # in the 30 days only
    pause(aisle_a, missing, day(40, 7), ended_after=5)  # older than 30 days
    pause(aisle_a, missing, day(1, 9), ended_after=1, observed=True)  # observed: never a pause
    lead = personas["shiftlead"]
    notify(lead, workflow_id=a1, reason=missing, opened=day(1, 7, 1), acknowledged_after=5)
    notify(lead, workflow_id=a2, reason=missing, opened=day(2, 8, 1), acknowledged_after=15)
    notify(lead, workflow_id=b1, reason=mismatch, opened=day(1, 16, 1), acknowledged_after=None)
    notify(lead, workflow_id=None, reason="", opened=day(3, 9), acknowledged_after=1)
    return analytics(now=NOW)


def stat(report, metric: str, days: int, dimension: str = "all", key: str = ""):
    m = report.metric(metric)
    if dimension == "all":
        s = m.overall.stat(days)
    else:
        (row,) = [r for b in m.breakdowns if b.dimension == dimension for r in b.rows if r.key == key]
        s = row.stat(days)
    return (s.done, s.still_open, None if s.p50 is None else round(s.p50 / MIN, 3),
            None if s.p90 is None else round(s.p90 / MIN, 3))


def test_time_to_resolve_over_7_and_30_days(history):
    # 7 days: 10, 20, 30, 40, 60, 120 min finished, one still paused.
    assert stat(history, "resolve", 7) == (6, 1, 35.0, 90.0)
    # 30 days: and 300.
    assert stat(history, "resolve", 30) == (7, 1, 40.0, 192.0)


def test_time_to_resolve_by_reason_aisle_and_shift(history):
    assert stat(history, "resolve", 7, "reason", "RECOVERY_JOB_MISSING") == (4, 0, 25.0, 37.0)
    assert stat(history, "resolve", 7, "reason", "RECOVERY_JOB_MISMATCH") == (2, 1, 90.0, 114.0)
    assert stat(history, "resolve", 30, "reason", "RECOVERY_JOB_MISSING") == (5, 0, 30.0, 196.0)
    assert stat(history, "resolve", 7, "aisle", "A01") == (4, 0, 25.0, 37.0)
    assert stat(history, "resolve", 7, "aisle", "B01") == (2, 1, 90.0, 114.0)
    assert stat(history, "resolve", 7, "shift", "06:00") == (2, 1, 15.0, 19.0)  # 07:00, 08:00; 10:00 open
    assert stat(history, "resolve", 7, "shift", "14:00") == (2, 0, 45.0, 57.0)  # 15:00, 16:00
    assert stat(history, "resolve", 7, "shift", "22:00") == (2, 0, 80.0, 112.0)  # 23:00, and 02:00 the next night
    labels = {r.key: r.label for b in history.metric("resolve").breakdowns if b.dimension == "shift" for r in b.rows}
    assert labels == {"06:00": "06:00–14:00", "14:00": "14:00–22:00", "22:00": "22:00–06:00"}


def test_time_to_acknowledge(history):
    assert stat(history, "acknowledge", 7) == (3, 1, 5.0, 13.0)
    assert stat(history, "acknowledge", 7, "reason", "RECOVERY_JOB_MISSING") == (2, 0, 10.0, 14.0)
    assert stat(history, "acknowledge", 7, "reason", "RECOVERY_JOB_MISMATCH") == (0, 1, None, None)
    assert stat(history, "acknowledge", 7, "aisle", "A01") == (2, 0, 10.0, 14.0)
    assert stat(history, "acknowledge", 7, "aisle", "B01") == (0, 1, None, None)
    assert stat(history, "acknowledge", 7, "aisle", "") == (1, 0, 1.0, 1.0)  # no workflow
    assert stat(history, "acknowledge", 7, "shift", "06:00") == (3, 0, 5.0, 13.0)


def test_the_weekly_trend(history):
    weeks = {w.start: w.stat for w in history.metric("resolve").weeks}
    assert len(weeks) == 12 and min(weeks) == date(2025, 12, 22) and max(weeks) == date(2026, 3, 9)
    this_week = weeks[date(2026, 3, 9)]  # Monday the 9th: 07:00 (10 min) and 16:00 (60 min)
    assert (this_week.done, round(this_week.p50 / MIN), round(this_week.p90 / MIN)) == (2, 35, 55)
    last_week = weeks[date(2026, 3, 2)]  # 20, 30, 40, 120 min and one open
    assert (last_week.done, last_week.still_open, round(last_week.p50 / MIN)) == (4, 1, 35)
    assert weeks[date(2026, 2, 16)].done == 1  # the one 20 days back: 300 min
    assert weeks[date(2026, 1, 26)].done == 1  # 40 days back: in the trend, not in the windows


@pytest.fixture
def lead_client(client, personas):
    client.force_login(personas["shiftlead"])
    return client


def test_the_page_and_the_csv(wms, audit_truncate_allowed, lead_client):
    pause(WarehouseBuilder(), "RECOVERY_JOB_MISSING", datetime.now(UTC) - timedelta(hours=5), ended_after=10)
    refresh_analytics()
    page = lead_client.get("/analytics/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "<svg" in body and 'class="series series-p50"' in body and "RECOVERY_JOB_MISSING" in body
    response = lead_client.get("/analytics/?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["metric", "window_days", "group_by", "group", "done", "still_open", "p50_seconds",
                       "p90_seconds"]
    assert any(r[0] == "resolve" and r[2] == "week" for r in rows)
    assert ["resolve", "7", "all", "", "1", "0", "600.0", "600.0"] in rows


def test_the_csv_says_the_same_in_seconds(wms, audit_truncate_allowed, lead_client):
    builder = WarehouseBuilder()
    recent = datetime.now(UTC) - timedelta(hours=5)
    pause(builder, "RECOVERY_JOB_MISSING", recent, ended_after=10)
    pause(builder, "RECOVERY_JOB_MISSING", recent, ended_after=30)
    refresh_analytics()
    rows = list(csv.reader(io.StringIO(b"".join(lead_client.get("/analytics/?format=csv").streaming_content)
                                       .decode())))
    assert ["resolve", "7", "all", "", "2", "0", "1200.0", "1680.0"] in rows
    assert ["resolve", "7", "reason", "RECOVERY_JOB_MISSING", "2", "0", "1200.0", "1680.0"] in rows


def test_only_shift_leads_may_read_it(client, personas):
    assert client.get("/analytics/").status_code == 302
    for name in ("supervisor", "operator", "norole"):
        client.force_login(personas[name])
        assert client.get("/analytics/").status_code == 403, name
    client.force_login(personas["shiftlead"])
    assert client.get("/analytics/").status_code == 200
    assert client.post("/analytics/").status_code == 405


def test_the_handover_and_the_notifications_link_it_for_shift_leads_only(client, personas):
    for name, offered in (("supervisor", False), ("shiftlead", True)):
        client.force_login(personas[name])
        for path in ("/handover/", "/notifications/"):
            assert ('href="/analytics/"' in client.get(path).content.decode()) is offered, (name, path)


@pytest.mark.parametrize("query", ["format=xls", "format=%00", "format=" + "c" * 2000])
def test_bad_input_is_a_400_naming_the_field(lead_client, query):
    response = lead_client.get(f"/analytics/?{query}")
    assert response.status_code == 400 and "format: " in response.content.decode()


# The tables the analytics statements read: the page itself never reads them (design §16).
HISTORY_TABLES = ("recovery_recoverydecision", "console_notification", "console_repairaudit", "tidy_workflow",
                  "tidy_step")


def test_the_page_and_the_csv_read_the_snapshot_never_the_history(wms, lead_client):
    builder = WarehouseBuilder()
    pause(builder, "RECOVERY_JOB_MISSING", datetime.now(UTC) - timedelta(hours=2), ended_after=3)
    refresh_analytics()
    for path in ("/analytics/", "/analytics/?format=csv"):
        with CaptureQueriesContext(connection) as captured:
            response = lead_client.get(path)
            if path.endswith("csv"):
                b"".join(response.streaming_content)
        assert response.status_code == 200
        read = [q["sql"] for q in captured.captured_queries if any(t in q["sql"] for t in HISTORY_TABLES)]
        assert read == [], read
        assert any("console_analyticssnapshot" in q["sql"] for q in captured.captured_queries)


def test_the_task_stores_what_the_statements_computed(history, wms, monkeypatch):
    """The snapshot the task writes (through JSON, read back) gives the same figures as the
    statements run directly on the same data (`history`: analytics(now=NOW))."""
    assert shaped(now=NOW, figures=compute_figures(now=NOW)) == history
    monkeypatch.setattr("console.analytics.tasks.timezone.now", lambda: NOW)
    refresh_analytics()
    snapshot = newest_snapshot()
    assert snapshot.computed_at == NOW and snapshot.report == history
    assert stat(snapshot.report, "resolve", 7) == (6, 1, 35.0, 90.0)  # not an empty report


def test_the_task_keeps_the_newest_few(wms):
    for _ in range(KEEP_SNAPSHOTS + 2):
        refresh_analytics()
    assert AnalyticsSnapshot.objects.count() == KEEP_SNAPSHOTS
    assert newest_snapshot().computed_at == AnalyticsSnapshot.objects.latest("computed_at").computed_at


def test_the_page_says_when_it_was_computed_in_both_languages(wms, lead_client, settings):
    settings.ANALYTICS_REFRESH_MINUTES = 10
    refresh_analytics()
    AnalyticsSnapshot.objects.update(computed_at=datetime(2026, 3, 10, 14, 10, tzinfo=UTC))
    body = lead_client.get("/analytics/").content.decode()
    assert "As of 2026-03-10 14:10 warehouse time, refreshed every 10 min." in body
    body = lead_client.get("/analytics/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "截至仓库时间 2026-03-10 14:10，每 10 分钟刷新一次。" in body


def test_without_a_snapshot_the_page_answers_at_once_and_queues_one_computation(wms, lead_client):
    from django_q.models import OrmQ, Schedule

    schedule = ensure_analytics_schedule()
    Schedule.objects.filter(pk=schedule.pk).update(next_run=datetime.now(UTC) + timedelta(minutes=9))
    with CaptureQueriesContext(connection) as captured:
        response = lead_client.get("/analytics/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "The figures are being computed" in body and 'id="analytics-as-of"' not in body
    assert not [q["sql"] for q in captured.captured_queries if any(t in q["sql"] for t in HISTORY_TABLES)]
    # Its next run is now: the scheduler starts it at its next look; asking again queues no second one.
    (row,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert row.next_run <= datetime.now(UTC)
    assert lead_client.get("/analytics/").status_code == 200
    assert Schedule.objects.filter(name=SCHEDULE_NAME).count() == 1 and OrmQ.objects.count() == 0
    body = lead_client.get("/analytics/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "正在计算这些数据" in body
    # Once computed, the figures are there.
    refresh_analytics()
    assert 'id="analytics-as-of"' in lead_client.get("/analytics/").content.decode()


def test_the_schedule_is_declared_once_with_the_refresh_interval(wms, settings):
    from django_q.models import Schedule

    settings.ANALYTICS_REFRESH_MINUTES = 15
    ensure_analytics_schedule()
    ensure_analytics_schedule()
    (row,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert (row.func, row.minutes, row.repeats) == ("console.analytics.tasks.refresh_analytics", 15, -1)


def test_a_new_action_that_resolves_a_pause_ends_its_time_to_resolve_from_its_spec(wms, monkeypatch,
                                                                                   audit_truncate_allowed):
    from dataclasses import replace

    from console.models import RepairAudit
    from console.repair import registry

    new = replace(registry.spec("REISSUE"), code="REBOOK_TRAY", slug="rebook-tray")
    monkeypatch.setattr(registry, "SPECS", (*registry.SPECS, new))
    builder, two_hours_ago = WarehouseBuilder(), datetime.now(UTC) - timedelta(hours=2)
    by_new = pause(builder, "RECOVERY_JOB_MISSING", two_hours_ago)
    proposed = pause(builder, "RECOVERY_JOB_MISSING", two_hours_ago)
    RepairAudit.objects.create(username="op", action=new.code, workflow_id=by_new, outcome="APPLIED")
    # A proposal leaves the workflow paused: its spec says it does not resolve the pause.
    RepairAudit.objects.create(username="lead", action="CANCEL_PROPOSE", workflow_id=proposed, outcome="APPLIED")
    s = analytics(now=datetime.now(UTC)).metric("resolve").overall.stat(7)
    assert (s.done, s.still_open) == (1, 1)
