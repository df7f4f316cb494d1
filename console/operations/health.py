"""Health probes for load balancers and orchestrators: no sign-in, no data beyond check names
and ages.

/health/live answers while the process serves requests and touches no database.
/health/ready needs the database to answer and the last successful recovery cycle to be
younger than RECOVERY_STALE_AFTER_INTERVALS x RECOVERY_INTERVAL_SECONDS; when recovery is
sharded, every shard needs a successful cycle within that window (a shard nobody recovers is
stale while the others succeed), and the recovery check names the stale shards. It answers within
READY_BUDGET_SECONDS even when the database hangs: the check runs on its own short-lived
connection (connect timeout, statement timeout) in a small thread pool, and the view stops
waiting for it after the budget, so a hung server costs a 503, never a stuck web worker.
"""

import concurrent.futures
import threading
from dataclasses import dataclass

import psycopg
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from console.database import sql as database_sql
from console.readers import sql as readers_sql
from console.readers.recovery import stale_after

READY_BUDGET_SECONDS = 1.5
CONNECT_TIMEOUT_SECONDS = 2  # libpq's smallest useful value; the budget above bounds the answer
STATEMENT_TIMEOUT_MS = 1000

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            # Bounded: while the database hangs, probes queue here and time out instead of
            # piling up threads and connections.
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="health-ready")
        return _pool


@dataclass(frozen=True)
class ReadyFacts:
    last_success_age: float | None  # None: no successful cycle yet
    stale_shards: tuple[int, ...] = ()


def _connect() -> psycopg.Connection:
    s = connection.settings_dict
    options = dict(s.get("OPTIONS") or {})
    params = {
        "dbname": s["NAME"], "user": s["USER"] or None, "password": s["PASSWORD"] or None,
        "host": s["HOST"] or None, "port": s["PORT"] or None,
        **{k: v for k, v in options.items() if isinstance(v, str | int)},
        "connect_timeout": CONNECT_TIMEOUT_SECONDS, "application_name": "tidy-health",
    }
    return psycopg.connect(autocommit=True, **{k: v for k, v in params.items() if v is not None})


def _read_facts(limit: float) -> ReadyFacts:
    # The statement timeout is this transaction's (as a page's, console.database.timeouts), not a
    # libpq startup option, which PgBouncer refuses.
    with _connect() as conn, conn.transaction():
        conn.execute(database_sql.SET_LOCAL_STATEMENT_TIMEOUT, {"milliseconds": str(STATEMENT_TIMEOUT_MS)})
        row = conn.execute(readers_sql.READY_RECOVERY_FACTS, {"stale_after_seconds": limit}).fetchone()
    return ReadyFacts(last_success_age=row[0], stale_shards=tuple(row[1])) if row else ReadyFacts(None)


def readiness() -> tuple[bool, dict]:
    limit = stale_after().total_seconds()
    future = _executor().submit(_read_facts, limit)
    try:
        facts = future.result(timeout=READY_BUDGET_SECONDS)
    except concurrent.futures.TimeoutError:
        return False, {"database": {"status": "fail", "error": f"no answer within {READY_BUDGET_SECONDS} s"},
                       "recovery": {"status": "unknown"}}
    except psycopg.Error as exc:
        return False, {"database": {"status": "fail", "error": type(exc).__name__},
                       "recovery": {"status": "unknown"}}
    age = facts.last_success_age
    fresh = age is not None and age <= limit and not facts.stale_shards
    recovery = {"status": "ok" if fresh else "fail",
                "last_success_age_seconds": None if age is None else round(age, 3),
                "stale_after_seconds": limit,
                **({"stale_shards": list(facts.stale_shards)} if facts.stale_shards else {})}
    checks = {"database": {"status": "ok"}, "recovery": recovery}
    return recovery["status"] == "ok", checks


@never_cache
def live(request):
    return JsonResponse({"status": "ok"})


@never_cache
def ready(request):
    ok, checks = readiness()
    return JsonResponse({"status": "ok" if ok else "fail", "checks": checks}, status=200 if ok else 503)
