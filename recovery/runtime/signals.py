"""Signal receivers: one recovery cycle when a qcluster starts (docs/architecture.md §7): the first worker of
the cluster to spawn runs it, since the schedule's first run is only due when the scheduler wakes
30 s later; and the generic-plan setting of every new database connection (recovery.engine.prepared)."""

import logging

import psycopg
from django.db import DatabaseError
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django_q.signals import post_spawn

from recovery.engine.prepared import use_generic_plans
from recovery.runtime.tasks import run_startup_cycle

log = logging.getLogger("recovery.signals")  # the logger's name as log readers know it


@receiver(post_spawn)
def start_up_cycle(sender, proc_name, **kwargs):
    try:
        run_startup_cycle()
    except (DatabaseError, psycopg.Error):
        # Never let a worker die at spawn: the cluster would restart it in a loop.
        log.exception("start-up recovery cycle failed; the schedule will retry")


@receiver(connection_created)
def prepared_statements_use_generic_plans(sender, connection, **kwargs):
    use_generic_plans(connection)
