"""STALLED_AFTER_MINUTES and SHIFT_STARTS: read like every other setting, a bad value named."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from console.env import env_int, env_times
from tests.ops.test_configuration import _manage


def test_shift_starts_are_read_sorted_and_deduplicated(monkeypatch):
    assert env_times("SHIFT_STARTS", "06:00,14:00,22:00") == [(6, 0), (14, 0), (22, 0)]
    monkeypatch.setenv("SHIFT_STARTS", " 22:00, 7:30 ,22:00")
    assert env_times("SHIFT_STARTS", "06:00") == [(7, 30), (22, 0)]


@pytest.mark.parametrize("raw", ["6", "24:00", "06:60", "06:00,,x", "06-00", "06:0", "06:00;14:00"])
def test_a_bad_shift_start_is_named(monkeypatch, raw):
    monkeypatch.setenv("SHIFT_STARTS", raw)
    with pytest.raises(ImproperlyConfigured, match="SHIFT_STARTS must be comma-separated HH:MM times"):
        env_times("SHIFT_STARTS", "06:00,14:00,22:00")


def test_stalled_after_minutes_is_bounded(monkeypatch):
    monkeypatch.setenv("STALLED_AFTER_MINUTES", "0")
    with pytest.raises(ImproperlyConfigured, match="STALLED_AFTER_MINUTES must be at least 1"):
        env_int("STALLED_AFTER_MINUTES", 15, minimum=1)


@pytest.mark.parametrize("env,name", [
    ({"STALLED_AFTER_MINUTES": "a while"}, "STALLED_AFTER_MINUTES"),
    ({"SHIFT_STARTS": "morning"}, "SHIFT_STARTS"),
])
def test_the_program_stops_at_start_naming_the_bad_variable(env, name):
    result = _manage("check", SECRET_KEY="x", DATABASE_URL="postgresql://localhost/tidy",
                     WCS_CALLBACK_TOKEN="t" * 24, **env)
    assert result.returncode != 0 and name in result.stderr and "ImproperlyConfigured" in result.stderr
