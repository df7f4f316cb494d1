"""The schedule declaration, the runner task, its lease and the start-up cycle (docs/architecture.md §7)."""

from django_q.models import Schedule

from recovery.lease import RUNNER_LEASE_KEY, connect_direct, try_lease
from recovery.models import RecoveryCycle
from recovery.schedule import RUNNER_FUNC, SCHEDULE_NAME, ensure_recovery_schedule
from recovery.tasks import run_recovery_runner, run_startup_cycle


def test_the_migration_declares_one_schedule_and_declaring_again_changes_nothing(transactional_db):
    ensure_recovery_schedule()
    ensure_recovery_schedule()
    (row,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert (row.func, row.schedule_type, row.minutes, row.repeats) == (RUNNER_FUNC, Schedule.MINUTES, 1, -1)


def test_declaring_repairs_a_drifted_or_duplicated_schedule(transactional_db):
    Schedule.objects.filter(name=SCHEDULE_NAME).update(minutes=5, func="elsewhere.task")
    Schedule.objects.create(name=SCHEDULE_NAME, func="elsewhere.task", schedule_type=Schedule.HOURLY)
    ensure_recovery_schedule()
    (row,) = Schedule.objects.filter(name=SCHEDULE_NAME)
    assert (row.func, row.minutes) == (RUNNER_FUNC, 1)


def test_q_cluster_keeps_retry_above_timeout_above_a_runner_s_life(settings):
    q = settings.Q_CLUSTER
    assert q["retry"] > q["timeout"] > settings.RECOVERY_RUNNER_SECONDS
    assert q["catch_up"] is False


def test_the_scheduled_runner_runs_cycles_until_its_time_is_up(wms):
    built = wms.build("job_missing")
    result = run_recovery_runner(seconds=1.2, interval=0.5)
    assert result["skipped"] is False
    assert result["cycles"] >= 2
    assert RecoveryCycle.objects.filter(trigger="SCHEDULE", outcome="SUCCEEDED").count() == result["cycles"]
    from recovery.evidence import evidence_for_workflow

    assert evidence_for_workflow(built.workflow_id).workflow_status == "PAUSED_RECOVERY"


def test_a_second_runner_finds_the_lease_held_and_skips(wms):
    with try_lease() as first:
        assert first.acquired and first.alive()
        result = run_recovery_runner(seconds=1, interval=0.5)
    assert result == {"skipped": True, "cycles": 0, "failed": 0}
    assert RecoveryCycle.objects.count() == 0


def test_the_lease_is_free_again_after_its_holder_ends(transactional_db):
    with try_lease() as lease:
        assert lease.acquired
    probe = connect_direct("test-probe")
    try:
        assert probe.execute("SELECT pg_try_advisory_lock(%s)", (RUNNER_LEASE_KEY,)).fetchone()[0]
    finally:
        probe.close()


def test_a_lost_lease_connection_is_noticed(transactional_db):
    with try_lease() as lease:
        killer = connect_direct("test-killer")
        pid = lease._conn.info.backend_pid
        killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
        killer.close()
        assert lease.alive() is False


def test_a_cluster_runs_one_start_up_cycle_whatever_its_worker_count(wms):
    wms.build("job_missing")
    assert run_startup_cycle("host:cluster-1") is True
    assert run_startup_cycle("host:cluster-1") is False  # the cluster's second worker
    assert run_startup_cycle("host:cluster-2") is True  # another cluster
    assert RecoveryCycle.objects.filter(trigger="STARTUP").count() == 2


def test_a_runner_stops_just_before_the_schedule_fires_the_next_one(transactional_db):
    from datetime import timedelta

    from django.utils import timezone

    from recovery.tasks import _runner_life

    ensure_recovery_schedule()  # a transactional test database is flushed between tests
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() + timedelta(seconds=30))
    assert 27 <= _runner_life() <= 29
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() + timedelta(minutes=10))
    assert _runner_life() == 55  # capped below the cluster timeout
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() - timedelta(seconds=5))
    assert _runner_life() == 1.0  # still runs one cycle


def test_a_lease_connection_works_when_the_url_names_an_application(transactional_db):
    from django.db import connection

    connection.settings_dict["OPTIONS"]["application_name"] = "tidy-console"
    try:
        with try_lease() as lease:
            assert lease.acquired
            name = lease._conn.execute("SELECT current_setting('application_name')").fetchone()[0]
            assert name == "tidy-recovery-lease"
    finally:
        del connection.settings_dict["OPTIONS"]["application_name"]
