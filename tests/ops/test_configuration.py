"""Configuration errors stop the program at start with a message naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from console.env import env_bool, env_int, env_schema_name, parse_database_url

ROOT = Path(__file__).resolve().parents[2]


def test_env_int_names_the_variable(monkeypatch):
    monkeypatch.setenv("RECOVERY_INTERVAL_SECONDS", "ten")
    with pytest.raises(ImproperlyConfigured, match="RECOVERY_INTERVAL_SECONDS must be an integer"):
        env_int("RECOVERY_INTERVAL_SECONDS", 10)


def test_env_int_enforces_bounds(monkeypatch):
    monkeypatch.setenv("RECOVERY_INTERVAL_SECONDS", "0")
    with pytest.raises(ImproperlyConfigured, match="RECOVERY_INTERVAL_SECONDS must be at least 1"):
        env_int("RECOVERY_INTERVAL_SECONDS", 10, minimum=1)


def test_env_bool_refuses_nonsense(monkeypatch):
    monkeypatch.setenv("DEBUG", "perhaps")
    with pytest.raises(ImproperlyConfigured, match="DEBUG must be a boolean"):
        env_bool("DEBUG")


@pytest.mark.parametrize("url,message", [
    ("mysql://u@h/db", "must start with postgresql://"),
    ("postgresql://u@h:notaport/db", "not a valid URL"),
    ("postgresql://u@h:5432/", "must name a database"),
    ("postgresql:///db", "must name a host"),
])
def test_a_malformed_database_url_is_named(url, message):
    with pytest.raises(ImproperlyConfigured, match=message) as info:
        parse_database_url("DATABASE_URL", url)
    assert "DATABASE_URL" in str(info.value)


@pytest.mark.parametrize("value", ["public", "alg", "pg_console", "information_schema", "1tidy", "tidy console",
                                   'tidy"; DROP SCHEMA public; --', "Tidy", "x" * 64])
def test_the_console_schema_must_be_a_plain_name_of_its_own(monkeypatch, value):
    monkeypatch.setenv("CONSOLE_DB_SCHEMA", value)
    with pytest.raises(ImproperlyConfigured, match="CONSOLE_DB_SCHEMA must"):
        env_schema_name("CONSOLE_DB_SCHEMA", "tidy_console")


def test_the_console_schema_defaults_to_tidy_console(monkeypatch):
    monkeypatch.delenv("CONSOLE_DB_SCHEMA", raising=False)
    assert env_schema_name("CONSOLE_DB_SCHEMA", "tidy_console") == "tidy_console"
    monkeypatch.setenv("CONSOLE_DB_SCHEMA", "wms_console_2")
    assert env_schema_name("CONSOLE_DB_SCHEMA", "tidy_console") == "wms_console_2"


def test_a_socket_url_is_understood():
    parsed = parse_database_url("DATABASE_URL", "postgresql://postgres@/tidy?host=/tmp/sock&sslmode=disable")
    assert (parsed.host, parsed.name, parsed.user, parsed.options) == ("/tmp/sock", "tidy", "postgres",
                                                                        {"sslmode": "disable"})


def _manage(*args, **env):
    full_env = {k: v for k, v in os.environ.items() if k not in {"EMBEDDED_DATABASE_URL", "TIDY_TEST_OWNS_EMBEDDED_DB"}}
    full_env.update(env)
    full_env["DJANGO_SETTINGS_MODULE"] = "console.settings"
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("env,name", [
    ({"DATABASE_URL": "postgresql://nohost:abc/x"}, "DATABASE_URL"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "RECOVERY_INTERVAL_SECONDS": "soon"},
     "RECOVERY_INTERVAL_SECONDS"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "RECOVERY_SHARDS": "0"}, "RECOVERY_SHARDS"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "RECOVERY_CYCLE_MAX_SECONDS": "five"},
     "RECOVERY_CYCLE_MAX_SECONDS"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "RECOVERY_APPLY_WORKERS": "0"},
     "RECOVERY_APPLY_WORKERS"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "RECOVERY_MODE": "dry-run"}, "RECOVERY_MODE"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "DATABASE_REPLICA_URL": "mysql://replica/tidy"},
     "DATABASE_REPLICA_URL"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "DATABASE_REPLICA_URL": "postgresql://replica:port/tidy"},
     "DATABASE_REPLICA_URL"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "DATABASE_REPLICA_URL": "postgresql://replica/tidy",
      "REPLICA_MAX_LAG_SECONDS": "0"}, "REPLICA_MAX_LAG_SECONDS"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "CONSOLE_DB_SCHEMA": "Tidy-Console"}, "CONSOLE_DB_SCHEMA"),
    ({"DATABASE_URL": "postgresql://localhost/tidy", "CONSOLE_DB_SCHEMA": "public"}, "CONSOLE_DB_SCHEMA"),
])
def test_the_program_stops_at_start_naming_the_bad_variable(env, name):
    result = _manage("check", SECRET_KEY="x", **env)
    assert result.returncode != 0
    assert name in result.stderr
    assert "ImproperlyConfigured" in result.stderr


def test_wms_schema_against_an_unreachable_database_says_so():
    result = _manage("wms_schema", DATABASE_URL="postgresql://nobody@127.0.0.1:9/tidy", SECRET_KEY="x",
                     WCS_CALLBACK_TOKEN="t" * 24, METRICS_TOKEN="m" * 24)
    assert result.returncode == 1
    assert "cannot reach the database" in result.stderr
    assert "nothing was changed" in result.stderr
