"""The schedule declaration, the runner task, its lease and the start-up cycle (docs/architecture.md §7)."""

import threading
import time

import pytest
from django.utils import timezone
from django_q.models import Schedule

from recovery.models import RecoveryCycle
from recovery.runtime.lease import RUNNER_LEASE_KEY, connect_direct, try_lease
from recovery.runtime.schedule import RUNNER_FUNC, SCHEDULE_NAME, ensure_recovery_schedule
from recovery.runtime.tasks import run_recovery_runner, run_startup_cycle

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


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
    from recovery.engine.evidence import evidence_for_workflow

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


def test_a_runner_lives_until_the_scheduler_fires_the_next_one_at_the_latest(transactional_db):
    """The scheduler fires the next runner up to one wake (30 s) after next_run: the runner lives
    until then, and from next_run on hands over as soon as the next one waits."""
    from datetime import timedelta

    from django.utils import timezone

    from recovery.runtime.tasks import _runner_life

    ensure_recovery_schedule()  # a transactional test database is flushed between tests
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() + timedelta(seconds=20))
    life, handoff_after = _runner_life()
    assert 49 <= life <= 50 and 18 <= handoff_after <= 19
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() + timedelta(minutes=10))
    assert _runner_life()[0] == 55  # capped below the cluster timeout
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() - timedelta(seconds=5))
    life, handoff_after = _runner_life()
    assert 24 <= life <= 25 and handoff_after == 0.0  # overdue: hands over at once to a waiting runner


def _runner_in_thread(results: dict, name: str, **kwargs) -> threading.Thread:
    """Start run_recovery_runner(**kwargs) in a thread with its own database connection; its
    result lands in results[name]."""
    from django.db import connections

    def run():
        try:
            results[name] = run_recovery_runner(**kwargs)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_runner_hands_over_to_the_next_one_without_a_gap(wms):
    """The next runner waits (it gets no lease); the running one, past its handover moment,
    gives the lease up after its round, and the next runs its first cycle within a second."""
    wms.build("job_missing")
    results = {}
    runner_a = _runner_in_thread(results, "first", seconds=30, interval=0.5, handoff_after=0.5)
    time.sleep(1.0)
    started_b = time.monotonic()
    runner_b = _runner_in_thread(results, "second", seconds=3, interval=0.5)
    runner_a.join(timeout=20)
    handed_over = time.monotonic()
    runner_b.join(timeout=20)
    assert not runner_a.is_alive() and not runner_b.is_alive()
    assert handed_over - started_b < 2.5  # the first ran to its round's end, not to its 30 s life
    assert results["first"]["skipped"] is False and results["second"]["skipped"] is False
    cycles = list(RecoveryCycle.objects.filter(trigger="SCHEDULE").order_by("started_at")
                  .values_list("worker", "started_at", "finished_at"))
    gaps = [(b[1] - a[2]).total_seconds() for a, b in zip(cycles, cycles[1:], strict=False)]
    assert max(gaps) < 1.5  # no gap in the cadence at the handover
    assert RecoveryCycle.objects.filter(outcome="SUCCEEDED").count() == len(cycles)


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


def test_a_second_runner_stands_by_while_a_runner_holds_the_lease_and_skips_if_never_handed_it(wms):
    """Held by a runner (which hands over in turn), the lease is waited for during the life."""
    results = {}
    first = _runner_in_thread(results, "holder", seconds=3, interval=0.5)
    time.sleep(0.5)
    started = time.monotonic()
    second = run_recovery_runner(seconds=1.5, interval=0.5)
    waited = time.monotonic() - started
    first.join(timeout=20)
    assert second == {"skipped": True, "cycles": 0, "failed": 0}
    assert waited >= 0.9  # it stood by (its life less one poll) instead of skipping at once
    assert results["holder"]["skipped"] is False


def test_a_start_up_cycle_queues_one_runner_to_bridge_to_the_first_scheduled_one(wms):
    """The scheduler fires the first runner only at its first wake, 30 s after the start: a runner
    queued at once covers that time, then hands over."""
    from django_q.models import OrmQ

    assert run_startup_cycle("host:cluster-9") is True
    (queued,) = OrmQ.objects.all()
    assert queued.task["func"] == RUNNER_FUNC and queued.task["kwargs"] == {"bridge": True}
    assert run_startup_cycle("host:cluster-9") is False  # the cluster's second worker queues nothing
    assert OrmQ.objects.count() == 1


def test_the_bridge_runner_lives_past_the_schedulers_first_wake(transactional_db, settings):
    from datetime import timedelta

    from django.utils import timezone

    from recovery.runtime.tasks import _runner_life

    settings.RECOVERY_INTERVAL_SECONDS = 10
    ensure_recovery_schedule()
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() - timedelta(minutes=5))
    assert _runner_life(bridge=True) == (50.0, 0.0)  # overdue: fired at the first wake, 30 s on
    Schedule.objects.filter(name=SCHEDULE_NAME).update(next_run=timezone.now() + timedelta(seconds=20))
    life, handoff_after = _runner_life(bridge=True)
    assert life == 55 and 18 <= handoff_after <= 19  # capped; hands over from next_run on


def test_a_worker_replacing_a_dead_one_queues_a_runner_when_none_is_live(wms):
    """The worker that ran the recovery runner was SIGKILLed (out of memory): its replacement
    queues a runner at once instead of leaving recovery to the schedule's next one."""
    from datetime import timedelta

    from django_q.models import OrmQ

    from recovery.runtime.lease import shard_leases

    assert run_startup_cycle("host:cluster-8") is True
    OrmQ.objects.all().delete()  # the start-up's own runner came and went
    assert run_startup_cycle("host:cluster-8") is False  # a worker spawned with the cluster: nothing
    assert OrmQ.objects.count() == 0
    RecoveryCycle.objects.filter(trigger="STARTUP").update(finished_at=timezone.now() - timedelta(minutes=5))
    with shard_leases(1):  # a live runner elsewhere: nothing to replace
        assert run_startup_cycle("host:cluster-8") is False
        assert OrmQ.objects.count() == 0
    assert run_startup_cycle("host:cluster-8") is False  # none live: one is queued
    (queued,) = OrmQ.objects.all()
    assert queued.task["func"] == RUNNER_FUNC and queued.task["kwargs"] == {"bridge": True}
    assert RecoveryCycle.objects.filter(trigger="STARTUP").count() == 1


def test_the_function_paths_stored_in_schedule_rows_still_name_the_runner_and_retention():
    """Schedule rows and queued tasks of existing databases store these paths as text; django-q2
    imports them by name, so they name the same functions wherever the modules live."""
    from django.utils.module_loading import import_string

    from recovery.runtime import retention

    assert RUNNER_FUNC == "recovery.tasks.run_recovery_runner"
    assert import_string(RUNNER_FUNC) is run_recovery_runner
    assert retention.TASK_FUNC == "recovery.retention.journal_retention_run"
    assert import_string(retention.TASK_FUNC) is retention.journal_retention_run
