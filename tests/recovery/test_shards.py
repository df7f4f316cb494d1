"""Recovery shards: one lease per shard, several runner processes, exactly one decision per
workflow per cycle, and a killed runner's shards taken over within one interval (docs/architecture.md §6, §7)."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django_q.models import Schedule

from console.replay.processes import database_url
from recovery.demo.warehouse import BulkSeeder
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle, RecoveryDecision
from recovery.runtime.lease import RUNNER_LEASE_KEY, connect_direct, shard_lease_key, shard_leases
from recovery.runtime.schedule import SCHEDULE_NAME, SHARD_SCHEDULE_PREFIX, ensure_recovery_schedule
from recovery.runtime.tasks import run_recovery_runner

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[2]
SHARDS = 3
INTERVAL = 2.0

RUNNER = """
import sys
import django
django.setup()
from recovery.runtime.tasks import run_recovery_runner
print(run_recovery_runner(seconds=float(sys.argv[1]), interval=float(sys.argv[2]), shards=int(sys.argv[3])),
      flush=True)
"""


def _start_runner(tmp_path, n: int, seconds: float, shards: int = SHARDS,
                  interval: float = INTERVAL, url: str | None = None) -> subprocess.Popen:
    """A runner process on the test database (or on the database of `url`)."""
    env = {**os.environ, "DATABASE_URL": url or database_url("tidy-test-runner"),
           "DJANGO_SETTINGS_MODULE": "tests.settings",
           "SECRET_KEY": "test-only", "LOG_LEVEL": "WARNING"}
    env.pop("EMBEDDED_DATABASE_URL", None)
    out = open(tmp_path / f"runner-{n}.log", "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([sys.executable, "-c", RUNNER, str(seconds), str(interval), str(shards)],
                            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _wait_for(what: str, condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _lease_holders() -> dict[int, int]:
    """shard -> backend pid holding its lease."""
    keys = {shard_lease_key(s): s for s in range(SHARDS)}
    with connection.cursor() as cursor:
        cursor.execute("SELECT objid, pid FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' "
                       "AND granted AND classid = 0 AND objsubid = 1 AND objid = ANY(%s) "
                       "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                       [list(keys)])
        return {keys[int(objid)]: pid for objid, pid in cursor.fetchall()}


def _decided() -> Counter:
    return Counter(RecoveryDecision.objects.values_list("workflow_id", flat=True))


def test_three_runner_processes_decide_every_workflow_once_and_take_over_a_killed_one(wms, tmp_path):
    seeder = BulkSeeder()
    seeder.seed("healthy", 2000)
    first = seeder.seed("missing", 1500)
    runners = [_start_runner(tmp_path, n, seconds=300) for n in range(SHARDS)]
    try:
        _wait_for("every workflow decided", lambda: len(_decided()) >= len(first), timeout=180)
        # Fair share: each runner process ends up with one shard.
        _wait_for("one shard per runner", lambda: len(set(_lease_holders().values())) == SHARDS, timeout=30)

        balanced = timezone.now()
        workers = {}
        for shard in range(SHARDS):
            newest = RecoveryCycle.objects.filter(shard=shard, finished_at__isnull=False).order_by("-started_at")
            _wait_for(f"a cycle of shard {shard} after the balance",
                      lambda s=shard: RecoveryCycle.objects.filter(shard=s, finished_at__isnull=False,
                                                                   started_at__gt=balanced).exists(),
                      timeout=30)
            workers[shard] = newest.first().worker
        victim_shard = 0
        victim_pid = int(workers[victim_shard].rsplit(":", 1)[1])
        victim = next(p for p in runners if p.pid == victim_pid)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        killed_at = timezone.now()
        later = seeder.seed("missing", 600)

        def taken_over():
            return RecoveryCycle.objects.filter(shard=victim_shard, started_at__gt=killed_at).exclude(
                worker=workers[victim_shard]).order_by("started_at").first()

        _wait_for("the killed runner's shard taken over", lambda: taken_over() is not None, timeout=30)
        _wait_for("the later workflows decided", lambda: len(_decided()) >= len(first) + len(later), timeout=120)
    finally:
        for p in runners:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in runners:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    # Within one interval: the taker rebalances at the start of its next round (at most one
    # interval after its previous one started) and runs the shards it got in order, so the
    # takeover cycle starts no later than one interval plus the cycles run before it that round.
    takeover = taken_over()
    round_start = (RecoveryCycle.objects.filter(worker=takeover.worker, started_at__lte=takeover.started_at)
                   .order_by("-started_at"))
    before_it = [c for c in round_start[1:SHARDS] if (takeover.started_at - c.started_at).total_seconds() < INTERVAL]
    allowance = INTERVAL + sum((c.duration_ms or 0) for c in before_it) / 1000 + 1.5
    delay = (takeover.started_at - killed_at).total_seconds()
    print(f"shard {victim_shard} taken over {delay:.2f} s after the kill (allowed {allowance:.2f} s)")
    assert delay <= allowance, f"shard {victim_shard} taken over after {delay:.1f} s (allowed {allowance:.1f} s)"

    # Every workflow that needed a decision got exactly one, from a cycle of its own shard.
    decided = _decided()
    wanted = set(first) | set(later)
    assert set(decided) == wanted
    assert max(decided.values()) == 1, "a workflow was decided twice"
    shard_of_cycle = dict(RecoveryCycle.objects.values_list("id", "shard"))
    for workflow_id, cycle_id in RecoveryDecision.objects.values_list("workflow_id", "cycle_id"):
        assert shard_of_cycle[cycle_id] == workflow_id % SHARDS
    # A shard's cycles never overlapped in time: its lease let one runner at a time classify it.
    by_shard = defaultdict(list)
    for c in RecoveryCycle.objects.order_by("started_at"):
        by_shard[c.shard].append(c)
    assert set(by_shard) == set(range(SHARDS))
    for shard, cycles in by_shard.items():
        for earlier, later_cycle in zip(cycles, cycles[1:], strict=False):
            end = earlier.finished_at
            if end is None:  # the killed runner's cycle, cut short; its transaction rolled back
                assert earlier.worker == workers[victim_shard]
                continue
            assert later_cycle.started_at >= end, f"shard {shard}: cycles {earlier.pk} and {later_cycle.pk} overlap"
    assert len({c.worker for c in RecoveryCycle.objects.all()}) == SHARDS


def test_the_journal_refuses_a_second_decision_for_a_workflow_in_one_cycle(wms):
    built = wms.build("job_missing")
    report = run_cycle()
    (decision,) = RecoveryDecision.objects.filter(workflow_id=built.workflow_id)
    assert decision.cycle_id == report.cycle_id
    with pytest.raises(IntegrityError), transaction.atomic():
        RecoveryDecision.objects.create(cycle_id=report.cycle_id, workflow_id=built.workflow_id, action="PAUSE",
                                        evidence={}, fingerprint="x")
    # Outside a cycle (callbacks, repairs) the same workflow may be journaled again.
    RecoveryDecision.objects.create(cycle_id=None, workflow_id=built.workflow_id, action="ADVANCE", evidence={},
                                    fingerprint="y")
    RecoveryDecision.objects.create(cycle_id=None, workflow_id=built.workflow_id, action="ADVANCE", evidence={},
                                    fingerprint="z")


def test_a_sharded_cycle_classifies_only_its_shard_and_records_it(wms):
    seeder = BulkSeeder()
    seeder.seed("missing", 30)
    report = run_cycle(shard=1, shard_count=3)
    cycle = RecoveryCycle.objects.get(pk=report.cycle_id)
    assert (cycle.shard, cycle.shard_count, cycle.examined) == (1, 3, 10)
    decided = set(RecoveryDecision.objects.values_list("workflow_id", flat=True))
    assert decided == {w for w in range(1, 31) if w % 3 == 1}


def test_shard_zero_s_lease_is_the_single_runner_lease():
    assert shard_lease_key(0) == RUNNER_LEASE_KEY
    assert len({shard_lease_key(s) for s in range(256)}) == 256


def test_runners_share_the_shards_fairly_and_give_back_above_their_share(transactional_db):
    with shard_leases(4) as a:
        a.rebalance()
        assert a.alive() == [0, 1, 2, 3]  # alone: every shard
        with shard_leases(4) as b:
            b.rebalance()
            assert b.alive() == []  # all held
            a.rebalance()  # a sees two runners: keeps two, gives two back
            assert len(a.alive()) == 2
            b.rebalance()
            assert sorted(a.alive() + b.alive()) == [0, 1, 2, 3]
        # b ended: once the server has ended its session, its shards are free and a takes them.
        def a_has_all():
            a.rebalance()
            return a.alive() == [0, 1, 2, 3]

        _wait_for("the ended runner's shards taken", a_has_all, timeout=10)


def test_a_runner_with_every_shard_held_stands_by_and_skips(wms):
    holder = connect_direct("test-holder")
    try:
        for shard in range(2):
            holder.execute("SELECT pg_advisory_lock(%s)", (shard_lease_key(shard),))
        result = run_recovery_runner(seconds=1.0, interval=0.4, shards=2)
    finally:
        holder.close()
    assert result == {"skipped": True, "cycles": 0, "failed": 0}
    assert RecoveryCycle.objects.count() == 0


def test_one_schedule_row_per_shard(transactional_db):
    ensure_recovery_schedule(shards=3)
    names = set(Schedule.objects.filter(name__startswith=SCHEDULE_NAME).values_list("name", flat=True))
    assert names == {SCHEDULE_NAME, f"{SHARD_SCHEDULE_PREFIX}1", f"{SHARD_SCHEDULE_PREFIX}2"}
    ensure_recovery_schedule(shards=1)
    assert list(Schedule.objects.filter(name__startswith=SCHEDULE_NAME).values_list("name", flat=True)) == [
        SCHEDULE_NAME]
