"""The read replica (design §16): which database a request's reads go to.

With DATABASE_REPLICA_URL set, settings add a `replica` alias. The read-only pages (REPLICA_PAGES:
the lists, the map, search, handover, analytics, case files, /metrics) read from it; everything
else reads the primary: every write, every read that feeds one (repair preview and apply with their
freshness guard, callbacks, recovery, notification evaluation: none of them is a page listed here,
and background work never passes through the middleware), and a person's pages for
READ_YOUR_WRITES_SECONDS after their own write. A replica that lags more than
REPLICA_MAX_LAG_SECONDS or does not answer sends the page to the primary, and the page frame says so.

The one place that chooses: ReplicaMiddleware (console/replica/middleware.py) sets the alias for
the request; the console's raw reads take their cursor from `read_connection()` (console.readers
fetch_rows/fetch_dicts, the few selectors with a cursor of their own, /metrics), the ORM's reads of
the console's and recovery's models go through ReplicaRouter. Sessions, users and every write stay
on the primary.
"""

import logging
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from console.replica import sql as replica_sql

REPLICA = "replica"
# After a person's own write their pages read the primary this long (read-your-writes).
READ_YOUR_WRITES_SECONDS = 30
# The session key holding the time (epoch seconds) of the person's last write.
WROTE_AT_SESSION_KEY = "tidy_wrote_at"
# After the replica did not answer, the primary serves without asking it again for this long.
DOWN_RETRY_SECONDS = 5.0
# The replica's lag is read at most once a second per process.
LAG_CACHE_SECONDS = 1.0

log = logging.getLogger("console.replica")

_read_alias: ContextVar[str] = ContextVar("tidy_read_alias", default=DEFAULT_DB_ALIAS)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def read_alias() -> str:
    """The database alias this request's reads use (the primary's outside a replica page)."""
    return _read_alias.get()


def read_connection():
    """The connection a read-only page's raw SQL runs on."""
    return connections[_read_alias.get()]


@contextmanager
def reading_from(alias: str):
    token = _read_alias.set(alias)
    try:
        yield
    finally:
        _read_alias.reset(token)


@dataclass(frozen=True)
class ReplicaState:
    answering: bool
    lag_seconds: float  # 0.0 when not answering (unknown)


@dataclass
class _Cache:
    state: ReplicaState | None = None
    read_at: float = 0.0
    down_until: float = 0.0


_cache = _Cache()


def replica_state(*, fresh: bool = False) -> ReplicaState:
    """Whether the replica answers and how far its replay is behind (seconds). Read at most once a
    second (fresh=True: now); after a failure, not asked again for DOWN_RETRY_SECONDS."""
    now = time.monotonic()
    if not fresh:
        if now < _cache.down_until:
            return ReplicaState(answering=False, lag_seconds=0.0)
        if _cache.state is not None and now - _cache.read_at < LAG_CACHE_SECONDS:
            return _cache.state
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(replica_sql.REPLICA_LAG)
            lag = float(cursor.fetchone()[0])
    except DatabaseError as exc:
        connections[REPLICA].close()  # a broken connection is not kept for the next request
        log.warning("the read replica does not answer; the primary serves the read-only pages: %s",
                    type(exc).__name__)
        _cache.state, _cache.down_until = None, now + DOWN_RETRY_SECONDS
        return ReplicaState(answering=False, lag_seconds=0.0)
    _cache.state, _cache.read_at, _cache.down_until = ReplicaState(answering=True, lag_seconds=lag), now, 0.0
    return _cache.state


def forget_replica_state() -> None:
    """Ask the replica again on the next read (tests; after a configuration change)."""
    _cache.state, _cache.read_at, _cache.down_until = None, 0.0, 0.0
