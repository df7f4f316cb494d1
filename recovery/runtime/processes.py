"""Who runs recovery: each qcluster worker process that runs recovery writes a heartbeat row
(recovery.models.ProcessHeartbeat) with the shards it holds, at the cluster's start-up cycle and
once per round of its runner (docs/architecture.md §18). django-q2's own cluster statistics live
in the cache for a few seconds only; these rows let the console show every cluster seen in the
last minutes, and which one holds which shard, from the database alone.

A beat is one small autocommit statement outside any recovery transaction; a failure to write it
is logged and never stops recovery.
"""

import json
import logging
import os
import socket
import time

from django.db import DatabaseError, connection

from recovery.engine.cycle import worker_name
from recovery.runtime import lease_sql

log = logging.getLogger("recovery.processes")  # the logger's name as log readers know it


def beat(*, cluster: str, shards, shard_count: int) -> bool:
    """Record that this process is alive and holds `shards` (of `shard_count`). False when the
    database did not take it (logged)."""
    host = socket.gethostname()
    try:
        cluster_pid = int(cluster.rsplit("-", 1)[-1])
    except ValueError:
        cluster_pid = os.getppid()
    try:
        with connection.cursor() as cursor:
            # The worker named as its cycles name it (RecoveryCycle.worker), so the pages show one name.
            cursor.execute(lease_sql.PROCESS_BEAT, {
                "worker": worker_name(), "cluster": cluster, "host": host, "cluster_pid": cluster_pid,
                "shards": json.dumps(sorted(shards)), "shard_count": shard_count})
        return True
    except DatabaseError as exc:
        log.warning("recovery heartbeat not written: %s", str(exc).strip() or type(exc).__name__)
        return False


def forget_old() -> None:
    with connection.cursor() as cursor:
        cursor.execute(lease_sql.PROCESS_FORGET)


class Heartbeat:
    """A runner's beats: at most one per `every` seconds, and at once when its shards change."""

    def __init__(self, *, cluster: str, shard_count: int, every: float):
        self.cluster, self.shard_count, self.every = cluster, shard_count, every
        self._last: tuple[float, tuple[int, ...]] | None = None

    def __call__(self, shards) -> None:
        held = tuple(sorted(shards))
        now = time.monotonic()
        if self._last is not None and self._last[1] == held and now - self._last[0] < self.every:
            return
        if beat(cluster=self.cluster, shards=held, shard_count=self.shard_count):
            self._last = (now, held)
