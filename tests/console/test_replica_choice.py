"""Where a read-only page reads (console.replica.middleware.read_choice, pure) and the replica's
settings (its system check, its router); the real streaming replica is tests/console/test_replica.py."""

import pytest
from django.core.checks import Warning

from console.replica import REPLICA, ReplicaState
from console.replica.checks import check_replica_settings
from console.replica.middleware import READ_YOUR_WRITES_SECONDS, read_choice
from console.replica.router import ReplicaRouter

NOW = 1_000_000.0
FRESH = ReplicaState(answering=True, lag_seconds=0.4)


@pytest.mark.parametrize("wrote_at,state,expected", [
    (None, FRESH, (REPLICA, None)),
    (NOW - 5, FRESH, ("default", None)),  # my own write: the primary, no notice
    (NOW - READ_YOUR_WRITES_SECONDS, FRESH, (REPLICA, None)),  # 30 s later: the replica again
    (NOW + 60, FRESH, (REPLICA, None)),  # a clock that went back does not pin anyone for ever
    (None, ReplicaState(answering=True, lag_seconds=30.0), (REPLICA, None)),  # at the limit: still the replica
    (None, ReplicaState(answering=True, lag_seconds=30.5), ("default", "lagging")),
    (None, ReplicaState(answering=False, lag_seconds=0.0), ("default", "down")),
    (NOW - 1, ReplicaState(answering=False, lag_seconds=0.0), ("default", None)),
])
def test_read_choice(wrote_at, state, expected):
    choice = read_choice(wrote_at=wrote_at, now=NOW, state=state, max_lag=30)
    assert (choice.alias, choice.notice) == expected


def test_a_lag_limit_without_a_replica_is_named(monkeypatch, settings):
    settings.DATABASES = {k: v for k, v in settings.DATABASES.items() if k != REPLICA}
    monkeypatch.setenv("REPLICA_MAX_LAG_SECONDS", "10")
    (warning,) = check_replica_settings()
    assert isinstance(warning, Warning) and warning.id == "console.W160"
    assert "REPLICA_MAX_LAG_SECONDS" in warning.msg and "DATABASE_REPLICA_URL" in warning.msg
    monkeypatch.delenv("REPLICA_MAX_LAG_SECONDS")
    assert check_replica_settings() == []


def test_the_router_writes_and_migrates_on_the_primary_and_reads_users_there():
    from django.contrib.auth.models import User
    from django.contrib.sessions.models import Session

    from console.replica import reading_from
    from recovery.models import TidyWorkflow

    router = ReplicaRouter()
    with reading_from(REPLICA):
        assert router.db_for_read(TidyWorkflow) == REPLICA
        assert router.db_for_read(User) == router.db_for_read(Session) == "default"
        assert router.db_for_write(TidyWorkflow) == "default"
    assert router.db_for_read(TidyWorkflow) == "default"
    assert router.allow_migrate(REPLICA, "console") is False and router.allow_migrate("default", "console") is True


def test_error_reports_hide_the_replica_url():
    from console.security.error_reports import ConsoleExceptionReporterFilter

    url = "postgresql://tidy_reader:hunter2-replica@replica.example/wms"
    shown = ConsoleExceptionReporterFilter().cleanse_setting("DATABASE_REPLICA_URL", url)
    assert "hunter2" not in str(shown)
