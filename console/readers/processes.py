"""Who runs recovery (docs/architecture.md §18): the qclusters seen in the last minutes through
the heartbeats their recovery processes write (recovery/runtime/processes.py), the shards each holds,
each shard's newest cycle, and what django-q2 itself reports of the clusters alive right now.
The processes page (/recovery/processes/) and `manage.py cluster_status` both read it."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django_q.models import OrmQ, Schedule
from django_q.status import Stat

from console.readers import fetch_rows
from console.readers import sql as readers_sql
from console.readers.recovery import RecoveryHealth, recovery_health

SEEN_WITHIN = timedelta(minutes=10)


def holds_within() -> timedelta:
    """A process holds its shards while its last beat is this recent: it beats once per interval
    (and at once when its shards change), so three intervals, at least 30 s."""
    return max(timedelta(seconds=30), 3 * timedelta(seconds=settings.RECOVERY_INTERVAL_SECONDS))


@dataclass(frozen=True)
class ClusterSeen:
    """One qcluster (host and pid of its sentinel) as its recovery processes reported it."""

    cluster: str
    host: str
    pid: int
    started_at: datetime  # its first process's first beat (the start-up cycle's)
    last_heartbeat: datetime
    shards: tuple[int, ...]  # held now (by a process that beat within holds_within())
    workers: tuple[str, ...]  # its worker processes seen (host:pid)
    live: Stat | None = None  # django-q2's statistics while the cluster runs (a few seconds' cache)

    @property
    def holds_now(self) -> bool:
        return bool(self.shards)


@dataclass(frozen=True)
class ShardCycle:
    shard: int
    held_by: str | None  # the cluster holding it now
    cycle_id: int | None
    started_at: datetime | None
    finished_at: datetime | None
    outcome: str | None
    worker: str | None
    trigger: str | None
    duration_ms: int | None
    examined: int | None
    errors: int | None


@dataclass(frozen=True)
class ScheduleRow:
    name: str
    func: str
    next_run: datetime | None


@dataclass(frozen=True)
class ClusterStatus:
    now: datetime
    seen_within: timedelta
    clusters: list[ClusterSeen]
    shards: list[ShardCycle]
    live_only: list[Stat]  # clusters django-q2 reports that have no recovery heartbeat yet
    queued: int
    schedules: list[ScheduleRow]
    health: RecoveryHealth
    shard_count: int = 1
    unheld: tuple[int, ...] = field(default=())  # shards no process holds now


def cluster_status(*, now: datetime | None = None) -> ClusterStatus:
    """Everything `cluster_status` prints and the processes page shows: a handful of statements,
    however many cycles or clusters there are."""
    now = now or timezone.now()
    shard_count = max(1, int(settings.RECOVERY_SHARDS))
    fresh = now - holds_within()
    rows = fetch_rows(readers_sql.PROCESSES_SEEN, {"since": now - SEEN_WITHIN})
    stats = {str(s.cluster_id): s for s in Stat.get_all()}
    stats_by_host_pid = {(s.host, s.pid): s for s in stats.values()}
    grouped: dict[str, list[tuple]] = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row)
    clusters, holder = [], {}
    for cluster, procs in grouped.items():
        held = sorted({int(s) for p in procs if p[5] >= fresh for s in (p[6] or [])})
        for shard in held:
            holder.setdefault(shard, cluster)
        host, pid = procs[0][1], procs[0][2]
        clusters.append(ClusterSeen(
            cluster=cluster, host=host, pid=pid, started_at=min(p[4] for p in procs),
            last_heartbeat=max(p[5] for p in procs), shards=tuple(held), workers=tuple(p[3] for p in procs),
            live=stats_by_host_pid.get((host, pid))))
    clusters.sort(key=lambda c: (c.host, c.pid))
    # An unsharded set-up has one lease: the process holding "shard 0" holds everything.
    shards = [ShardCycle(row[0], holder.get(row[0]), *row[1:]) for row in
              fetch_rows(readers_sql.SHARD_LAST_CYCLES, {"shard_count": shard_count})]
    seen = {(c.host, c.pid) for c in clusters}
    live_only = sorted((s for s in stats.values() if (s.host, s.pid) not in seen),
                       key=lambda s: (s.host, str(s.cluster_id)))
    schedules = [ScheduleRow(s.name, s.func, s.next_run) for s in Schedule.objects.order_by("name")]
    return ClusterStatus(now=now, seen_within=SEEN_WITHIN, clusters=clusters, shards=shards, live_only=live_only,
                         queued=OrmQ.objects.count(), schedules=schedules, health=recovery_health(),
                         shard_count=shard_count,
                         unheld=tuple(s.shard for s in shards if s.held_by is None))
