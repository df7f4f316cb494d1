"""Two deployments whose databases share one PostgreSQL server never see each other's runners,
leases or locks (design §16, docs/architecture.md §7): advisory locks belong to one database, but
pg_locks shows the whole server's, so every read of it keeps to the current database. Here each
of two databases on the test's server runs recovery with two shards, and each runner holds and
runs both shards of its own database."""

import os
import signal
import subprocess
import sys
from collections import Counter
from urllib.parse import quote

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from console.replay.processes import database_url
from recovery.runtime.lease import RUNNER_PRESENCE_KEY, live_runners, shard_lease_key
from tests.recovery.test_shards import ROOT, _start_runner, _wait_for

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

SHARDS = 2
INTERVAL = 1.0

# The advisory locks of the runners, per database of the server (no filter: the test sees them all).
RUNNER_LOCKS = """
SELECT d.datname, l.objid::bigint, l.mode
FROM pg_locks AS l
JOIN pg_database AS d ON d.oid = l.database
WHERE l.locktype = 'advisory'
  AND l.classid = 0
  AND l.objsubid = 1
  AND l.granted
"""
CYCLES_SINCE = """
SELECT shard, count(*)
FROM recovery_recoverycycle
WHERE started_at > %(since)s
  AND finished_at IS NOT NULL
GROUP BY shard
"""


def _url(database: str, application_name: str) -> str:
    """A URL for another database of the test's server."""
    url = database_url(application_name)
    mine = f"/{quote(connection.settings_dict['NAME'])}?"
    assert mine in url
    return url.replace(mine, f"/{quote(database)}?")


def _migrate(database: str) -> None:
    """The console's tables and the WMS schema in `database`, as a deployment makes them."""
    env = {**os.environ, "DATABASE_URL": _url(database, "tidy-test-migrate"),
           "DJANGO_SETTINGS_MODULE": "tests.settings", "SECRET_KEY": "test-only", "LOG_LEVEL": "WARNING"}
    env.pop("EMBEDDED_DATABASE_URL", None)
    for command in (["migrate", "--noinput"], ["wms_schema"]):
        result = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]


@pytest.fixture
def other_database(wms):
    """A second database on the same server, with the same schema (a copy of the test database,
    whose tables the wms fixture has just emptied; or, while another session holds the test
    database, migrated afresh), dropped afterwards."""
    mine = connection.settings_dict["NAME"]
    other = f"{mine}_other"
    connection.close()  # a template must have no other session
    with psycopg.connect(_url("postgres", "tidy-test-admin"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{other}" WITH (FORCE)')
        try:
            admin.execute(f'CREATE DATABASE "{other}" TEMPLATE "{mine}"')
            copied = True
        except psycopg.errors.ObjectInUse:
            admin.execute(f'CREATE DATABASE "{other}"')
            copied = False
    if not copied:
        _migrate(other)
    try:
        yield other
    finally:
        with psycopg.connect(_url("postgres", "tidy-test-admin"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{other}" WITH (FORCE)')


def _locks() -> dict[str, Counter]:
    """database -> (key, mode) -> how many sessions hold it."""
    found: dict[str, Counter] = {}
    with psycopg.connect(_url("postgres", "tidy-test-locks")) as conn:
        for database, key, mode in conn.execute(RUNNER_LOCKS).fetchall():
            found.setdefault(database, Counter())[(key, mode)] += 1
    return found


def _cycles_since(database: str, since) -> dict[int, int]:
    with psycopg.connect(_url(database, "tidy-test-cycles")) as conn:
        return dict(conn.execute(CYCLES_SINCE, {"since": since}).fetchall())


def test_two_databases_on_one_server_each_hold_and_run_every_shard(other_database, tmp_path):
    mine = connection.settings_dict["NAME"]
    databases = (mine, other_database)
    runners = [_start_runner(tmp_path, n, seconds=300, shards=SHARDS, interval=INTERVAL,
                             url=_url(database, "tidy-test-runner")) for n, database in enumerate(databases)]
    presence = (RUNNER_PRESENCE_KEY, "ShareLock")
    shard_leases = {(shard_lease_key(s), "ExclusiveLock") for s in range(SHARDS)}
    try:
        _wait_for("a live runner in each database",
                  lambda: all(_locks().get(d, Counter())[presence] == 1 for d in databases), timeout=90)
        both_live = timezone.now()
        # Each database counts its own runner only: one live runner, so its fair share is every shard.
        assert live_runners() == 1
        # Every round a runner starts from now on rebalances seeing both runners live: a runner that
        # counted the other database's runner as its own would give a shard back and never run it.
        def every_shard_ran_twice() -> bool:
            return all(min(counts.get(s, 0) for s in range(SHARDS)) >= 2
                       for counts in (_cycles_since(d, both_live) for d in databases))

        _wait_for("two cycles of every shard in each database since both runners are live", every_shard_ran_twice,
                  timeout=90)
        held = _locks()
        for database in databases:
            assert shard_leases <= set(held[database]), (database, held[database])
    finally:
        for p in runners:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in runners:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
