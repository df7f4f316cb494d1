"""GET /metrics: Prometheus text format, read from the database at scrape time.

A custom collector (no in-process counters), so every gunicorn worker and every web node
answers the same numbers without prometheus-client's multiprocess mode. Counters come from
the journal plus the totals the retention task folds in before deleting (recovery/runtime/retention.py),
so they never decrease.
"""

import hmac
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db import DatabaseError, transaction
from django.http import HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from console.database.timeouts import is_statement_timeout
from console.models import NotificationDelivery
from console.notifications.selectors import open_notification_counts
from console.operations import sql as operations_sql
from console.readers import sql as readers_sql
from console.readers.flow import active_job_ages
from console.readers.recovery import recovery_health
from console.readers.stalled import stalled_before
from console.replica import read_alias, read_connection, replica_configured, replica_state
from recovery.engine.callbacks import DURATION_BUCKETS
from recovery.engine.decisions import PAUSE_REASONS, Action
from recovery.models import CallbackReceipt

DECISIONS = (Action.ADVANCE.value, Action.COMPLETE.value, Action.PAUSE.value)
# A pause reason is WMS text and can be anything: only the known codes are label values, every
# other reason (and none) is counted as `other`, so the number of series stays fixed.
OTHER_REASON = "other"
KNOWN_REASONS = frozenset(r.value for r in PAUSE_REASONS)
DELIVERY_OUTCOMES = {True: "sent", False: "failed"}
# tidy_outbound_requests_total's label values (recovery/runtime/retention_sql.py: OUTBOUND_TARGET, OUTBOUND_OUTCOME).
OUTBOUND_TARGETS = ("wcs_snapshot", "webhook")
OUTBOUND_OUTCOMES = ("ok", "http_error", "no_answer")
# A journal never folded yet counts every row: from before any journal row (as retention's first
# fold starts, recovery/runtime/retention_sql.py ENSURE_FOLD_ROW).
NEVER_FOLDED = datetime(1970, 1, 1, tzinfo=UTC)


def reason_label(reason: str | None) -> str:
    return reason if reason in KNOWN_REASONS else OTHER_REASON


@dataclass
class MetricsSnapshot:
    active: int = 0
    stalled: int = 0
    paused_by_reason: dict[str, int] = field(default_factory=dict)
    paused_oldest_age: float = 0.0
    retained_locks: int = 0
    job_backlog: int = 0
    job_oldest_age: float = 0.0
    last_success_age: float = math.inf  # no successful cycle ever: infinitely stale
    last_cycle_duration: float = math.nan
    decisions: dict[str, int] = field(default_factory=dict)
    callbacks: dict[tuple[str, str], int] = field(default_factory=dict)
    notifications_open: dict[str, int] = field(default_factory=dict)
    recovery_backlog: int = 0
    deliveries: dict[tuple[str, str], int] = field(default_factory=dict)
    wcs_last_heard_age: float = math.inf  # never heard (within the journal's retention)
    outbound: dict[tuple[str, str], int] = field(default_factory=dict)
    jobs_in_progress: int = 0
    job_age_quantiles: dict[str, float] = field(default_factory=dict)
    active_jobs: int = 0
    job_age_sum: float = 0.0
    callback_unknown_fields: dict[tuple[str, str], int] = field(default_factory=dict)
    # Per endpoint: each bucket's own count by upper bound (math.inf last) and the sum in seconds.
    callback_durations: dict[str, tuple[dict[float, float], float]] = field(default_factory=dict)
    log_records_dropped: int = 0


def metrics_snapshot() -> MetricsSnapshot:
    snap = MetricsSnapshot(
        paused_by_reason={**dict.fromkeys(KNOWN_REASONS, 0), OTHER_REASON: 0},
        decisions=dict.fromkeys(DECISIONS, 0),
        callbacks={(e.value, o.value): 0 for e in CallbackReceipt.Endpoint for o in CallbackReceipt.Outcome},
    )
    # On the replica when the scrape reads from it (console.replica); the statement timeout is set on
    # every connection the request reads (console.database.timeouts).
    with transaction.atomic(using=read_alias()), read_connection().cursor() as cursor:
        oldest_paused = []
        cursor.execute(operations_sql.WORKFLOW_COUNTS)
        for status, reason, count, oldest_age in cursor.fetchall():
            if status == "ACTIVE":
                snap.active += count
            else:
                key = reason_label(reason)
                snap.paused_by_reason[key] = snap.paused_by_reason.get(key, 0) + count
                oldest_paused.append(oldest_age)
        snap.paused_oldest_age = max(oldest_paused, default=0.0)
        cursor.execute(readers_sql.ACTIVE_COUNTS, {"stalled_before": stalled_before()})
        snap.stalled = cursor.fetchone()[1]
        cursor.execute(operations_sql.RETAINED_LOCKS)
        snap.retained_locks = cursor.fetchone()[0]
        cursor.execute(operations_sql.JOB_BACKLOG)
        snap.job_backlog, oldest_job = cursor.fetchone()
        snap.job_oldest_age = oldest_job or 0.0
        cursor.execute(operations_sql.LAST_SUCCESS_AGE)
        if row := cursor.fetchone():
            snap.last_success_age = row[0]
        cursor.execute(operations_sql.LAST_CYCLE_DURATION)
        if (row := cursor.fetchone()) and row[0] is not None:
            snap.last_cycle_duration = row[0] / 1000.0
        cursor.execute(operations_sql.JOURNAL_WATERMARKS)
        since = dict(cursor.fetchall())
        cursor.execute(operations_sql.RECOVERY_DECISION_COUNTS, {"since": since.get("decisions", NEVER_FOLDED)})
        for action, total in cursor.fetchall():
            snap.decisions[action] = total
        cursor.execute(operations_sql.CALLBACK_COUNTS, {"since": since.get("callbacks", NEVER_FOLDED)})
        for endpoint, outcome, total in cursor.fetchall():
            snap.callbacks[(endpoint, outcome)] = total
        # Every channel at 0: the built-in ones but `chat` (its rows count under their channel's
        # name), and each configured chat channel by name.
        labels = [c.value for c in NotificationDelivery.Channel if c != NotificationDelivery.Channel.CHAT]
        labels += [c.name for c in settings.NOTIFY_CHANNELS]
        snap.deliveries = {(c, o): 0 for c in labels for o in DELIVERY_OUTCOMES.values()}
        cursor.execute(operations_sql.NOTIFICATION_DELIVERY_COUNTS)
        for channel, ok, total in cursor.fetchall():
            key = (channel, DELIVERY_OUTCOMES[ok])
            snap.deliveries[key] = snap.deliveries.get(key, 0) + total
        cursor.execute(operations_sql.WCS_LAST_HEARD_AGE)
        if (row := cursor.fetchone()) and row[0] is not None:
            snap.wcs_last_heard_age = row[0]
        snap.outbound = {(t, o): 0 for t in OUTBOUND_TARGETS for o in OUTBOUND_OUTCOMES}
        cursor.execute(operations_sql.OUTBOUND_REQUEST_COUNTS, {"since": since.get("outbound", NEVER_FOLDED)})
        for target, outcome, total in cursor.fetchall():
            snap.outbound[(target, outcome)] = total
        ages = active_job_ages(cursor)
        snap.jobs_in_progress = ages.in_progress
        snap.job_age_quantiles = ages.quantiles()
        snap.active_jobs, snap.job_age_sum = ages.jobs, ages.total
        cursor.execute(operations_sql.CALLBACK_UNKNOWN_FIELD_COUNTS)
        for endpoint, name, total in cursor.fetchall():
            snap.callback_unknown_fields[(endpoint, name)] = total
        snap.callback_durations = _callback_durations(cursor, since.get("callbacks", NEVER_FOLDED))
        cursor.execute(operations_sql.LOG_RECORDS_DROPPED)
        snap.log_records_dropped = cursor.fetchone()[0]
        snap.notifications_open = open_notification_counts()
        snap.recovery_backlog = recovery_health().backlog
    return snap


def _callback_durations(cursor, since: datetime) -> dict[str, tuple[dict[float, float], float]]:
    bounds = (*DURATION_BUCKETS, math.inf)
    durations = {e.value: (dict.fromkeys(bounds, 0.0), 0.0) for e in CallbackReceipt.Endpoint}
    cursor.execute(operations_sql.CALLBACK_DURATION_BUCKETS, {"bounds": list(DURATION_BUCKETS), "since": since})
    for endpoint, bucket, total in cursor.fetchall():
        counts, seconds = durations.setdefault(endpoint, (dict.fromkeys(bounds, 0.0), 0.0))
        if bucket == "_sum_us":
            durations[endpoint] = (counts, seconds + total / 1_000_000)
        else:
            counts[float(bucket)] = counts.get(float(bucket), 0.0) + total
    return durations


def _duration_histogram(durations: dict[str, tuple[dict[float, float], float]]) -> HistogramMetricFamily:
    histogram = HistogramMetricFamily("tidy_callback_duration_seconds",
                                      "Time the console took to answer an authenticated WCS callback, per endpoint.",
                                      labels=["endpoint"])
    for endpoint, (counts, seconds) in sorted(durations.items()):
        cumulative, buckets = 0.0, []
        for bound in sorted(counts):
            cumulative += counts[bound]
            buckets.append(("+Inf" if bound == math.inf else repr(bound), cumulative))
        histogram.add_metric([endpoint], buckets, seconds)
    return histogram


def _job_age_summary(s: MetricsSnapshot) -> Metric:
    """tidy_active_job_age_seconds: a summary over the active tidy jobs read at scrape time, with
    the quantiles 0.5, 0.95 and 1 (prometheus-client's SummaryMetricFamily takes no quantiles)."""
    name = "tidy_active_job_age_seconds"
    summary = Metric(name, "Ages of the active tidy jobs: median, 95th percentile and oldest (0 when none), "
                           "how many and the sum of their ages.", "summary")
    for quantile, age in s.job_age_quantiles.items():
        summary.add_sample(name, {"quantile": quantile}, age)
    summary.add_sample(f"{name}_count", {}, s.active_jobs)
    summary.add_sample(f"{name}_sum", {}, s.job_age_sum)
    return summary


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class ConsoleCollector(Collector):
    """Every metric of the operations contract; one database read per scrape."""

    def collect(self):
        s = metrics_snapshot()
        yield _gauge("tidy_active_workflows", "ACTIVE tidy workflows.", s.active)
        yield _gauge("tidy_stalled_workflows",
                     "ACTIVE workflows whose current job (status 1-3) has not changed for STALLED_AFTER_MINUTES.",
                     s.stalled)
        paused = GaugeMetricFamily("tidy_paused_workflows", "PAUSED_RECOVERY workflows per pause reason.",
                                   labels=["reason"])
        for reason, count in sorted(s.paused_by_reason.items()):
            paused.add_metric([reason], count)
        yield paused
        yield _gauge("tidy_paused_oldest_age_seconds", "Age of the oldest paused workflow (0 when none).",
                     s.paused_oldest_age)
        yield _gauge("tidy_retained_locks", "Cargo-space locks held by paused workflows.", s.retained_locks)
        yield _gauge("tidy_job_backlog", "Active tidy move jobs (mydo_job, in_or_out 28).", s.job_backlog)
        yield _gauge("tidy_job_oldest_age_seconds", "Age of the oldest active tidy job (0 when none).",
                     s.job_oldest_age)
        yield _gauge("tidy_recovery_last_success_age_seconds",
                     "Seconds since the last successful recovery cycle ended (+Inf when none).",
                     s.last_success_age)
        yield _gauge("tidy_recovery_backlog",
                     "Workflows the newest successful cycle (of each shard) left for the next one: a draining "
                     "backlog after a restart, not a stale recovery.", s.recovery_backlog)
        yield _gauge("tidy_recovery_last_cycle_duration_seconds", "Duration of the newest finished recovery cycle.",
                     s.last_cycle_duration)
        decisions = CounterMetricFamily("tidy_recovery_decisions", "Decisions the background recovery applied.",
                                        labels=["decision"])
        for decision, total in sorted(s.decisions.items()):
            decisions.add_metric([decision], total)
        yield decisions
        callbacks = CounterMetricFamily("tidy_callbacks", "WCS callbacks received, per endpoint and outcome.",
                                        labels=["endpoint", "outcome"])
        for (endpoint, outcome), total in sorted(s.callbacks.items()):
            callbacks.add_metric([endpoint, outcome], total)
        yield callbacks
        unknown = CounterMetricFamily("tidy_callback_unknown_fields",
                                      "Top-level fields of WCS callbacks the contract does not name (ignored), per "
                                      "endpoint and field (cut to 64 characters; 'other' past 50 names in all).",
                                      labels=["endpoint", "field"])
        for (endpoint, name), total in sorted(s.callback_unknown_fields.items()):
            unknown.add_metric([endpoint, name], total)
        yield unknown
        yield _duration_histogram(s.callback_durations)
        notifications = GaugeMetricFamily("tidy_notifications_open",
                                          "Notifications open (neither acknowledged nor resolved), per event.",
                                          labels=["event"])
        for event, count in sorted(s.notifications_open.items()):
            notifications.add_metric([event], count)
        yield notifications
        deliveries = CounterMetricFamily("tidy_notification_deliveries",
                                         "Notification delivery attempts, per channel and outcome (sent, failed).",
                                         labels=["channel", "outcome"])
        for (channel, outcome), total in sorted(s.deliveries.items()):
            deliveries.add_metric([channel, outcome], total)
        yield deliveries
        # Communication quality (docs/architecture.md §17).
        yield _gauge("tidy_wcs_last_heard_age_seconds",
                     "Seconds since the last authenticated WCS callback of any kind (+Inf when none).",
                     s.wcs_last_heard_age)
        yield _gauge("tidy_wcs_jobs_in_progress",
                     "Active tidy jobs the WCS has taken (status 2 or 3): callbacks about them are due.",
                     s.jobs_in_progress)
        outbound = CounterMetricFamily("tidy_outbound_requests",
                                       "Outbound HTTP requests per target (wcs_snapshot, webhook) and outcome "
                                       "(ok, http_error, no_answer).", labels=["target", "outcome"])
        for (target, outcome), total in sorted(s.outbound.items()):
            outbound.add_metric([target, outcome], total)
        yield outbound
        yield _job_age_summary(s)
        yield CounterMetricFamily("tidy_log_records_dropped",
                                  "Log lines dropped because a process's log output did not keep up (every process).",
                                  value=s.log_records_dropped)
        if replica_configured():  # only with DATABASE_REPLICA_URL set (design §16)
            state = replica_state(fresh=True)
            yield _gauge("tidy_replica_lag_seconds",
                         "Seconds the read replica's replay is behind the primary (0 when it has replayed all it "
                         "received; NaN when it does not answer).",
                         state.lag_seconds if state.answering else math.nan)


def _authorized(request) -> bool:
    expected = settings.METRICS_TOKEN
    if not expected:
        # No token: open on the embedded development database, closed on a configured one
        # (the warehouse's state is nobody's business without one).
        return settings.EMBEDDED_DATABASE
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected.encode())


def metrics(request):
    if request.method not in ("GET", "HEAD"):
        response = HttpResponse(f"{request.method} is not allowed; use GET\n", status=405,
                                content_type="text/plain; charset=utf-8")
        response["Allow"] = "GET, HEAD"
        return response
    if not _authorized(request):
        response = HttpResponse("a valid 'Authorization: Bearer <METRICS_TOKEN>' header is required\n", status=401,
                                content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConsoleCollector())
    try:
        body = generate_latest(registry)
    except DatabaseError as exc:
        if is_statement_timeout(exc):  # answered by the timeout's own 503, which names it
            raise
        # The scrape fails (Prometheus sets up=0) and says why, without a stack trace page.
        return HttpResponse(f"the database did not answer: {type(exc).__name__}\n", status=503,
                            content_type="text/plain; charset=utf-8")
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
