"""What every qcluster is doing, from any machine: django-q2's cluster statistics live in the
shared database cache (settings.CACHES), so this works wherever the environment points at the
same database. It needs no terminal library (django-q2's qinfo/qmonitor need `blessed`)."""

from django.core.management.base import BaseCommand
from django.utils import timezone
from django_q.models import OrmQ, Schedule
from django_q.status import Stat

from console.readers.recovery import recovery_health


class Command(BaseCommand):
    help = "List the running qclusters, the task queue, the schedules and recovery's last success."

    def handle(self, *args, **options):
        clusters = sorted(Stat.get_all(), key=lambda s: (s.host, str(s.cluster_id)))
        self.stdout.write(f"clusters: {len(clusters)}")
        for stat in clusters:
            up = f"{(timezone.now() - stat.tob).total_seconds():.0f} s" if stat.tob else "-"
            self.stdout.write(f"  {stat.cluster_id}  host {stat.host}  {stat.status}  workers {len(stat.workers)}  "
                              f"up {up}  reincarnations {stat.reincarnations}")
        self.stdout.write(f"queued tasks: {OrmQ.objects.count()}")
        self.stdout.write("schedules:")
        now = timezone.now()
        for schedule in Schedule.objects.order_by("name"):
            seconds = (schedule.next_run - now).total_seconds() if schedule.next_run else None
            due = "-" if seconds is None else f"in {seconds:.0f} s" if seconds > 0 else "due now"
            self.stdout.write(f"  {schedule.name}  {schedule.func}  next run {due}")
        health = recovery_health()
        age = health.success_age
        self.stdout.write("recovery: " + ("no successful cycle yet" if age is None else
                                          f"last success {age.total_seconds():.0f} s ago")
                          + (" (STALE)" if health.stale else ""))
