"""One recovery cycle: classify every active workflow with one query, then reconcile only the
workflows whose decision changes state, each in its own short transaction (docs/architecture.md §6)."""

import contextvars
import logging
import os
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.utils import timezone

from recovery import wms_sql
from recovery.decisions import decide
from recovery.evidence import stream_active_evidence
from recovery.logcontext import cycle_id_var
from recovery.models import RecoveryCycle
from recovery.oplog import log_recovery_result
from recovery.transaction import Outcome, reconcile_workflow

log = logging.getLogger(__name__)


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

    def summary(self) -> str:
        applied = ", ".join(f"{k.lower()}={v}" for k, v in sorted(self.decisions.items())) or "none"
        status = "succeeded" if self.succeeded else f"FAILED: {self.error_text}"
        return (f"cycle {self.cycle_id} {status}: examined={self.examined} applied[{applied}] "
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
    needing: list  # TidyRecoveryEvidence of the oldest workflows needing a decision, within the budget
    beyond_budget: int  # further workflows needing a decision, left to the next cycle


def classify(*, shard: int | None = None, shard_count: int = 1, keep: int) -> Classification:
    """Stream every active workflow (of one shard) through decide(); keep the evidence of the
    first `keep` needing a change, oldest first, and only count the rest: memory stays bounded
    by the budget, not by the active set or the backlog."""
    examined = beyond = 0
    needing = []
    for evidence in stream_active_evidence(shard=shard, shard_count=shard_count):
        examined += 1
        if decide(evidence).changes_state:
            if len(needing) < keep:
                needing.append(evidence)
            else:
                beyond += 1
    return Classification(examined, needing, beyond)


# Decision transactions run on settings.RECOVERY_APPLY_WORKERS connections at once when a cycle
# has at least APPLY_IN_PARALLEL_FROM of them. Each stays one short transaction of one workflow, under its row
# lock taken with SKIP LOCKED (docs/architecture.md §6), so the workers never wait for each other;
# what they overlap is each transaction's round trips and its commit's WAL flush, which several
# committing sessions share. Fewer decisions than that are not worth opening connections for.
APPLY_IN_PARALLEL_FROM = 16


def _reconcile(evidence, cycle_id: int):
    """One workflow's decision transaction; its ReconcileResult, or None when it failed."""
    try:
        result = reconcile_workflow(evidence.workflow_id, cycle_id=cycle_id, classified=evidence)
    except Exception:
        # Never evidence: the transaction rolled back and the workflow stays as it was.
        log.exception("recovery cycle %s: workflow %s failed and was rolled back", cycle_id,
                      evidence.workflow_id, extra={"workflow_id": evidence.workflow_id})
        _reset_broken_connection()
        return None
    log_recovery_result(cycle_id=cycle_id, evidence=evidence, result=result)
    return result


def _apply(needing: list, *, cycle_id: int, deadline: float, workers: int) -> tuple[list, int]:
    """Reconcile `needing` oldest first, none started after `deadline`: (the results of those
    started, how many were not started)."""
    if workers <= 1 or len(needing) < APPLY_IN_PARALLEL_FROM:
        results = []
        for evidence in needing:
            if time.monotonic() >= deadline:
                break
            results.append(_reconcile(evidence, cycle_id))
        return results, len(needing) - len(results)

    pending = iter(needing)
    taking = threading.Lock()
    results = []  # list.append is atomic; the order of results does not matter

    def worker() -> None:
        try:
            while True:
                with taking:
                    if time.monotonic() >= deadline:
                        return
                    evidence = next(pending, None)
                if evidence is None:
                    return
                results.append(_reconcile(evidence, cycle_id))
        finally:
            connections.close_all()  # this thread's own connection

    # Each thread runs in a copy of this context, so its log lines carry the cycle id too.
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(worker,), name=f"recovery-apply-{i}")
               for i in range(min(workers, len(needing)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, len(needing) - len(results)


def run_cycle(*, trigger: str = RecoveryCycle.Trigger.MANUAL, worker: str | None = None,
              shard: int | None = None, shard_count: int = 1, max_decisions: int | None = None,
              max_seconds: float | None = None) -> CycleReport:
    """One cycle over every active workflow, or over one shard (workflow_id % shard_count).

    Bounded: at most `max_decisions` decisions, and none started after `max_seconds`
    (RECOVERY_CYCLE_MAX_DECISIONS / _SECONDS by default; at least half of it is left for
    applying); what is left, oldest first next time, is recorded as the cycle's backlog. A
    cycle that leaves a backlog still succeeded."""
    started = time.monotonic()
    max_decisions = settings.RECOVERY_CYCLE_MAX_DECISIONS if max_decisions is None else max_decisions
    max_seconds = settings.RECOVERY_CYCLE_MAX_SECONDS if max_seconds is None else max_seconds
    cycle = RecoveryCycle.objects.create(started_at=timezone.now(), trigger=trigger,
                                         worker=worker or worker_name(), shard=shard,
                                         shard_count=shard_count if shard is not None else 1)
    report = CycleReport(cycle_id=cycle.pk, succeeded=True)
    cycle_id_var.set(cycle.pk)  # every line until _finish carries the cycle id
    try:
        classified = classify(shard=shard, shard_count=shard_count, keep=max_decisions)
    except Exception as exc:
        log.exception("recovery cycle %s: the evidence query failed; nothing was changed", cycle.pk)
        _reset_broken_connection()
        report.succeeded = False
        report.error_text = f"evidence query failed: {exc}".strip()
        return _finish(cycle, report, started)

    report.examined = classified.examined
    report.backlog = classified.beyond_budget
    # The budget covers the whole cycle, but applying always gets at least half of it: a
    # classification that alone takes most of the budget (a very large or a starved shard) must
    # not leave no time to drain the backlog it found.
    deadline = max(started + max_seconds, time.monotonic() + max_seconds / 2)
    results, not_started = _apply(classified.needing, cycle_id=cycle.pk, deadline=deadline,
                                  workers=settings.RECOVERY_APPLY_WORKERS)
    report.backlog += not_started
    for result in results:
        if result is None:
            report.errors += 1
        elif result.outcome is Outcome.APPLIED:
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
        )
    except DatabaseError as exc:
        log.exception("recovery cycle %s: could not record its end", cycle.pk)
        _reset_broken_connection()
        report.succeeded = False
        report.error_text = report.error_text or f"could not record the cycle: {exc}"
    level = logging.INFO if report.succeeded else logging.ERROR
    log.log(level, report.summary())
    cycle_id_var.set(None)
    return report
