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

from recovery import wms_sql

log = logging.getLogger(__name__)

# Arbitrary but fixed advisory lock keys of this product.
RUNNER_LEASE_KEY = 0x7D1_0001
STARTUP_LEASE_KEY = 0x7D1_0002


def lease_connection_parameters() -> dict[str, int]:
    """libpq parameters of the lease connection. A network that silently drops the connection
    must not keep the advisory lock (and so recovery) stuck for the kernel's two-hour keepalive
    default: keepalives probe an idle connection, tcp_user_timeout bounds unacknowledged sends,
    and connect_timeout bounds a connection attempt to a database that does not answer. Without
    the connection the server releases the lock and the next runner takes it
    (README, "How recovery works"). Options given in DATABASE_URL win."""
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
wms_sql.LEASE_HELD, {"key": self.key}).fetchone()
        except psycopg.Error:
            return False
        return bool(row and row[0])


@contextmanager
def try_lease(key: int = RUNNER_LEASE_KEY):
    """Yield a Lease; `lease.acquired` is False when another session holds it."""
    conn = _connect()
    try:
        acquired = conn.execute(wms_sql.LEASE_TRY, {"key": key}).fetchone()[0]
        yield Lease(conn, key, acquired)
    finally:
        conn.close()  # ending the session releases the lock


@contextmanager
def wait_lease(key: int):
    """Block until the lease is ours (used for the short start-up check)."""
    conn = _connect()
    try:
        conn.execute(wms_sql.LEASE_WAIT, {"key": key})
        yield Lease(conn, key, True)
    finally:
        conn.close()
