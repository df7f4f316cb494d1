"""A PostgreSQL advisory-lock lease: only one recovery runner loops at a time (docs/architecture.md §7).

The lease lives on its own connection, not Django's: Django may close or replace its
connection (health checks, our reset after a failure), which would silently drop a session
lock. If the lease connection dies, the server releases the lock and `alive()` turns false.
"""

import logging
from contextlib import contextmanager

import psycopg
from django.conf import settings
from django.db import connection

from recovery.runtime import lease_sql

log = logging.getLogger("recovery.lease")  # the logger's name as log readers know it

# Arbitrary but fixed advisory lock keys of this product.
RUNNER_LEASE_KEY = 0x7D1_0001
STARTUP_LEASE_KEY = 0x7D1_0002
# Held in shared mode by every live runner, so runners can count each other (fair share).
RUNNER_PRESENCE_KEY = 0x7D1_0003


def shard_lease_key(shard: int) -> int:
    """The lease of one shard; shard 0's is the single runner lease of an unsharded set-up."""
    return RUNNER_LEASE_KEY + (shard << 16)


def lease_connection_parameters() -> dict[str, int]:
    """libpq parameters of the lease connection. A network that silently drops the connection
    must not keep the advisory lock (and so recovery) stuck for the kernel's two-hour keepalive
    default: keepalives probe an idle connection, tcp_user_timeout bounds unacknowledged sends,
    and connect_timeout bounds a connection attempt to a database that does not answer. Without
    the connection the server releases the lock and the next runner takes it
    (docs/architecture.md, "Recovery in one page"). Options given in DATABASE_URL win."""
    tcp_timeout = int(getattr(settings, "RECOVERY_LEASE_TCP_TIMEOUT_SECONDS", 30))
    return {
        "connect_timeout": int(getattr(settings, "RECOVERY_LEASE_CONNECT_TIMEOUT_SECONDS", 5)),
        "keepalives": 1,
        "keepalives_idle": max(1, tcp_timeout // 3),
        "keepalives_interval": max(1, tcp_timeout // 9),
        "keepalives_count": 3,
        "tcp_user_timeout": tcp_timeout * 1000,  # milliseconds
    }


def connect_direct(application_name: str, defaults: dict | None = None) -> psycopg.Connection:
    """A plain psycopg connection to Django's default database (its test database in tests)."""
    s = connection.settings_dict
    params = {
        **(defaults or {}),
        "dbname": s["NAME"],
        "user": s["USER"] or None,
        "password": s["PASSWORD"] or None,
        "host": s["HOST"] or None,
        "port": s["PORT"] or None,
        **{k: v for k, v in s["OPTIONS"].items() if isinstance(v, str | int)},
        # Ours wins over one configured in DATABASE_URL (?application_name=...).
        "application_name": application_name,
    }
    return psycopg.connect(autocommit=True, **{k: v for k, v in params.items() if v is not None})


def _connect() -> psycopg.Connection:
    return connect_direct("tidy-recovery-lease", lease_connection_parameters())


class Lease:
    def __init__(self, conn: psycopg.Connection, key: int, acquired: bool):
        self._conn = conn
        self.key = key
        self.acquired = acquired

    def alive(self) -> bool:
        if not self.acquired:
            return False
        try:
            row = self._conn.execute(
lease_sql.LEASE_HELD, {"key": self.key}).fetchone()
        except psycopg.Error:
            return False
        return bool(row and row[0])


@contextmanager
def try_lease(key: int = RUNNER_LEASE_KEY):
    """Yield a Lease; `lease.acquired` is False when another session holds it."""
    conn = _connect()
    try:
        acquired = conn.execute(lease_sql.LEASE_TRY, {"key": key}).fetchone()[0]
        yield Lease(conn, key, acquired)
    finally:
        conn.close()  # ending the session releases the lock


@contextmanager
def wait_lease(key: int):
    """Block until the lease is ours (used for the short start-up check)."""
    conn = _connect()
    try:
        conn.execute(lease_sql.LEASE_WAIT, {"key": key})
        yield Lease(conn, key, True)
    finally:
        conn.close()


class ShardLeases:
    """The shard leases one runner holds, all on one connection (docs/architecture.md,
    "Recovery leases and shards").

    Each shard's lease is a session advisory lock. Every runner also holds the presence key in
    shared mode, so `rebalance()` can count the live runners and keep this one's fair share,
    ceil(shards / runners): it takes free shards up to that share (a dead runner's shards are
    free as soon as its session ends) and gives back shards above it (a runner joined).
    PostgreSQL is the only coordinator; nothing else is shared between runners.
    """

    def __init__(self, conn: psycopg.Connection, shard_count: int):
        self._conn = conn
        self.shard_count = shard_count
        self.held: set[int] = set()

    def _one(self, sql: str, params: dict):
        return self._conn.execute(sql, params).fetchone()[0]

    def rebalance(self) -> None:
        runners = max(1, self._one(lease_sql.LEASE_SHARED_HOLDERS, {"key": RUNNER_PRESENCE_KEY}))
        share = -(-self.shard_count // runners)
        for shard in sorted(self.held, reverse=True)[: max(0, len(self.held) - share)]:
            self._one(lease_sql.LEASE_RELEASE, {"key": shard_lease_key(shard)})
            self.held.discard(shard)
            log.info("recovery runner: gave shard %s back (%s runners share %s shards)", shard, runners,
                     self.shard_count)
        # Start the search at a different shard in each runner, so runners starting together
        # try different leases first.
        start = self._conn.info.backend_pid % self.shard_count
        for offset in range(self.shard_count):
            if len(self.held) >= share:
                break
            shard = (start + offset) % self.shard_count
            if shard not in self.held and self._one(lease_sql.LEASE_TRY, {"key": shard_lease_key(shard)}):
                self.held.add(shard)

    def successor_waiting(self) -> bool:
        """Whether another live runner holds no shard: the schedule's next runner, standing by
        for this one to hand over."""
        keys = [shard_lease_key(shard) for shard in range(self.shard_count)]
        return self._one(lease_sql.LEASE_RUNNERS_WAITING, {"presence_key": RUNNER_PRESENCE_KEY, "shard_keys": keys}) > 0

    def held_by_runner(self, shard: int = 0) -> bool:
        """Whether a live runner holds the shard's lease (and so will hand it over in turn)."""
        return self._one(lease_sql.LEASE_HELD_BY_RUNNER,
                         {"lease_key": shard_lease_key(shard), "presence_key": RUNNER_PRESENCE_KEY})

    def connection_lost(self) -> bool:
        """Whether the lease connection is gone (cut, or the server restarted): every lease went
        with it, and a runner reconnects to take them again (docs/architecture.md §7)."""
        return self._conn.closed or self._conn.broken

    def alive(self) -> list[int]:
        """The shards still held (all of them are lost together when the connection dies)."""
        try:
            held = {shard for shard in self.held
                    if self._one(lease_sql.LEASE_HELD, {"key": shard_lease_key(shard)})}
        except psycopg.Error:
            held = set()
        self.held = held
        return sorted(held)


def live_runners() -> int:
    """How many recovery runners are live now, on any cluster (each holds the presence key)."""
    conn = _connect()
    try:
        return conn.execute(lease_sql.LEASE_SHARED_HOLDERS, {"key": RUNNER_PRESENCE_KEY}).fetchone()[0]
    finally:
        conn.close()


@contextmanager
def shard_leases(shard_count: int):
    """Yield ShardLeases on a fresh lease connection, registered as a live runner; closing the
    connection releases every lease it holds."""
    conn = _connect()
    try:
        conn.execute(lease_sql.LEASE_SHARED, {"key": RUNNER_PRESENCE_KEY})
        yield ShardLeases(conn, shard_count)
    finally:
        conn.close()
