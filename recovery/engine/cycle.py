"""One recovery cycle: classify every active workflow with one query, then reconcile only the
workflows whose decision changes state, each in its own short transaction (docs/architecture.md §6)."""

import contextvars
import logging
import os
import queue
import socket
import threading
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.utils import timezone

from recovery.engine import wms_sql
from recovery.engine.decisions import decide
from recovery.engine.evidence import stream_classification
from recovery.engine.transaction import Outcome, reconcile_workflow
from recovery.engine.transaction.observe import observe_workflows
from recovery.errors import database_unreachable
from recovery.logs.logcontext import cycle_id_var
from recovery.logs.oplog import log_recovery_result
from recovery.models import RecoveryCycle

log = logging.getLogger("recovery.cycle")  # the logger's name as log readers know it


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class CycleReport:
    cycle_id: int | None
    succeeded: bool
    examined: int = 0
    decisions: Counter = field(default_factory=Counter)  # applied decisions: PAUSE/ADVANCE/COMPLETE
    reasons: Counter = field(default_factory=Counter)  # pause reasons applied
    skipped: int = 0
    stale: int = 0
    left_after_recheck: int = 0
    errors: int = 0
    backlog: int = 0  # needing a decision, left to the next cycle by the budget
    duration_ms: int = 0
    error_text: str = ""
    observing: bool = False  # observe mode: `decisions` and `reasons` were journaled as observed, not applied
    unreachable: bool = False  # it failed because the database could not be reached (recovery.errors)

    def summary(self) -> str:
        applied = ", ".join(f"{k.lower()}={v}" for k, v in sorted(self.decisions.items())) or "none"
        status = "succeeded" if self.succeeded else f"FAILED: {self.error_text}"
        return (f"cycle {self.cycle_id} {status}: examined={self.examined} "
                f"{'observed' if self.observing else 'applied'}[{applied}] "
                f"skipped={self.skipped} stale={self.stale} errors={self.errors} backlog={self.backlog} "
                f"{self.duration_ms} ms")


def _reset_broken_connection() -> None:
    # After a terminated connection Django would keep failing on the dead socket; closing it
    # makes the next workflow's transaction reconnect.
    if connection.connection is not None and (connection.connection.closed or not connection.is_usable()):
        connection.close()


@dataclass
class Classification:
    examined: int
    needing: list  # ClassificationEvidence of the oldest workflows needing a decision, within the budget
    beyond_budget: int  # further workflows needing a decision, left to the next cycle
    beyond_ids: array | None = None  # their ids, oldest first, when asked for (carry=True)


# From this many active workflows (of a shard) up, the classification reads them in
# CLASSIFICATION_PARTS ranges of ids at once, each part on its own connection and thread: the
# server runs the parts' queries on as many cores, which is most of a large classification's work
# (docs/architecture.md §4). Measured on two cores, with a runner's warm apply threads: 10,000
# workflows in 120 ms instead of 162 (medians of 9). Below it, one read: a part's own planning and
# a manual cycle's fresh connections cost about what the parts save.
CLASSIFY_IN_PARTS_FROM = 5_000
CLASSIFICATION_PARTS = 2

# The ends of the first and the last part's range: every bigint, so no workflow id is left out.
_LOWEST_ID, _HIGHEST_ID = -(2**63), 2**63 - 1


def classify(*, shard: int | None = None, shard_count: int = 1, keep: int, carry: bool = False,
             workers: "ApplyWorkers | None" = None) -> Classification:
    """Stream every active workflow (of one shard) through decide(); keep the evidence of the
    first `keep` needing a change, oldest first, and only count the rest (with `carry`, keep
    their ids too): memory stays bounded by the budget, not by the active set or the backlog.
    A large active set is read in parts at once, on `workers`' threads if given."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.classification_parts(sharded=shard is not None),
                       {"shard": shard, "shard_count": shard_count,
                        "fractions": [i / CLASSIFICATION_PARTS for i in range(1, CLASSIFICATION_PARTS)]})
        active, cuts = cursor.fetchone()
    if active < CLASSIFY_IN_PARTS_FROM:
        return _classify_part(None, shard=shard, shard_count=shard_count, keep=keep, carry=carry)
    ranges = list(zip([_LOWEST_ID, *cuts], [*(cut - 1 for cut in cuts), _HIGHEST_ID], strict=True))
    parts: list = [None] * len(ranges)
    pending = queue.SimpleQueue()
    for index in range(len(ranges)):
        pending.put(index)

    def work() -> None:
        while True:
            try:
                index = pending.get_nowait()
            except queue.Empty:
                return
            try:
                parts[index] = _classify_part(ranges[index], shard=shard, shard_count=shard_count, keep=keep,
                                              carry=carry)
            except Exception as exc:  # raised below, on the cycle's own thread
                parts[index] = exc

    if workers is not None and workers.count >= len(ranges):
        workers.run(work)
    else:
        ApplyWorkers.run_once(work, count=len(ranges))
    for part in parts:
        if isinstance(part, Exception):
            raise part
    return _joined(parts, keep=keep, carry=carry)


def _classify_part(id_range: tuple[int, int] | None, *, shard: int | None, shard_count: int, keep: int,
                   carry: bool) -> Classification:
    examined = beyond = 0
    needing = []
    beyond_ids = array("q") if carry else None
    for evidence in stream_classification(shard=shard, shard_count=shard_count, id_range=id_range):
        examined += 1
        if decide(evidence).changes_state:
            if len(needing) < keep:
                needing.append(evidence)
            else:
                beyond += 1
                if carry:
                    beyond_ids.append(evidence.workflow_id)
    return Classification(examined, needing, beyond, beyond_ids)


def _joined(parts: list[Classification], *, keep: int, carry: bool) -> Classification:
    """The classifications of consecutive id ranges as one: the oldest `keep` needing a decision
    across them all, the rest counted (and with `carry` their ids kept, oldest first)."""
    whole = Classification(0, [], 0, array("q") if carry else None)
    for part in parts:
        whole.examined += part.examined
        room = keep - len(whole.needing)
        whole.needing.extend(part.needing[:room])
        over = part.needing[room:]
        whole.beyond_budget += len(over) + part.beyond_budget
        if carry:
            whole.beyond_ids.extend(evidence.workflow_id for evidence in over)
            whole.beyond_ids.extend(part.beyond_ids)
    return whole


# What a cycle's decisions in flight at its deadline and its own record take (measured: 10–80 ms
# at 4 apply workers), kept inside the budget so a cycle ends within RECOVERY_CYCLE_MAX_SECONDS.
FINISH_ALLOWANCE_SECONDS = 0.1

# How long a carried backlog is worked through before the shard is classified afresh: a workflow
# that comes to need a decision while a backlog drains waits at most this long (plus a cycle).
CARRY_SECONDS = 60.0


class CarriedBacklog:
    """The workflows a bounded cycle classified as needing a decision and left for later, oldest
    first, as ids only (8 bytes each). The runner holding a shard's lease keeps one per shard, so
    the cycles after it decide these at once instead of classifying the whole shard again for
    each budget's worth; every one is still re-read and re-decided under its row lock, so an id
    that no longer needs a decision is simply left (docs/architecture.md §7)."""

    def __init__(self):
        self._ids = array("q")
        self._next = 0
        self._classified_at = 0.0

    def __len__(self) -> int:
        return len(self._ids) - self._next

    def ready(self) -> bool:
        """Something is left and it was classified recently enough to be worked through."""
        return len(self) > 0 and time.monotonic() - self._classified_at < CARRY_SECONDS

    def take(self, count: int) -> list[int]:
        ids = self._ids[self._next:self._next + count].tolist()
        self._next += len(ids)
        return ids

    def give_back(self, count: int) -> None:
        """The last `count` ids taken were not started: they come first again."""
        self._next -= count

    def remaining(self) -> array:
        return self._ids[self._next:]

    def replace(self, ids: array, classified_at: float) -> None:
        self._ids, self._next, self._classified_at = ids, 0, classified_at


# Decision transactions run on settings.RECOVERY_APPLY_WORKERS connections at once when a cycle
# has at least APPLY_IN_PARALLEL_FROM of them. Each stays one short transaction of one workflow, under its row
# lock taken with SKIP LOCKED (docs/architecture.md §6), so the workers never wait for each other;
# what they overlap is each transaction's round trips and its commit's WAL flush, which several
# committing sessions share. Fewer decisions than that are not worth opening connections for.
APPLY_IN_PARALLEL_FROM = 16


def _reconcile(workflow_id: int, classified, cycle_id: int):
    """One workflow's decision transaction; its ReconcileResult, or None when it failed.
    `classified`: the evidence the cycle classified it on, or None for a carried backlog's id."""
    try:
        result = reconcile_workflow(workflow_id, cycle_id=cycle_id, classified=classified)
    except Exception:
        # Never evidence: the transaction rolled back and the workflow stays as it was.
        log.exception("recovery cycle %s: workflow %s failed and was rolled back", cycle_id,
                      workflow_id, extra={"workflow_id": workflow_id})
        _reset_broken_connection()
        return None
    log_recovery_result(cycle_id=cycle_id, result=result, classified=classified)
    return result


def _apply(needing: list, *, cycle_id: int, deadline: float, workers: "int | ApplyWorkers") -> tuple[list, int]:
    """Reconcile `needing` ((workflow id, classified evidence or None) pairs) in order, none
    started after `deadline`: (the results of those started, how many at the end were not).
    `workers`: a count of threads started for this cycle, or the runner's ApplyWorkers."""
    count = workers.count if isinstance(workers, ApplyWorkers) else workers
    if count <= 1 or len(needing) < APPLY_IN_PARALLEL_FROM:
        results = []
        for workflow_id, classified in needing:
            if time.monotonic() >= deadline:
                break
            results.append(_reconcile(workflow_id, classified, cycle_id))
        return results, len(needing) - len(results)

    pending = iter(needing)
    taking = threading.Lock()
    results = []  # list.append is atomic; the order of results does not matter

    def work() -> None:
        while True:
            with taking:
                if time.monotonic() >= deadline:
                    return
                item = next(pending, None)
            if item is None:
                return
            results.append(_reconcile(*item, cycle_id))

    if isinstance(workers, ApplyWorkers):
        workers.run(work)
    else:
        ApplyWorkers.run_once(work, count=min(count, len(needing)))
    return results, len(needing) - len(results)


# Observe mode reads the evidence of this many workflows in one statement and journals their
# observations in one more (recovery/engine/transaction/observe.py): no row lock and no per-workflow
# transaction, so a chunk costs about what two decisions applied do.
OBSERVE_CHUNK = 500


def _observe(needing: list, *, cycle_id: int, deadline: float) -> tuple[list, int]:
    """Observe mode's `_apply`: decide `needing` ((workflow id, classified evidence or None) pairs)
    afresh and journal what would change state, in chunks, none started after `deadline`; nothing
    is locked or written but the journal (docs/architecture.md §16). A failed chunk is never
    evidence: its workflows are counted as errors (None) and the cycle goes on."""
    results = []
    started = 0
    while started < len(needing) and time.monotonic() < deadline:
        chunk = needing[started:started + OBSERVE_CHUNK]
        started += len(chunk)
        try:
            observed = observe_workflows([workflow_id for workflow_id, _ in chunk], cycle_id=cycle_id)
        except Exception:
            log.exception("recovery cycle %s: observing %d workflow(s) failed; nothing was journaled for them",
                          cycle_id, len(chunk))
            _reset_broken_connection()
            results.extend([None] * len(chunk))
            continue
        results.extend(observed.results)
        for result in observed.results:
            if result.workflow_id in observed.journaled:  # a new observation; repeats are not logged again
                log_recovery_result(cycle_id=cycle_id, result=result)
    return results, len(needing) - started


class ApplyWorkers:
    """RECOVERY_APPLY_WORKERS threads, each with its own database connection, kept for a
    runner's life: a cycle then reuses warm connections (their prepared statements and caches)
    instead of opening and preparing fresh ones, which costs a short cycle more than its
    decisions do (docs/architecture.md §7). `close()` ends the threads and their connections."""

    def __init__(self, count: int):
        self.count = count
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def run(self, work) -> None:
        """Run `work` on every thread at once (each in a copy of this context, so log lines
        carry the cycle id); return when every one has returned."""
        if not self._threads:
            self._threads = [threading.Thread(target=self._serve, name=f"recovery-apply-{i}", daemon=True)
                             for i in range(self.count)]
            for thread in self._threads:
                thread.start()
        done = threading.Semaphore(0)
        for _ in self._threads:
            self._jobs.put((contextvars.copy_context(), work, done))
        for _ in self._threads:
            done.acquire()

    def _serve(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                context, work, done = job
                try:
                    _reset_broken_connection()  # e.g. after a database restart between cycles
                    context.run(work)
                except Exception:
                    log.exception("recovery apply worker failed")
                finally:
                    done.release()
        finally:
            connections.close_all()  # this thread's own connection

    def close(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()
        self._threads = []

    @classmethod
    def run_once(cls, work, *, count: int) -> None:
        """`work` on `count` threads started for it and ended after it (a cycle without a runner)."""
        workers = cls(count)
        try:
            workers.run(work)
        finally:
            workers.close()


def run_cycle(*, trigger: str = RecoveryCycle.Trigger.MANUAL, worker: str | None = None,
              shard: int | None = None, shard_count: int = 1, max_decisions: int | None = None,
              max_seconds: float | None = None, carried: CarriedBacklog | None = None,
              apply_workers: ApplyWorkers | None = None, mode: str | None = None) -> CycleReport:
    """One cycle over every active workflow, or over one shard (workflow_id % shard_count).

    Bounded: at most `max_decisions` decisions, and none started after `max_seconds`
    (RECOVERY_CYCLE_MAX_DECISIONS / _SECONDS by default; at least half of it is left for
    applying); what is left, oldest first next time, is recorded as the cycle's backlog. A
    cycle that leaves a backlog still succeeded.

    With `carried` (the runner's, for this shard), the backlog's ids are kept there, and a cycle
    that finds it ready decides the next of them instead of classifying the shard again. With
    `apply_workers` (the runner's), decisions are applied on its threads' warm connections.

    `mode` (RECOVERY_MODE by default): "observe" decides and journals each decision as observed
    and changes nothing else (docs/architecture.md §16); the budget and the backlog work alike."""
    started = time.monotonic()
    max_decisions = settings.RECOVERY_CYCLE_MAX_DECISIONS if max_decisions is None else max_decisions
    max_seconds = settings.RECOVERY_CYCLE_MAX_SECONDS if max_seconds is None else max_seconds
    mode = settings.RECOVERY_MODE if mode is None else mode
    observing = mode == RecoveryCycle.Mode.OBSERVE
    cycle = RecoveryCycle.objects.create(started_at=timezone.now(), trigger=trigger,
                                         worker=worker or worker_name(), shard=shard,
                                         shard_count=shard_count if shard is not None else 1, mode=mode)
    report = CycleReport(cycle_id=cycle.pk, succeeded=True, observing=observing)
    cycle_id_var.set(cycle.pk)  # every line until _finish carries the cycle id
    if carried is not None and carried.ready():
        ids = carried.take(max_decisions)
        needing = [(workflow_id, None) for workflow_id in ids]
        report.examined = len(ids)
        report.backlog = len(carried)
    else:
        classified_at = time.monotonic()
        try:
            classified = classify(shard=shard, shard_count=shard_count, keep=max_decisions, carry=carried is not None,
                                  workers=apply_workers)
        except Exception as exc:
            report.unreachable = database_unreachable(exc)
            if report.unreachable:  # no fault of the cycle's: one line, no traceback
                log.error("recovery cycle %s: the database is unreachable (%s); nothing was changed", cycle.pk,
                          str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
            else:
                log.exception("recovery cycle %s: the evidence query failed; nothing was changed", cycle.pk)
            _reset_broken_connection()
            report.succeeded = False
            report.error_text = f"evidence query failed: {exc}".strip()
            return _finish(cycle, report, started)
        needing = [(evidence.workflow_id, evidence) for evidence in classified.needing]
        report.examined = classified.examined
        report.backlog = classified.beyond_budget
        if carried is not None:
            carried.replace(classified.beyond_ids, classified_at)

    # The budget covers the whole cycle, but applying always gets at least half of it: a
    # classification that alone takes most of the budget (a very large or a starved shard) must
    # not leave no time to drain the backlog it found. Decisions still running at the deadline
    # and the cycle's own record take a little more: that allowance comes off the deadline.
    deadline = max(started + max_seconds, time.monotonic() + max_seconds / 2) - FINISH_ALLOWANCE_SECONDS
    if observing:
        results, not_started = _observe(needing, cycle_id=cycle.pk, deadline=deadline)
    else:
        results, not_started = _apply(needing, cycle_id=cycle.pk, deadline=deadline,
                                      workers=apply_workers or settings.RECOVERY_APPLY_WORKERS)
    report.backlog += not_started
    if carried is not None and not_started:
        if needing[0][1] is None:
            carried.give_back(not_started)
        else:  # classified this cycle: the ones not started go before those beyond the budget
            carried.replace(array("q", (workflow_id for workflow_id, _ in needing[-not_started:]))
                            + carried.remaining(), classified_at)
    for result in results:
        if result is None:
            report.errors += 1
        elif result.outcome is Outcome.APPLIED or result.outcome is Outcome.OBSERVED:
            report.decisions[result.decision.action.value] += 1
            if result.decision.reason:
                report.reasons[result.decision.reason.value] += 1
        elif result.outcome is Outcome.SKIPPED:
            report.skipped += 1
        elif result.outcome is Outcome.STALE:
            report.stale += 1
        else:
            report.left_after_recheck += 1
    return _finish(cycle, report, started)


def _finish(cycle: RecoveryCycle, report: CycleReport, started: float) -> CycleReport:
    report.duration_ms = round((time.monotonic() - started) * 1000)
    paused_total = None
    try:
        with connection.cursor() as cursor:
            cursor.execute(wms_sql.COUNT_PAUSED_WORKFLOWS)
            paused_total = cursor.fetchone()[0]
        RecoveryCycle.objects.filter(pk=cycle.pk).update(
            finished_at=timezone.now(),
            outcome=RecoveryCycle.Outcome.SUCCEEDED if report.succeeded else RecoveryCycle.Outcome.FAILED,
            examined=report.examined,
            decision_counts={**report.decisions, **{f"reason:{k}": v for k, v in report.reasons.items()}},
            skipped=report.skipped,
            stale=report.stale,
            errors=report.errors,
            backlog=report.backlog,
            duration_ms=report.duration_ms,
            paused_total=paused_total,
            error_text=report.error_text[:2000],
            database_unreachable=report.unreachable,
        )
    except DatabaseError as exc:
        if database_unreachable(exc):
            log.error("recovery cycle %s: could not record its end, the database is unreachable", cycle.pk)
        else:
            log.exception("recovery cycle %s: could not record its end", cycle.pk)
        _reset_broken_connection()
        report.succeeded = False
        report.unreachable = report.unreachable or database_unreachable(exc)
        report.error_text = report.error_text or f"could not record the cycle: {exc}"
    level = logging.INFO if report.succeeded else logging.ERROR
    log.log(level, report.summary())
    cycle_id_var.set(None)
    return report
