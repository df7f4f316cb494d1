"""Database roles against the real test PostgreSQL: the runtime role set up by `db_roles` reads and
writes what the console needs but cannot change, empty or un-trigger the audit tables; the system
check passes for it and fails once it is given a way to alter the audit. The audit's TRUNCATE
switch counts only for the test role tidy_audit_test."""

import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from console.models import RepairAudit
from tests.console_personas import make_user

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = [pytest.mark.serial, pytest.mark.usefixtures("committed_db")]  # roles are the whole server's

ROOT = Path(__file__).resolve().parents[2]
SECRET = "k3-Jq9v!pX2r#L7m@Wc5zT8n$Hd4sF6g^Yb1eQ0u&Ai9oR2wE7tZ"


def _superuser() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        return cursor.fetchone()[0]


def _admin(sql: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql)


# The roles' password for this run: a server that asks for passwords (a stock cluster over TCP) gets
# it; the embedded one trusts local connections and ignores it.
ROLE_PASSWORD = uuid.uuid4().hex


def _with_password(role: str) -> str:
    _admin(f"ALTER ROLE \"{role}\" PASSWORD '{ROLE_PASSWORD}'")
    return role


def _console_schema_for(role: str) -> str:
    """What a DBA gives another role that reads the console's tables: the console's schema (nobody
    else may use it) and the search_path that finds its tables."""
    _admin(f'GRANT USAGE ON SCHEMA tidy_console TO "{role}"')
    database = connection.settings_dict["NAME"]
    _admin(f'ALTER ROLE "{role}" IN DATABASE "{database}" SET search_path TO tidy_console, public')
    return role


def _connect(role: str) -> psycopg.Connection:
    s = connection.settings_dict
    return psycopg.connect(dbname=s["NAME"], user=_with_password(role), host=s["HOST"], port=s["PORT"] or None,
                           autocommit=True, password=ROLE_PASSWORD)


def _url_as(role: str) -> str:
    base = os.environ.get("DATABASE_URL") or os.environ["EMBEDDED_DATABASE_URL"]
    parts = urlsplit(base)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    auth = f"{quote(_with_password(role))}:{ROLE_PASSWORD}"
    return urlunsplit(parts._replace(netloc=f"{auth}@{netloc}", path="/" + connection.settings_dict["NAME"]))


def _check_as(role: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "console.settings", "DATABASE_URL": _url_as(role),
           "SECRET_KEY": SECRET, "WCS_CALLBACK_TOKEN": "t" * 24, "METRICS_TOKEN": "m" * 24,
           "ALLOWED_HOSTS": "console.example"}
    return subprocess.run([sys.executable, "manage.py", "check", "--database", "default", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def roles(transactional_db):
    if not _superuser():
        pytest.skip("setting up database roles needs a superuser connection")
    suffix = uuid.uuid4().hex[:8]
    names = {"owner": f"tidy_owner_{suffix}", "runtime": f"tidy_runtime_{suffix}", "other": f"tidy_other_{suffix}"}
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regrole('tidy_audit_test') IS NOT NULL")
        had_test_role = cursor.fetchone()[0]
    yield names
    me = connection.settings_dict["USER"] or "postgres"
    with connection.cursor() as cursor:
        for name in names.values():
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
            if cursor.fetchone():
                cursor.execute(f'REASSIGN OWNED BY "{name}" TO "{me}"')
                cursor.execute(f'DROP OWNED BY "{name}"')
                cursor.execute(f'DROP ROLE "{name}"')
        if not had_test_role:
            cursor.execute("DROP ROLE IF EXISTS tidy_audit_test")


@pytest.fixture
def audited(transactional_db):
    """Both audit tables hold a row."""
    make_user("marta", "operator")  # a role change: one console_rolechangeaudit row
    RepairAudit.objects.create(username="marta", action="RECHECK", outcome="APPLIED")


REFUSED = [
    "UPDATE console_repairaudit SET outcome = 'EDITED'",
    "DELETE FROM console_repairaudit",
    "TRUNCATE console_repairaudit",
    "ALTER TABLE console_repairaudit DISABLE TRIGGER console_repairaudit_no_update_delete",
    "ALTER TABLE console_repairaudit DISABLE TRIGGER ALL",
    "DROP TRIGGER console_repairaudit_no_truncate ON console_repairaudit",
    "UPDATE console_rolechangeaudit SET after = '[]'",
    "DELETE FROM console_rolechangeaudit",
    "TRUNCATE console_rolechangeaudit",
    "ALTER TABLE console_rolechangeaudit DISABLE TRIGGER ALL",
    "UPDATE console_silence SET comment = ''",
    "DELETE FROM console_silenceending",
    "ALTER TABLE console_silence DISABLE TRIGGER ALL",
    "CREATE TABLE public.sneaky (id int)",
    "CREATE TABLE tidy_console.sneaky (id int)",
    "CREATE TABLE sneaky (id int)",
    "UPDATE recovery_cordon SET reason = 'edited'",
    "DELETE FROM recovery_cordon",
    "DELETE FROM recovery_cordonlift",
    "TRUNCATE recovery_cordonlift",
]


def test_the_runtime_role_cannot_alter_the_audit_and_the_check_says_so(roles, audited):
    call_command("db_roles", owner=roles["owner"], runtime=roles["runtime"])
    call_command("db_roles", owner=roles["owner"], runtime=roles["runtime"])  # idempotent

    with _connect(roles["runtime"]) as runtime:
        # What the console needs works ...
        assert runtime.execute("SELECT count(*) FROM console_repairaudit").fetchone()[0] == 1
        runtime.execute("INSERT INTO console_rolechangeaudit (at, changed_by, user_id, username, before, after, via) "
                        "VALUES (now(), '', 1, 'x', '[]', '[]', 'application')")
        runtime.execute("INSERT INTO recovery_cordon (scope, place, reason, created_by) "
                        "VALUES ('SPACE', 'A01-01-01', 'inspection', 'x')")
        runtime.execute("INSERT INTO recovery_processheartbeat (worker, cluster, host, cluster_pid, shards) "
                        "VALUES ('h:1', 'h:cluster-1', 'h', 1, '[]') ON CONFLICT (worker) DO UPDATE "
                        "SET last_seen_at = now()")
        runtime.execute("UPDATE alg.tidy_workflow SET updated_at = updated_at WHERE false")
        runtime.execute("UPDATE console_cancelproposal SET status = status WHERE false")
        runtime.execute("DELETE FROM django_session WHERE false")
        runtime.execute("SELECT count(*) FROM axes_accessattempt").fetchone()
        # ... changing or emptying the audit does not, with or without the truncate switch.
        runtime.execute("SET tidy.audit_truncate_allowed = 'on'")
        for sql in REFUSED:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                runtime.execute(sql)
    assert RepairAudit.objects.count() == 1

    # Grants go by schema: the owner owns the console's schema and creates only there; another role
    # cannot even see the console's tables; both roles start with the console's schema first.
    with _connect(roles["owner"]) as owner:
        assert owner.execute("SELECT current_schema()").fetchone() == ("tidy_console",)
        owner.execute("CREATE TABLE owner_made (id int)")  # in tidy_console
        assert owner.execute("SELECT to_regclass('tidy_console.owner_made') IS NOT NULL").fetchone() == (True,)
        owner.execute("DROP TABLE owner_made")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            owner.execute("CREATE TABLE public.owner_made (id int)")
    _admin(f'CREATE ROLE "{roles["other"]}" LOGIN')
    with _connect(roles["other"]) as other, pytest.raises(psycopg.errors.InsufficientPrivilege):
        other.execute("SELECT count(*) FROM tidy_console.django_session")

    result = _check_as(roles["runtime"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "console.W110" not in result.stderr

    _admin(f'GRANT UPDATE ON console_repairaudit TO "{roles["runtime"]}"')
    result = _check_as(roles["runtime"])
    assert result.returncode != 0
    assert "console.W110" in result.stderr and "may UPDATE on console_repairaudit" in result.stderr

    _admin(f'REVOKE UPDATE ON console_repairaudit FROM "{roles["runtime"]}"')
    _admin(f'ALTER TABLE console_rolechangeaudit OWNER TO "{roles["runtime"]}"')
    result = _check_as(roles["runtime"])
    assert result.returncode != 0 and "owns it" in result.stderr and "console_rolechangeaudit" in result.stderr

    # The owner role, which runs migrations, is told too (a warning: migrate still runs).
    _admin(f'ALTER TABLE console_rolechangeaudit OWNER TO "{roles["owner"]}"')
    result = _check_as(roles["owner"])
    assert result.returncode != 0 and "owns it" in result.stderr


def test_the_truncate_switch_counts_only_for_the_test_role(roles, audited):
    other = roles["other"]
    _admin(f'CREATE ROLE "{other}" LOGIN')
    _admin(f'GRANT SELECT, TRUNCATE ON console_repairaudit TO "{other}"')
    _console_schema_for(other)
    with _connect(other) as conn:
        conn.execute("SET tidy.audit_truncate_allowed = 'on'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute("TRUNCATE console_repairaudit")  # privilege granted; the trigger refuses
    assert RepairAudit.objects.count() == 1

    _admin("DO $$ BEGIN IF to_regrole('tidy_audit_test') IS NULL THEN CREATE ROLE tidy_audit_test NOLOGIN; END IF; "
           "END $$")
    _admin(f'GRANT tidy_audit_test TO "{other}"')
    with _connect(other) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        conn.execute("TRUNCATE console_repairaudit")  # a member of the test role, but no switch
    assert RepairAudit.objects.count() == 1


def test_the_test_role_may_empty_the_audit_with_the_switch(roles, audited):
    other = roles["other"]
    _admin(f'CREATE ROLE "{other}" LOGIN')
    _admin(f'GRANT SELECT, TRUNCATE ON console_repairaudit TO "{other}"')
    _console_schema_for(other)
    _admin("DO $$ BEGIN IF to_regrole('tidy_audit_test') IS NULL THEN CREATE ROLE tidy_audit_test NOLOGIN; END IF; "
           "END $$")
    _admin(f'GRANT tidy_audit_test TO "{other}"')
    with _connect(other) as conn:
        conn.execute("SET tidy.audit_truncate_allowed = 'on'")
        with conn.transaction(force_rollback=True):
            conn.execute("TRUNCATE console_repairaudit")
            assert conn.execute("SELECT count(*) FROM console_repairaudit").fetchone()[0] == 0
    assert RepairAudit.objects.count() == 1


def test_db_roles_prints_its_sql_and_refuses_bad_names(capsys):
    from django.core.management.base import CommandError

    call_command("db_roles", owner="tidy_owner", runtime="tidy_runtime", print_sql=True)
    out = capsys.readouterr().out
    assert "set_config('tidy.runtime_role', 'tidy_runtime', false)" in out and "REASSIGN OWNED BY" in out
    assert "set_config('tidy.console_schema', 'tidy_console', false)" in out
    with pytest.raises(CommandError, match="--runtime must be"):
        call_command("db_roles", owner="tidy_owner", runtime="x'; DROP TABLE y; --", print_sql=True)
    with pytest.raises(CommandError, match="two different roles"):
        call_command("db_roles", owner="same", runtime="same", print_sql=True)
