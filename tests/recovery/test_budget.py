"""Bounded cycles: a budget of decisions and seconds per cycle, the oldest workflows first, the
rest recorded as the cycle's backlog; health says "draining", not "stale", meanwhile."""

import pytest
from django.urls import reverse

from console.readers.recovery import recovery_health
from recovery.demo.warehouse import BulkSeeder
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle, RecoveryDecision


def _decided_in(cycle_id: int) -> list[int]:
    return sorted(RecoveryDecision.objects.filter(cycle_id=cycle_id).values_list("workflow_id", flat=True))


def test_a_cycle_applies_at_most_its_budget_oldest_first_and_records_the_backlog(wms):
    seeder = BulkSeeder()
    seeder.seed("healthy", 5)
    needing = list(seeder.seed("missing", 10))

    first = run_cycle(max_decisions=4)
    assert first.succeeded and sum(first.decisions.values()) == 4 and first.backlog == 6
    assert _decided_in(first.cycle_id) == needing[:4]
    row = RecoveryCycle.objects.get(pk=first.cycle_id)
    assert (row.outcome, row.backlog, row.examined) == ("SUCCEEDED", 6, 15)

    second = run_cycle(max_decisions=4)
    assert _decided_in(second.cycle_id) == needing[4:8] and second.backlog == 2
    third = run_cycle(max_decisions=4)
    assert _decided_in(third.cycle_id) == needing[8:] and third.backlog == 0
    assert RecoveryDecision.objects.count() == 10


def test_a_cycle_starts_no_decision_after_its_seconds(wms):
    seeder = BulkSeeder()
    seeder.seed("missing", 5)
    report = run_cycle(max_seconds=0)
    assert report.succeeded and report.backlog == 5 and not report.decisions
    assert RecoveryDecision.objects.count() == 0
    assert sum(run_cycle().decisions.values()) == 5


def test_health_says_draining_not_stale_while_cycles_leave_a_backlog(supervisor_client, wms):
    BulkSeeder().seed("missing", 6)
    run_cycle(max_decisions=2)
    health = recovery_health()
    assert not health.stale and health.draining and health.backlog == 4
    body = supervisor_client.get(reverse("recovery-health")).content.decode()
    assert "Recovery is draining a backlog:" in body and "4 workflows still wait for a decision" in body
    assert "Recovery is stale." not in body

    run_cycle()
    health = recovery_health()
    assert not health.draining and health.backlog == 0
    assert "Recovery is draining" not in supervisor_client.get(reverse("dashboard")).content.decode()


def test_sharded_health_adds_the_backlog_of_every_shard(wms):
    BulkSeeder().seed("missing", 12)  # four per shard
    for shard in range(3):
        run_cycle(shard=shard, shard_count=3, max_decisions=1)
    assert recovery_health().backlog == 9


def test_the_runner_follows_a_cycle_that_left_a_backlog_at_once(wms, settings):
    from recovery.runtime.tasks import run_recovery_runner

    settings.RECOVERY_CYCLE_MAX_DECISIONS = 2
    BulkSeeder().seed("missing", 6)
    result = run_recovery_runner(seconds=8, interval=30)  # one cycle only, without a backlog
    assert result["cycles"] == 3
    assert [c.backlog for c in RecoveryCycle.objects.order_by("started_at")] == [4, 2, 0]
    assert RecoveryDecision.objects.count() == 6


def test_a_shard_without_a_recent_successful_cycle_makes_recovery_stale(supervisor_client, wms):
    BulkSeeder().seed("missing", 6)
    run_cycle(shard=0, shard_count=3)
    run_cycle(shard=2, shard_count=3)
    health = recovery_health()
    assert health.stale and health.stale_shards == (1,)
    body = supervisor_client.get(reverse("dashboard")).content.decode()
    assert "Recovery is stale." in body and "No cycle of shard 1 succeeded within" in body
    run_cycle(shard=1, shard_count=3)
    assert not recovery_health().stale


@pytest.mark.usefixtures("committed_db")
def test_while_a_backlog_drains_metrics_show_it_and_readiness_stays_ready(wms, client):
    from prometheus_client.parser import text_string_to_metric_families

    seeder = BulkSeeder()
    seeder.seed("missing", 6)
    run_cycle(max_decisions=4)
    families = {f.name: f for f in text_string_to_metric_families(client.get("/metrics").content.decode())}
    assert families["tidy_recovery_backlog"].samples[0].value == 2
    assert client.get("/health/ready").status_code == 200  # draining is not stale


def test_a_carried_backlog_is_decided_without_classifying_again_oldest_first(wms):
    from recovery.engine.cycle import CarriedBacklog

    seeder = BulkSeeder()
    seeder.seed("healthy", 5)
    needing = list(seeder.seed("missing", 10))
    carried = CarriedBacklog()

    first = run_cycle(max_decisions=4, carried=carried)
    assert first.examined == 15 and first.backlog == 6 and len(carried) == 6
    assert _decided_in(first.cycle_id) == needing[:4]

    second = run_cycle(max_decisions=4, carried=carried)
    # Only the carried workflows were read: the healthy ones were not examined again.
    assert (second.examined, second.backlog, len(carried)) == (4, 2, 2)
    assert _decided_in(second.cycle_id) == needing[4:8]
    assert RecoveryCycle.objects.get(pk=second.cycle_id).examined == 4

    third = run_cycle(max_decisions=4, carried=carried)
    assert _decided_in(third.cycle_id) == needing[8:] and third.backlog == 0 and not carried.ready()
    fourth = run_cycle(max_decisions=4, carried=carried)  # nothing carried: the shard is classified
    assert fourth.examined == 5 and not fourth.decisions and fourth.backlog == 0  # the healthy ones


def test_a_carried_id_decided_elsewhere_meanwhile_is_left_not_decided_twice(wms):
    from recovery.engine.cycle import CarriedBacklog

    BulkSeeder().seed("missing", 6)
    carried = CarriedBacklog()
    run_cycle(max_decisions=2, carried=carried)
    run_cycle()  # another cycle (a manual one) decides the rest first
    assert RecoveryDecision.objects.count() == 6
    report = run_cycle(carried=carried)
    assert report.examined == 4 and not report.decisions and report.left_after_recheck == 4
    assert RecoveryDecision.objects.count() == 6


def test_a_carried_backlog_expires_and_the_shard_is_classified_afresh(wms, monkeypatch):
    from recovery.engine import cycle as cycle_module

    seeder = BulkSeeder()
    needing = list(seeder.seed("missing", 6))
    carried = cycle_module.CarriedBacklog()
    run_cycle(max_decisions=2, carried=carried)
    newer_need = list(seeder.seed("missing", 1))
    monkeypatch.setattr(cycle_module, "CARRY_SECONDS", 0.0)
    report = run_cycle(max_decisions=2, carried=carried)
    assert report.examined == 5  # classified again: the four left and the new one
    assert _decided_in(report.cycle_id) == needing[2:4] and report.backlog == 3
    assert len(carried) == 3 and newer_need[0] in carried.take(3)


def test_the_ones_a_carried_cycle_did_not_start_come_first_next_time(wms):
    from recovery.engine.cycle import CarriedBacklog

    needing = list(BulkSeeder().seed("missing", 6))
    carried = CarriedBacklog()
    first = run_cycle(max_decisions=2, carried=carried)
    assert _decided_in(first.cycle_id) == needing[:2]
    stopped = run_cycle(max_decisions=2, max_seconds=0, carried=carried)
    assert not stopped.decisions and stopped.backlog == 4 and len(carried) == 4
    again = run_cycle(max_decisions=2, carried=carried)
    assert _decided_in(again.cycle_id) == needing[2:4]


def test_a_classified_cycle_that_stops_early_carries_its_unstarted_ones_first(wms):
    from recovery.engine.cycle import CarriedBacklog

    needing = list(BulkSeeder().seed("missing", 6))
    carried = CarriedBacklog()
    stopped = run_cycle(max_decisions=4, max_seconds=0, carried=carried)
    assert stopped.examined == 6 and not stopped.decisions and stopped.backlog == 6
    assert carried.take(6) == needing
