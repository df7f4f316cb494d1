"""Scheduled recovery work. One iteration is a plain function (`run_cycle`); the runner
around it only holds the lease and sleeps (docs/architecture.md §7)."""

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.utils import timezone
from django_q.models import Schedule
from django_q.tasks import async_task

from recovery.engine.cycle import ApplyWorkers, CarriedBacklog, run_cycle
from recovery.models import RecoveryCycle
from recovery.runtime.lease import STARTUP_LEASE_KEY, live_runners, shard_leases, wait_lease
from recovery.runtime.processes import Heartbeat, beat, forget_old
from recovery.runtime.schedule import RUNNER_FUNC, SCHEDULE_NAME, ensure_recovery_schedule

log = logging.getLogger("recovery.tasks")  # the logger's name as log readers know it


# What a database outage raises: psycopg's own errors on the lease connection, Django's on its
# connection. Caught at the task boundary, logged, and the task returns: the next scheduled
# run (or the next qcluster start) recovers by itself once the database answers again, instead
# of a worker crashing and being restarted in a loop.
OUTAGE_ERRORS = (psycopg.OperationalError, psycopg.InterfaceError, OperationalError, InterfaceError)


def _forget_broken_connection() -> None:
    with contextlib.suppress(DatabaseError):
        connection.close()


def run_recovery_runner(*, seconds: float | None = None, interval: float | None = None,
                        shards: int | None = None, handoff_after: float | None = None, bridge: bool = False) -> dict:
    """The task the schedule fires every minute: run cycles every `interval` seconds until the
    runner's life (`seconds`) is up, for the shards whose lease this runner holds.

    Each shard (workflow_id % RECOVERY_SHARDS) has its own lease, so one runner per shard loops
    at a time across all clusters. Before every round the runner rebalances (recovery.runtime.lease
    ShardLeases): it takes free shards up to its fair share, so a dead runner's shards are taken
    over within one interval, and gives back what is above it. A runner that gets no shard
    stands by until its life is up, in case one is freed; if it never gets one it skipped."""
    try:
        return _run_recovery_runner(seconds=seconds, interval=interval, shards=shards, handoff_after=handoff_after,
                                    bridge=bridge)
    except OUTAGE_ERRORS as exc:
        log.error("recovery runner: the database is unreachable (%s); the next scheduled run retries",
                  str(exc).strip() or type(exc).__name__)
        _forget_broken_connection()
        return {"skipped": True, "cycles": 0, "failed": 0, "error": str(exc).strip() or type(exc).__name__}


class StopRequest:
    """SIGTERM or SIGINT while a runner runs: the cycle in hand finishes (it is bounded, §7) and
    the runner returns at once instead of living out its minute. A stopping qcluster waits for
    its workers; without this it would wait up to a minute, and a supervisor that gives up
    first leaves the worker running after the database has gone (docs/architecture.md §7)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self):
        self.requested = False
        self._previous: dict = {}

    def _handle(self, signum, frame):
        if not self.requested:
            self.requested = True
            return
        # Asked twice (a second Ctrl-C, or the cluster's guard terminating a hung worker): the
        # process's own handling applies at once, as if the runner had never watched.
        signal.signal(signum, self._previous.get(signum, signal.SIG_DFL))
        os.kill(os.getpid(), signum)

    @contextlib.contextmanager
    def watching(self):
        # Signal handlers can only be set from the main thread (a qcluster worker runs its task
        # there); elsewhere (a test's thread) the runner simply runs its life.
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        self._previous = {sig: signal.signal(sig, self._handle) for sig in self.SIGNALS}
        try:
            yield self
        finally:
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)

    def sleep(self, seconds: float) -> None:
        """Sleep, waking early when a stop is requested."""
        until = time.monotonic() + seconds
        while not self.requested and (left := until - time.monotonic()) > 0:
            time.sleep(min(left, 0.2))


def _run_recovery_runner(*, seconds: float | None, interval: float | None, shards: int | None,
                         handoff_after: float | None, bridge: bool) -> dict:
    # The apply threads and their connections live as long as this runner (recovery.engine.cycle.ApplyWorkers).
    apply_workers = ApplyWorkers(settings.RECOVERY_APPLY_WORKERS)
    try:
        with StopRequest().watching() as stop:
            return _run_rounds(seconds=seconds, interval=interval, shards=shards, stop=stop,
                               apply_workers=apply_workers, handoff_after=handoff_after, bridge=bridge)
    finally:
        apply_workers.close()


# How often a runner holding no shard tries again: a handover is taken within this.
STANDBY_POLL_SECONDS = 0.5

# A runner that lost the database tries again after 1, 2, 4 s, ... never waiting longer than this
# nor longer than half an interval, so the next successful cycle comes within two intervals of a
# blip the database survives (docs/architecture.md §7, "Losing the database").
RETRY_MAX_SECONDS = 4.0


class DatabaseLost(Exception):
    """Inside a runner: the database could not be reached (the lease connection is gone, or a
    cycle failed for want of the database). The runner reconnects after a short wait."""


# What makes a runner reconnect instead of ending.
RUNNER_OUTAGE_ERRORS = (*OUTAGE_ERRORS, DatabaseLost)


def retry_delays(every: float):
    """The waits between a runner's attempts to reach the database again: about 1, 2, 4 s,
    capped at RETRY_MAX_SECONDS and below the interval."""
    cap = max(0.2, min(RETRY_MAX_SECONDS, every / 2))
    delay = 1.0
    while True:
        yield min(delay, cap)
        delay *= 2


@dataclass
class _Runner:
    """What a runner keeps across its rounds and across reconnections."""

    every: float
    shard_count: int
    deadline: float
    handoff: float | None
    stop: StopRequest
    apply_workers: ApplyWorkers
    # Who holds which shard, for the console's processes page (recovery/runtime/processes.py).
    heartbeat: Heartbeat
    cycles: int = 0
    failed: int = 0
    interrupted: int = 0  # cycles that failed because the database could not be reached
    ran: set = field(default_factory=set)
    # Each held shard's backlog, carried from one bounded cycle to the next while this
    # runner keeps its lease (recovery.engine.cycle.CarriedBacklog); forgotten with the lease.
    carried: dict = field(default_factory=dict)
    lost_at: float | None = None  # when the database was lost, while it is
    delays: Iterator[float] | None = None
    error: str | None = None  # why the database was lost, while it is
    gave_up: bool = False  # the database never answered again within the runner's life


def _run_rounds(*, seconds: float | None, interval: float | None, shards: int | None, stop: StopRequest,
                apply_workers: ApplyWorkers, handoff_after: float | None, bridge: bool = False) -> dict:
    every = settings.RECOVERY_INTERVAL_SECONDS if interval is None else interval
    shard_count = settings.RECOVERY_SHARDS if shards is None else shards
    if seconds is not None:
        life = seconds
    else:
        try:
            life, handoff_after = _runner_life(bridge=bridge)
        except OUTAGE_ERRORS:
            # The schedule cannot be read: live the longest life, and hand over as soon as the
            # next runner waits (it is the schedule's, so the schedule is firing again).
            _forget_broken_connection()
            life, handoff_after = float(settings.RECOVERY_RUNNER_SECONDS), 0.0
    now = time.monotonic()
    runner = _Runner(every=every, shard_count=shard_count, deadline=now + life, stop=stop,
                     handoff=None if handoff_after is None else now + handoff_after, apply_workers=apply_workers,
                     heartbeat=Heartbeat(cluster=cluster_key(), shard_count=shard_count, every=every))
    while not stop.requested:
        try:
            with shard_leases(shard_count) as leases:
                _rounds(runner, leases)
            break
        except RUNNER_OUTAGE_ERRORS as exc:
            # Every lease went with the lease connection (or goes now, as it closes): the runner
            # keeps its life, waits a moment and connects again, then takes its leases again as
            # any runner does, or stands by if another runner took them meanwhile.
            _forget_broken_connection()
            runner.carried.clear()
            runner.error = str(exc).strip() or type(exc).__name__
            if runner.lost_at is None:
                runner.lost_at, runner.delays = time.monotonic(), retry_delays(every)
                log.warning("recovery runner: the database is unreachable (%s); retrying", runner.error)
            delay = next(runner.delays)
            if time.monotonic() + delay >= runner.deadline:
                log.error("recovery runner: the database is unreachable (%s); the next scheduled run retries",
                          runner.error)
                runner.gave_up = True
                break
            stop.sleep(delay)
    if stop.requested:
        log.info("recovery runner: asked to stop; returning after %d cycle(s)", runner.cycles)
    extra = {"interrupted": runner.interrupted} if runner.interrupted else {}
    if runner.gave_up:
        extra["error"] = runner.error
    if not runner.ran:
        if not runner.gave_up and not stop.requested:
            log.info("recovery runner: every shard's lease is held by another runner; skipping this minute")
        return {"skipped": True, "cycles": 0, "failed": 0, **extra}
    result = {"skipped": False, "cycles": runner.cycles, "failed": runner.failed, **extra,
              **({"stopped": True} if stop.requested else {})}
    return {**result, "shards": sorted(runner.ran)} if shard_count > 1 else result


def _rounds(runner: _Runner, leases) -> None:
    """Cycle every interval on the shards this runner holds until its life is up, it hands
    over, or it is asked to stop. Raises DatabaseLost (or a driver's outage error) when the
    database cannot be reached."""
    stop, shard_count = runner.stop, runner.shard_count
    while not stop.requested:
        started = time.monotonic()
        had = bool(leases.held)
        leases.rebalance()
        if runner.lost_at is not None:
            log.info("recovery runner: the database answers again %.1f s after it was lost; resuming",
                     time.monotonic() - runner.lost_at)
            runner.lost_at = runner.delays = runner.error = None
        mine = leases.alive()
        if had and not mine:
            if leases.connection_lost():
                raise DatabaseLost("the lease connection was lost")
            log.error("recovery runner: the lease was lost; stopping")
            return
        backlog = 0
        for shard in set(runner.carried) - set(leases.held):
            del runner.carried[shard]
        for shard in mine:
            if stop.requested:
                break
            if shard not in leases.held:
                continue  # given back earlier this round: another runner has it now
            report = run_cycle(trigger=RecoveryCycle.Trigger.SCHEDULE,
                               carried=runner.carried.setdefault(shard, CarriedBacklog()),
                               apply_workers=runner.apply_workers,
                               **({"shard": shard, "shard_count": shard_count} if shard_count > 1 else {}))
            runner.cycles += 1
            runner.ran.add(shard)
            if report.unreachable:
                runner.interrupted += 1
                raise DatabaseLost(report.error_text)
            runner.failed += 0 if report.succeeded else 1
            backlog += report.backlog
            if len(mine) > 1:
                # A runner that joined gets its share after this cycle, not after the round.
                leases.rebalance()
        if not mine and not runner.ran and shard_count == 1 and not leases.held_by_runner():
            return  # unsharded, and the lease is held by something other than a runner: skip
        # From the moment the schedule fires the next runner, hand over to it as soon as it
        # waits: closing the lease connection frees every shard, and the waiting runner
        # takes them within STANDBY_POLL_SECONDS, so the cadence has no gap whenever the
        # scheduler gets round to firing it (docs/architecture.md §7).
        if mine and runner.handoff is not None and time.monotonic() >= runner.handoff \
                and leases.successor_waiting():
            log.info("recovery runner: handing over to the next runner")
            return
        # A cycle that stopped at its budget is followed at once by the next: a backlog
        # drains in short cycles back to back, each recorded, instead of one long cycle.
        # Observing drains nothing (docs/architecture.md §16): its backlog waits the interval.
        # A runner holding no shard stands by, trying again shortly.
        # After the round's lease checks (a beat between them would widen the moment in which
        # a standby runner sees a handed-over shard free and nobody holding it).
        runner.heartbeat(leases.held)
        rush = backlog and settings.RECOVERY_MODE != "observe"
        next_start = (time.monotonic() if rush else started + runner.every) if mine else \
            time.monotonic() + STANDBY_POLL_SECONDS
        # Stop when the next round could not finish within the runner's life.
        if next_start + (time.monotonic() - started) > runner.deadline:
            return
        stop.sleep(max(0.0, next_start - time.monotonic()))


# django-q2's scheduler looks at the schedules about every 30 s, so it fires a runner up to that
# long after the schedule's next_run.
SCHEDULER_WAKE_SECONDS = 30.0


def _runner_life(*, bridge: bool = False) -> tuple[float, float | None]:
    """(life, handoff_after), in seconds from now. The runner loops until the latest moment the
    scheduler can fire the next runner (the schedule's next_run plus one scheduler wake), never
    longer than RECOVERY_RUNNER_SECONDS (which stays below the cluster's timeout); from next_run
    on it hands over to the next runner as soon as that one waits. Ending at next_run instead
    left the cadence a gap of up to half a minute whenever the scheduler fired late, longer
    than the stale window (docs/architecture.md §7).

    `bridge`: the runner queued after a cluster's start-up cycle, whose scheduler fires the
    first scheduled runner only at its first wake, 30 s after the start (or at a later wake,
    when next_run is still ahead): it lives at least one wake and two intervals past next_run
    (or now), still capped, so the scheduled runner always finds it to hand over from."""
    cap = float(settings.RECOVERY_RUNNER_SECONDS)
    next_run = Schedule.objects.filter(name=SCHEDULE_NAME).values_list("next_run", flat=True).first()
    if next_run is None:
        return cap, None
    until_next = (next_run - timezone.now()).total_seconds()
    if bridge:
        life = max(0.0, until_next) + SCHEDULER_WAKE_SECONDS + 2 * settings.RECOVERY_INTERVAL_SECONDS
        return min(cap, life), max(0.0, until_next - 1.0)
    return max(1.0, min(cap, until_next + SCHEDULER_WAKE_SECONDS)), max(0.0, until_next - 1.0)


def cluster_key() -> str:
    """Identifies one qcluster: its workers share the sentinel process as parent."""
    return f"{socket.gethostname()}:cluster-{os.getppid()}"


def run_startup_cycle(key: str | None = None) -> bool:
    """Run one cycle when a cluster starts; its other workers find it done and skip. During a
    database outage it tries again (about 1, 2, 4 s) for two intervals, so a cluster started
    during a blip still runs its start-up cycle (recorded as STARTUP, however late) and queues
    its runner; after that it logs and returns False: the schedule's runner catches up later
    (docs/architecture.md §7, "Losing the database")."""
    every = settings.RECOVERY_INTERVAL_SECONDS
    until = time.monotonic() + 2 * every
    delays = retry_delays(every)
    while True:
        try:
            return _run_startup_cycle(key)
        except OUTAGE_ERRORS as exc:
            _forget_broken_connection()
            reason = str(exc).strip() or type(exc).__name__
            delay = next(delays)
            if time.monotonic() + delay >= until:
                log.error("start-up recovery cycle: the database is unreachable (%s); the schedule will run "
                          "recovery when it answers again", reason)
                return False
            log.warning("start-up recovery cycle: the database is unreachable (%s); retrying", reason)
            time.sleep(delay)


def _run_startup_cycle(key: str | None) -> bool:
    key = key or cluster_key()
    with wait_lease(STARTUP_LEASE_KEY):
        started_up = (RecoveryCycle.objects.filter(trigger=RecoveryCycle.Trigger.STARTUP, worker=key)
                      .order_by("-started_at").values("started_at", "finished_at").first())
        if started_up is not None:  # this cluster started up before: this worker replaces one
            _replace_a_lost_runner(started_up["finished_at"] or started_up["started_at"])
            return False
        ensure_recovery_schedule()  # one runner row per shard, should RECOVERY_SHARDS have changed
        beat(cluster=key, shards=(), shard_count=settings.RECOVERY_SHARDS)  # the cluster is up
        forget_old()
        run_cycle(trigger=RecoveryCycle.Trigger.STARTUP, worker=key)
    _bridge_to_the_schedule()
    return True


def _replace_a_lost_runner(started_up) -> None:
    """A worker spawned after its cluster's start-up cycle replaces one that died (SIGKILLed,
    out of memory). If that one ran the recovery runner and no other runner is live, recovery
    would wait for the schedule's next runner, up to a minute and a half: queue one at once, as
    after a start (docs/architecture.md §7, "Losing the database"). A worker spawned with its
    cluster (the start-up cycle just ended) finds the start-up's own runner on its way."""
    if (timezone.now() - started_up).total_seconds() < 2 * settings.RECOVERY_INTERVAL_SECONDS:
        return
    if live_runners() == 0:
        log.warning("recovery runner: none is live after a worker was replaced; queuing one now")
        _bridge_to_the_schedule()


def _bridge_to_the_schedule() -> None:
    """Queue a runner at once after the start-up cycle: the scheduler fires the first scheduled
    runner only at its first wake, about 30 s after the cluster started, so the cadence would
    otherwise have a gap as long as the stale window after every restart. The queued runner
    hands over to the scheduled one as soon as that one waits (docs/architecture.md §7)."""
    if settings.Q_CLUSTER.get("sync"):
        return  # a synchronous queue would run it right here, holding up the worker's start
    async_task(RUNNER_FUNC, bridge=True, task_name="tidy-recovery-start-up-bridge")
