"""/health/live and /health/ready: the probes a load balancer and an orchestrator use."""

import json
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle
from recovery.runtime.lease import connect_direct

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def _cycle(age_seconds: float, outcome="SUCCEEDED", **shard) -> RecoveryCycle:
    finished = timezone.now() - timedelta(seconds=age_seconds)
    return RecoveryCycle.objects.create(started_at=finished - timedelta(milliseconds=40), finished_at=finished,
                                        outcome=outcome, duration_ms=40, **shard)


def test_it_answers_live_without_touching_the_database(client):
    # No database fixture: pytest-django raises on any database access in this test.
    response = client.get("/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_it_is_ready_after_a_successful_cycle(wms, client):
    wms.build("healthy")
    run_cycle()
    response = client.get("/health/ready")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"] == {"status": "ok"}
    assert body["checks"]["recovery"]["status"] == "ok"
    assert 0 <= body["checks"]["recovery"]["last_success_age_seconds"] < 5
    assert set(body) == {"status", "checks"}  # check names and ages, nothing else


@pytest.mark.parametrize("age,code", [(29, 200), (31, 503)])
def test_it_fails_recovery_once_the_last_success_is_older_than_the_stale_window(transactional_db, client, settings,
                                                                                  age, code):
    settings.RECOVERY_INTERVAL_SECONDS = 10
    settings.RECOVERY_STALE_AFTER_INTERVALS = 3
    _cycle(age)
    response = client.get("/health/ready")
    assert response.status_code == code
    if code == 503:
        assert response.json()["status"] == "fail"
        assert response.json()["checks"]["recovery"]["status"] == "fail"
        assert response.json()["checks"]["database"]["status"] == "ok"


def test_with_shards_it_fails_recovery_naming_a_shard_nobody_recovers(transactional_db, client, settings):
    settings.RECOVERY_INTERVAL_SECONDS = 10
    settings.RECOVERY_STALE_AFTER_INTERVALS = 3
    _cycle(2, shard=0, shard_count=3)
    _cycle(5, shard=2, shard_count=3)
    _cycle(31, shard=1, shard_count=3)  # shard 1's newest success is outside the window
    _cycle(1, shard=1, shard_count=3, outcome="FAILED")
    response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["checks"]["recovery"]["status"] == "fail"
    assert response.json()["checks"]["recovery"]["stale_shards"] == [1]
    # The shards counted are those of the newest success's shard count: under two shards,
    # shard 0 has no success yet (the three-shard cycles cover nothing there).
    _cycle(1, shard=1, shard_count=2)
    assert client.get("/health/ready").json()["checks"]["recovery"]["stale_shards"] == [0]
    _cycle(0.5, shard=1, shard_count=3)
    _cycle(0.4, shard=0, shard_count=3)
    response = client.get("/health/ready")
    assert response.status_code == 200, response.json()
    assert "stale_shards" not in response.json()["checks"]["recovery"]


def test_it_is_not_ready_before_any_cycle_succeeded(transactional_db, client):
    _cycle(1, outcome="FAILED")
    response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["checks"]["recovery"] == {"status": "fail", "last_success_age_seconds": None,
                                                     "stale_after_seconds": 30.0}


def test_it_answers_within_two_seconds_while_the_database_hangs(transactional_db, client):
    """A real hang: another session holds an exclusive lock on the cycle journal, so the
    readiness query blocks in PostgreSQL until its statement timeout."""
    _cycle(1)
    holder = connect_direct("tidy-test-lock-holder")
    holder.autocommit = False
    try:
        holder.execute("LOCK TABLE recovery_recoverycycle IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        response = client.get("/health/ready")
        elapsed = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert response.status_code == 503
    assert elapsed < 2.0
    assert response.json()["checks"]["database"]["status"] == "fail"
    assert response.json()["status"] == "fail"
    # Probes while it hangs queue on the small pool and time out too, instead of piling up.
    # Once the lock is gone it is ready again.
    deadline = time.monotonic() + 5
    while client.get("/health/ready").status_code != 200:
        assert time.monotonic() < deadline


def test_it_keeps_a_safe_request_id_and_replaces_a_hostile_one(client):
    assert client.get("/health/live", headers={"X-Request-ID": "lb-7f3a.42:x"})["X-Request-ID"] == "lb-7f3a.42:x"
    for hostile in ["a b", "x" * 129, "id\r\nSet-Cookie: a=b", "", "é"]:
        made = client.get("/health/live", headers={"X-Request-ID": hostile})["X-Request-ID"]
        assert made != hostile and len(made) == 32 and made.isalnum()


def test_the_old_health_address_is_gone(client):
    assert client.get("/health").status_code == 404
    assert json.loads(client.get("/health/live").content) == {"status": "ok"}


def test_readiness_reads_only_the_newest_successful_cycle(transactional_db):
    """The readiness query is served by the (outcome, finished_at) index, however long the journal."""
    from console.readers import sql as readers_sql

    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("EXPLAIN " + readers_sql.READY_RECOVERY_FACTS, {"stale_after_seconds": 30})
        plan = "\n".join(r[0] for r in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")
    assert "recovery_re_outcome_760dfc_idx" in plan
