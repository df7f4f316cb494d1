"""The console's tables in their own schema, CONSOLE_DB_SCHEMA (design §16): made there on a fresh
database, moved there (rows, sequences, triggers and all) from `public` on a database an earlier
release migrated, on the embedded PostgreSQL 18 and on a stock Debian PostgreSQL 15; the WMS's
tables stay in public; every process finds the console's tables through its role's search_path
(no startup option, no session SET that a transaction-mode pool would hand to another client)."""

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from console.database.schema import check_console_schema_in_use, move_console_objects
from tests.ops.test_production_config import free_port

ROOT = Path(__file__).resolve().parents[2]
WMS_PUBLIC_TABLES = {"mydo_job", "mydo_job_finish", "bas_stock", "bas_cargo_space"}
# A few of every kind the console owns: Django's, django-q2's, the cache, recovery_*, console_*.
CONSOLE_TABLES = {"django_migrations", "django_session", "auth_user", "django_q_ormq", "django_q_schedule",
                  "axes_accessattempt", "tidy_cache", "recovery_recoverycycle", "recovery_callbackreceipt",
                  "console_repairaudit", "console_notification"}

TABLES_BY_SCHEMA = """
SELECT n.nspname, c.relname
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
"""
CONSOLE_FUNCTIONS_IN_PUBLIC = """
SELECT p.proname FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.proname ~ '^(console|recovery)_'
"""
ROLE_SEARCH_PATH = """
SELECT s.setconfig
FROM pg_db_role_setting AS s
JOIN pg_database AS d ON d.oid = s.setdatabase
JOIN pg_roles AS r ON r.oid = s.setrole
WHERE d.datname = current_database() AND r.rolname = current_user
"""


def _tables(conn) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for schema, name in conn.execute(TABLES_BY_SCHEMA).fetchall():
        found.setdefault(schema, set()).add(name)
    return found


# --- the test database, migrated by this code ------------------------------------------------------------


def test_a_fresh_database_has_the_console_tables_in_their_schema_and_only_the_wms_tables_in_public(db):
    with connection.cursor() as cursor:
        cursor.execute(TABLES_BY_SCHEMA)
        tables: dict[str, set[str]] = {}
        for schema, name in cursor.fetchall():
            tables.setdefault(schema, set()).add(name)
        cursor.execute(CONSOLE_FUNCTIONS_IN_PUBLIC)
        functions = cursor.fetchall()
        cursor.execute("SELECT current_schema(), current_setting('search_path')")
        current, path = cursor.fetchone()
        cursor.execute(ROLE_SEARCH_PATH)
        role_settings = cursor.fetchone()[0]
    assert settings.CONSOLE_DB_SCHEMA == "tidy_console"
    assert tables["public"] == WMS_PUBLIC_TABLES
    assert tables["tidy_console"] >= CONSOLE_TABLES
    assert not tables["tidy_console"] & (WMS_PUBLIC_TABLES | {"tidy_workflow", "tidy_step"})
    assert functions == []
    # The role's own setting in this database is what a session starts with.
    assert (current, path) == ("tidy_console", "tidy_console, public")
    assert "search_path=tidy_console, public" in role_settings


def test_a_new_session_finds_the_console_tables_through_the_role_alone():
    """A plain connection with no options at all (as PgBouncer would open one): the role's setting
    is all it needs."""
    s = connection.settings_dict
    with psycopg.connect(dbname=s["NAME"], user=s["USER"] or None, host=s["HOST"] or None, port=s["PORT"] or None,
                         autocommit=True) as conn:
        assert conn.execute("SELECT current_schema()").fetchone() == ("tidy_console",)
        schema_of = "SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = to_regclass(%s)"
        assert conn.execute(schema_of, ["django_migrations"]).fetchone() == ("tidy_console",)
        assert conn.execute(schema_of, ["mydo_job"]).fetchone() == ("public",)


# --- a database an earlier release migrated, then this one ---------------------------------------------------


def _release_before_the_schema(target: Path) -> Path:
    """The code of the release before the console's schema: the parent of the commit that added the
    schema migration (HEAD itself while that migration is not committed yet)."""
    added = subprocess.run(["git", "log", "--diff-filter=A", "--format=%H", "--",
                            "console/migrations/*_console_db_schema.py"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    revision = f"{added[-1]}^" if added else "HEAD"
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True, check=True).stdout
    target.mkdir()
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    assert not list((target / "console" / "migrations").glob("*_console_db_schema.py"))
    return target


def _environment(url: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"EMBEDDED_DATABASE_URL", "TIDY_TEST_OWNS_EMBEDDED_DB", "EMBEDDED_DB_DIR", "DEBUG",
                        "LOG_FORMAT", "CONSOLE_DB_SCHEMA"}}
    env.update({"DJANGO_SETTINGS_MODULE": "console.settings", "DATABASE_URL": url,
                "SECRET_KEY": "schema-test-secret-key-" + "k" * 40, "WCS_CALLBACK_TOKEN": "t" * 24,
                "METRICS_TOKEN": "m" * 24, "ALLOWED_HOSTS": "localhost", "LOG_FORMAT": "text"})
    return env


def _manage(code: Path, url: str, *arguments: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *arguments], cwd=code, env=_environment(url),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _embedded_server():
    """A database of its own on the tests' embedded server (dropped afterwards)."""
    s = connection.settings_dict
    name = f"tidy_schema_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    host = s["HOST"]
    auth = quote(s["USER"] or "postgres")
    url = (f"postgresql://{auth}@/{name}?host={quote(host)}" if host.startswith("/")
           else f"postgresql://{auth}@{host}:{s['PORT'] or 5432}/{name}")
    yield url
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _postgresql_15():
    """A stock Debian PostgreSQL 15 cluster of its own over TCP (stack notes), dropped afterwards."""
    if not shutil.which("pg_createcluster") or not Path("/usr/lib/postgresql/15/bin/postgres").exists():
        pytest.skip("Debian's PostgreSQL 15 (pg_createcluster) is not installed")
    if os.geteuid() != 0:
        pytest.skip("pg_createcluster needs root")
    name, port = f"tidy{uuid.uuid4().hex[:8]}", free_port()
    created = subprocess.run(["pg_createcluster", "15", name, "--port", str(port), "--start", "--",
                              "--auth=trust"], capture_output=True, text=True, timeout=120)
    assert created.returncode == 0, created.stdout + created.stderr
    try:
        with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE tidy")
        yield f"postgresql://postgres@127.0.0.1:{port}/tidy"
    finally:
        subprocess.run(["pg_dropcluster", "--stop", "15", name], capture_output=True, timeout=120)


@pytest.fixture(params=["embedded-18", "postgresql-15"])
def empty_database(request, transactional_db):
    servers = {"embedded-18": _embedded_server, "postgresql-15": _postgresql_15}
    yield from servers[request.param]()


@pytest.mark.slow
@pytest.mark.serial  # pg_createcluster and CREATE DATABASE are the server's, not one test database's
def test_an_earlier_release_s_tables_move_out_of_public_with_their_rows(empty_database, tmp_path):
    url = empty_database
    earlier = _release_before_the_schema(tmp_path / "earlier")
    _manage(earlier, url, "migrate", "--verbosity", "0")
    _manage(earlier, url, "wms_schema", "--verbosity", "0")
    with psycopg.connect(url, autocommit=True) as conn:
        before = _tables(conn)
        assert before["public"] >= CONSOLE_TABLES  # where the earlier release put them
        conn.execute("INSERT INTO auth_group (name) VALUES ('kept across the move')")
        conn.execute("INSERT INTO console_repairaudit (at, username, action, stage, pause_reason, reason_code, "
                     "reason_text, inputs, fingerprint_previewed, fingerprint_before, fingerprint_after, changes, "
                     "outcome, message, decision_after, consistent_after) VALUES (now(), 'marta', 'RECHECK', '', "
                     "'', '', '', '{}', '', '', '', '[]', 'APPLIED', '', '', true)")
        conn.execute("INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code) VALUES ('A01-01-01', 'T1')")

    out = _manage(ROOT, url, "migrate")
    assert "Applying console.0016_console_db_schema... OK" in out or "_console_db_schema... OK" in out

    with psycopg.connect(url, autocommit=True) as conn:
        after = _tables(conn)
        assert after["public"] == WMS_PUBLIC_TABLES  # no console table left beside the WMS's
        moved = before["public"] - WMS_PUBLIC_TABLES
        assert after["tidy_console"] >= moved  # every table the earlier release left in public
        # and, beside them, only the tables of the models this release added (made there directly).
        models = {model._meta.db_table for model in apps.get_models()}
        assert after["tidy_console"] - moved <= models, after["tidy_console"] - moved - models
        assert conn.execute(CONSOLE_FUNCTIONS_IN_PUBLIC).fetchall() == []
        # The rows came along, identities go on, and the append-only triggers still refuse.
        assert conn.execute("SELECT name FROM tidy_console.auth_group WHERE name = 'kept across the move'"
                            ).fetchall() == [("kept across the move",)]
        conn.execute("INSERT INTO auth_group (name) VALUES ('after the move')")
        assert conn.execute("SELECT count(*) FROM tidy_console.console_repairaudit").fetchone() == (1,)
        with pytest.raises(psycopg.Error, match="append-only"):
            conn.execute("UPDATE tidy_console.console_repairaudit SET outcome = 'EDITED'")
        assert conn.execute("SELECT tray_code FROM public.bas_cargo_space").fetchall() == [("T1",)]
        assert conn.execute("SELECT current_schema()").fetchone() == ("tidy_console",)

    assert "No migrations to apply" in _manage(ROOT, url, "migrate")
    # The WMS's own tables still pass the shared contract check (it names them without a schema).
    check = ROOT.parent.parent / "shared" / "checks" / "wms_contract.py"
    if check.exists():
        result = subprocess.run([sys.executable, str(check)], env={**os.environ, "DATABASE_URL": url},
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.serial
def test_a_fresh_database_is_made_in_the_schema_on_both_servers(empty_database):
    url = empty_database
    _manage(ROOT, url, "migrate", "--verbosity", "0")
    _manage(ROOT, url, "wms_schema", "--verbosity", "0")
    with psycopg.connect(url, autocommit=True) as conn:
        tables = _tables(conn)
        version = conn.execute("SHOW server_version_num").fetchone()[0]
    assert tables["public"] == WMS_PUBLIC_TABLES
    assert tables["tidy_console"] >= CONSOLE_TABLES
    assert int(version) >= 150000


def test_a_console_table_in_both_schemas_is_named_not_overwritten(db):
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE public.django_session (session_key text)")  # a stray copy
    with pytest.raises(ImproperlyConfigured, match="django_session"):
        move_console_objects(connection)


def test_the_system_check_says_when_the_console_schema_is_not_in_use(db, settings):
    assert check_console_schema_in_use(databases=["default"]) == []
    settings.CONSOLE_DB_SCHEMA = "tidy_console_elsewhere"
    (warning,) = check_console_schema_in_use(databases=["default"])
    assert warning.id == "console.W121" and "tidy_console_elsewhere (CONSOLE_DB_SCHEMA)" in warning.msg
    with connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA tidy_console_elsewhere")  # rolled back with the test
    (warning,) = check_console_schema_in_use(databases=["default"])
    assert warning.id == "console.W122" and "tidy_console" in warning.msg and "db_roles" in warning.hint


# A WMS table right after an SQL keyword, without its schema.
UNQUALIFIED_WMS_TABLE = re.compile(
    r"\b(FROM|JOIN|INTO|UPDATE|TABLE|ON|EXISTS|ANALYZE|TRUNCATE)\s+\"?(mydo_job_finish|mydo_job|bas_stock|bas_cargo_space)\b")


def test_every_statement_of_the_product_names_the_wms_tables_with_their_schema():
    found = []
    for folder in ("recovery", "console", "bench", "deploy"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in {".py", ".sql"} or "migrations" in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if UNQUALIFIED_WMS_TABLE.search(line) and not line.lstrip().startswith(("#", "--")):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "name them public.<table>:\n" + "\n".join(found)
