"""What every qcluster is doing, from any machine: django-q2's cluster statistics live in the
shared database cache (settings.CACHES) for a few seconds, and each recovery process's heartbeat
in the database (recovery/runtime/processes.py), so this works wherever the environment points at the
same database. It needs no terminal library (django-q2's qinfo/qmonitor need `blessed`). The
console's /recovery/processes/ page shows the same (console.readers.processes)."""

from django.core.management.base import BaseCommand

from console.readers.processes import cluster_status


def _seconds(delta) -> str:
    return f"{delta.total_seconds():.0f} s"


class Command(BaseCommand):
    help = ("List the running qclusters, the recovery processes seen in the last 10 minutes and the shards "
            "they hold, each shard's last cycle, the task queue, the schedules and recovery's last success.")

    def handle(self, *args, **options):
        status = cluster_status()
        now = status.now
        live = sorted([c.live for c in status.clusters if c.live is not None] + status.live_only,
                      key=lambda s: (s.host, str(s.cluster_id)))
        self.stdout.write(f"clusters: {len(live)}")
        for stat in live:
            up = _seconds(now - stat.tob) if stat.tob else "-"
            self.stdout.write(f"  {stat.cluster_id}  host {stat.host}  {stat.status}  workers {len(stat.workers)}  "
                              f"up {up}  reincarnations {stat.reincarnations}")
        minutes = int(status.seen_within.total_seconds() // 60)
        self.stdout.write(f"recovery processes seen in the last {minutes} min: {len(status.clusters)} cluster(s)")
        for c in status.clusters:
            held = ", ".join(map(str, c.shards)) if c.shards else "none"
            self.stdout.write(f"  {c.cluster}  host {c.host}  pid {c.pid}  started {c.started_at.isoformat()}  "
                              f"last heartbeat {_seconds(now - c.last_heartbeat)} ago  shards {held}")
        self.stdout.write(f"shards: {status.shard_count}")
        for s in status.shards:
            held = s.held_by or "nobody"
            if s.cycle_id is None:
                last = "no cycle yet"
            else:
                last = (f"last cycle #{s.cycle_id} {s.outcome} started {_seconds(now - s.started_at)} ago"
                        f" by {s.worker or '-'}")
            self.stdout.write(f"  shard {s.shard}  held by {held}  {last}")
        self.stdout.write(f"queued tasks: {status.queued}")
        self.stdout.write("schedules:")
        for schedule in status.schedules:
            seconds = (schedule.next_run - now).total_seconds() if schedule.next_run else None
            due = "-" if seconds is None else f"in {seconds:.0f} s" if seconds > 0 else "due now"
            self.stdout.write(f"  {schedule.name}  {schedule.func}  next run {due}")
        health = status.health
        age = health.success_age
        self.stdout.write("recovery: " + ("no successful cycle yet" if age is None else
                                          f"last success {age.total_seconds():.0f} s ago")
                          + (" (STALE)" if health.stale else ""))
