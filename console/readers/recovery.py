"""Recovery health: the last cycles, whether recovery is stale, retained locks, refused callbacks."""


from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from console.readers import fetch_rows
from console.readers import sql as readers_sql
from recovery.models import (
    CallbackReceipt,
    RecoveryCycle,
    TidySpaceLock,
    TidyWorkflow,
)

PAUSED = TidyWorkflow.Status.PAUSED_RECOVERY
ACTIVE = TidyWorkflow.Status.ACTIVE


# --- recovery health -------------------------------------------------------------------------


def last_cycle() -> RecoveryCycle | None:
    """The newest finished cycle, whatever its outcome."""
    return RecoveryCycle.objects.exclude(outcome=RecoveryCycle.Outcome.RUNNING).order_by("-started_at").first()


def retained_lock_count() -> int:
    return TidySpaceLock.objects.filter(workflow__status=PAUSED).count()


def stale_after() -> timedelta:
    return timedelta(seconds=settings.RECOVERY_STALE_AFTER_INTERVALS * settings.RECOVERY_INTERVAL_SECONDS)


@dataclass(frozen=True)
class RecoveryHealth:
    last_success: RecoveryCycle | None
    latest: RecoveryCycle | None  # the newest cycle of any outcome (may be RUNNING or FAILED)
    stale_after: timedelta
    now: datetime
    # Workflows needing a decision that the newest successful cycles (one per shard) left to the
    # next cycle by their budget: recovery is draining, not stale, while cycles keep succeeding.
    backlog: int = 0
    # Sharded recovery: shards without a successful cycle within stale_after (a shard nobody
    # recovers is stale even while the other shards' cycles succeed).
    stale_shards: tuple[int, ...] = ()

    @property
    def draining(self) -> bool:
        return self.backlog > 0 and not self.stale

    @property
    def success_age(self) -> timedelta | None:
        if self.last_success is None or self.last_success.finished_at is None:
            return None
        return self.now - self.last_success.finished_at

    @property
    def stale(self) -> bool:
        age = self.success_age
        return age is None or age > self.stale_after or bool(self.stale_shards)

    @property
    def latest_failed(self) -> bool:
        return self.latest is not None and self.latest.outcome == RecoveryCycle.Outcome.FAILED


def recovery_health() -> RecoveryHealth:
    """The last successful cycle and the newest cycle, in one query (every live page asks).

    Named SQL rather than an ORM union: the union's compilation cost more than the query."""
    found = {c.kind: c for c in RecoveryCycle.objects.raw(readers_sql.RECOVERY_HEALTH_CYCLES)}
    last_success = found.get("success")
    backlog, stale_shards = _shard_backlog(last_success)
    return RecoveryHealth(last_success=last_success, latest=found.get("latest"), stale_after=stale_after(),
                          now=timezone.now(), backlog=backlog, stale_shards=stale_shards)


def _shard_backlog(last_success: RecoveryCycle | None) -> tuple[int, tuple[int, ...]]:
    """The backlog the newest successful cycle of each shard left, and the shards with no
    successful cycle within stale_after, by the statement /health/ready reads too; one cycle
    covers every workflow when recovery is not sharded (no further query then)."""
    if last_success is None or last_success.shard is None:
        return (last_success.backlog if last_success else 0), ()
    ((_, stale_shards, backlog),) = fetch_rows(readers_sql.READY_RECOVERY_FACTS,
                                                {"stale_after_seconds": stale_after().total_seconds()})
    return backlog, tuple(stale_shards)


def recent_cycles(*, limit: int = 50) -> list[RecoveryCycle]:
    return list(RecoveryCycle.objects.order_by("-started_at")[:limit])


REFUSAL_WINDOW = timedelta(hours=24)
# A stale report (an older sequence than the job's highest) is late delivery, not a refusal: it
# changed nothing and WCS and WMS do not disagree.
ACCEPTED_OUTCOMES = (CallbackReceipt.Outcome.ACCEPTED, CallbackReceipt.Outcome.DUPLICATE,
                     CallbackReceipt.Outcome.STALE_REPORT)


@dataclass(frozen=True)
class CallbackRefusals:
    """WCS callbacks refused in the last `window`, per (endpoint, outcome), 401s included."""

    window: timedelta
    counts: list[tuple[str, str, int]]  # (endpoint, outcome, requests), most first
    last_unauthorized: CallbackReceipt | None

    @property
    def total(self) -> int:
        return sum(n for _, _, n in self.counts)

    @property
    def hours(self) -> int:
        return round(self.window.total_seconds() / 3600)


def callback_refusals(*, window: timedelta = REFUSAL_WINDOW) -> CallbackRefusals:
    """Index callback_receipt_time_idx bounds both reads to the window."""
    since = timezone.now() - window
    recent = CallbackReceipt.objects.filter(received_at__gte=since).exclude(outcome__in=ACCEPTED_OUTCOMES)
    counts = [(r["endpoint"], r["outcome"], r["requests"]) for r in
              recent.values("endpoint", "outcome").annotate(requests=Sum("request_count"))
              .order_by("-requests", "endpoint", "outcome")]
    last = recent.filter(outcome=CallbackReceipt.Outcome.UNAUTHORIZED).order_by("-received_at", "-id").first()
    return CallbackRefusals(window=window, counts=counts, last_unauthorized=last)


