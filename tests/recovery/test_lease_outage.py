"""The lease connection gives up on a dead network in bounded time, and the runner and the
start-up cycle survive a database outage: they log and return, and work again by themselves
once the database answers."""

import logging
import socket
import threading
import time
from contextlib import contextmanager

import pytest
from django.db import connection
from django.test import override_settings

from recovery.models import RecoveryCycle
from recovery.runtime.lease import lease_connection_parameters, try_lease
from recovery.runtime.signals import start_up_cycle
from recovery.runtime.tasks import run_recovery_runner, run_startup_cycle

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def test_the_lease_connection_sets_keepalives_and_timeouts(transactional_db):
    with try_lease() as lease:
        assert lease.acquired
        params = lease._conn.info.get_parameters()
    assert params["keepalives"] == "1"
    assert int(params["keepalives_idle"]) == 10 and int(params["keepalives_interval"]) == 3
    assert int(params["keepalives_count"]) == 3
    assert int(params["connect_timeout"]) == 5
    assert int(params["tcp_user_timeout"]) == 30_000
    assert params["application_name"] == "tidy-recovery-lease"


@override_settings(RECOVERY_LEASE_TCP_TIMEOUT_SECONDS=90, RECOVERY_LEASE_CONNECT_TIMEOUT_SECONDS=3)
def test_the_lease_timeouts_follow_the_settings():
    assert lease_connection_parameters() == {"connect_timeout": 3, "keepalives": 1, "keepalives_idle": 30,
                                             "keepalives_interval": 10, "keepalives_count": 3,
                                             "tcp_user_timeout": 90_000}


@contextmanager
def database_at(host: str, port: int):
    """Django's default database (and so the lease) pointed elsewhere for a moment."""
    settings = connection.settings_dict
    saved = {k: settings[k] for k in ("HOST", "PORT")}
    connection.close()
    settings.update(HOST=host, PORT=str(port))
    try:
        yield
    finally:
        connection.close()
        settings.update(saved)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@override_settings(RECOVERY_INTERVAL_SECONDS=1)  # the start-up cycle tries again for two intervals
def test_runner_and_start_up_cycle_survive_a_refused_database_and_recover(transactional_db, caplog):
    caplog.set_level(logging.ERROR, logger="recovery.tasks")
    with database_at("127.0.0.1", closed_port()):
        result = run_recovery_runner(seconds=1, interval=1)
        assert result["skipped"] and result["cycles"] == 0 and "error" in result
        assert run_startup_cycle(key="outage-test") is False
        start_up_cycle(sender=None, proc_name="Worker-1")  # the qcluster's post_spawn receiver: no raise
    messages = [r.getMessage() for r in caplog.records]
    assert any("recovery runner: the database is unreachable" in m for m in messages)
    assert any("start-up recovery cycle: the database is unreachable" in m for m in messages)

    # The database answers again: the next runs work without anything being restarted.
    assert run_recovery_runner(seconds=0.1, interval=1) == {"skipped": False, "cycles": 1, "failed": 0}
    assert run_startup_cycle(key="outage-test") is True
    assert RecoveryCycle.objects.filter(trigger=RecoveryCycle.Trigger.STARTUP, worker="outage-test").count() == 1


@override_settings(RECOVERY_LEASE_CONNECT_TIMEOUT_SECONDS=2)
def test_a_database_that_never_answers_costs_the_runner_the_connect_timeout_only(transactional_db, caplog):
    caplog.set_level(logging.ERROR, logger="recovery.tasks")
    silent = socket.socket()  # accepts TCP connections (kernel backlog) but never says a word
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        with database_at("127.0.0.1", silent.getsockname()[1]):
            started = time.monotonic()
            result = run_recovery_runner(seconds=1, interval=1)
            elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert result["skipped"] and "error" in result
    assert 1.5 <= elapsed < 6, elapsed
    assert run_recovery_runner(seconds=0.1, interval=1)["cycles"] == 1



@override_settings(RECOVERY_INTERVAL_SECONDS=2)
def test_a_cluster_started_during_a_blip_runs_its_start_up_cycle_when_the_database_answers(transactional_db):
    settings = connection.settings_dict
    saved = {k: settings[k] for k in ("HOST", "PORT")}
    connection.close()
    settings.update(HOST="127.0.0.1", PORT=str(closed_port()))
    back = threading.Timer(1.5, lambda: settings.update(saved))  # the database answers again
    back.start()
    try:
        assert run_startup_cycle(key="blip-test") is True
    finally:
        back.join()
        settings.update(saved)
        connection.close()
    cycle = RecoveryCycle.objects.get(worker="blip-test")
    assert (cycle.trigger, cycle.outcome) == (RecoveryCycle.Trigger.STARTUP, RecoveryCycle.Outcome.SUCCEEDED)
