"""Flow health: is the tidy queue draining? (backlog, arrivals against completions, the oldest job)."""


from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min
from django.db.models.functions import TruncMinute
from django.utils import timezone

from console.readers import sql as readers_sql
from console.replica import read_connection
from recovery.engine.evidence import TIDY_MOVE
from recovery.models import (
    TIDY_JOB_ID,
    MydoJob,
    MydoJobFinish,
    TidyWorkflow,
)

PAUSED = TidyWorkflow.Status.PAUSED_RECOVERY
ACTIVE = TidyWorkflow.Status.ACTIVE


# --- flow health: is the tidy queue draining? (backlog, arrivals vs completions) -------------


@dataclass(frozen=True)
class FlowHealth:
    now: datetime
    window: timedelta
    backlog: int
    backlog_by_status: dict[int, int]
    oldest_created_at: datetime | None
    arrivals: int  # tidy jobs created in the window (still active or already finished)
    completions: int  # tidy jobs finished in the window
    per_minute: list[tuple[datetime, int, int]]  # (minute, arrivals, completions)

    @property
    def minutes(self) -> float:
        return self.window.total_seconds() / 60

    @property
    def arrival_rate(self) -> float:
        return self.arrivals / self.minutes

    @property
    def completion_rate(self) -> float:
        return self.completions / self.minutes

    @property
    def net_drain_rate(self) -> float:
        """Jobs per minute the backlog shrinks by (negative: it grows)."""
        return self.completion_rate - self.arrival_rate

    @property
    def oldest_age(self) -> timedelta | None:
        return self.now - self.oldest_created_at if self.oldest_created_at else None

    @property
    def drain_time(self) -> timedelta | None:
        """Projected time to drain the backlog at the current rates; None when it does not drain."""
        if self.backlog == 0:
            return timedelta(0)
        if self.net_drain_rate <= 0:
            return None
        return timedelta(minutes=self.backlog / self.net_drain_rate)


def flow_health(*, window: timedelta = timedelta(hours=1)) -> FlowHealth:
    now = timezone.now()
    since = now - window
    active = MydoJob.objects.filter(in_or_out=TIDY_MOVE)
    by_status = {r["status"]: r["n"] for r in active.values("status").annotate(n=Count("pk")).order_by("status")}
    oldest = active.aggregate(oldest=Min("created_at"))["oldest"]
    # mydo_job_finish_finished_at_idx: a job created in the window also finished in it.
    finished = MydoJobFinish.objects.filter(in_or_out=TIDY_MOVE, finished_at__gte=since)
    minutes: dict[datetime, list[int]] = defaultdict(lambda: [0, 0])
    arrived = (active.filter(created_at__gte=since), finished.filter(created_at__gte=since))
    for qs in arrived:
        for r in qs.annotate(m=TruncMinute("created_at")).values("m").annotate(n=Count("pk")).order_by():
            minutes[r["m"]][0] += r["n"]
    for r in finished.annotate(m=TruncMinute("finished_at")).values("m").annotate(n=Count("pk")).order_by():
        minutes[r["m"]][1] += r["n"]
    arrivals = sum(v[0] for v in minutes.values())
    completions = sum(v[1] for v in minutes.values())
    start = since.replace(second=0, microsecond=0)
    series = []
    for i in range(int(window.total_seconds() // 60) + 1):
        m = start + timedelta(minutes=i)
        a, c = minutes.get(m, (0, 0))
        series.append((m, a, c))
    return FlowHealth(now=now, window=window, backlog=sum(by_status.values()), backlog_by_status=by_status,
                      oldest_created_at=oldest, arrivals=arrivals, completions=completions, per_minute=series)




# --- flow health's oldest job ----------------------------------------------------------------


@dataclass(frozen=True)
class OldestJob:
    job_id: str
    workflow_id: int | None  # None: not a TDY-<workflow>-<step> id
    created_at: datetime


def oldest_tidy_job() -> OldestJob | None:
    """The oldest active tidy move job and its workflow (what `/flow/`'s oldest age is about)."""
    job = (MydoJob.objects.filter(in_or_out=TIDY_MOVE).order_by("created_at", "job_id")
           .values("job_id", "created_at").first())
    if job is None:
        return None
    match = TIDY_JOB_ID.fullmatch(job["job_id"])
    return OldestJob(job["job_id"], int(match.group(1)) if match else None, job["created_at"])


# --- job ages and durations: the same percentiles /metrics exposes ----------------------------

# The quantile label values of the summary tidy_active_job_age_seconds, and the JobAges field of
# each; the summary's _count is `jobs` and its _sum is `total`.
AGE_QUANTILES = (("0.5", "p50"), ("0.95", "p95"), ("1", "oldest"))


@dataclass(frozen=True)
class JobAges:
    """The active tidy move jobs' ages in seconds (None: no active job)."""

    jobs: int
    in_progress: int  # status 2 or 3: the WCS has taken them
    p50: float | None
    p95: float | None
    oldest: float | None
    total: float = 0.0  # the sum of the ages (the summary's _sum)

    def quantiles(self) -> dict[str, float]:
        """Per quantile label value, the age (0 when there is no active job, as the oldest age's gauge)."""
        return {label: getattr(self, name) or 0.0 for label, name in AGE_QUANTILES}


@dataclass(frozen=True)
class JobDurations:
    """How long the tidy move jobs finished in a window took, creation to finish, in seconds."""

    window: timedelta
    jobs: int
    p50: float | None
    p95: float | None
    longest: float | None


def active_job_ages(cursor=None) -> JobAges:
    """readers_sql.ACTIVE_JOB_AGES; `cursor`: the caller's (the metrics scrape reads everything
    in one transaction), else a new one."""
    if cursor is None:
        with read_connection().cursor() as own:
            return active_job_ages(own)
    cursor.execute(readers_sql.ACTIVE_JOB_AGES)
    return JobAges(*cursor.fetchone())


def completed_job_durations(*, window: timedelta = timedelta(hours=1), now: datetime | None = None) -> JobDurations:
    since = (now or timezone.now()) - window
    with read_connection().cursor() as cursor:
        cursor.execute(readers_sql.COMPLETED_JOB_DURATIONS, {"since": since})
        return JobDurations(window, *cursor.fetchone())
