"""Baseline, verified backup, exact restore and row-by-row comparison of the replay's database,
and the replay's one home for SQL: every statement the replay package runs is named here. The
backup/restore statements are built from quoted catalog identifiers (the run's backup schema,
each table's columns), so they are composed in the functions below rather than as constants;
the WMS statements the replay shares with the product come from recovery/engine/wms_sql.py.

The baseline covers every WMS table (docs/architecture.md §3) and every table of the console's own apps
(all Django tables of this database, django_migrations included): one md5 of `row::text` per
row keyed by its primary key, plus the state of every sequence those tables own. The backup
is a copy of those tables in a run-scoped schema, taken in the same REPEATABLE READ snapshot
as the baseline and verified against it before any scenario runs.

The restore runs in one transaction with `session_replication_role = replica`, so neither the
audit table's append-only trigger nor foreign keys fire while rows are put back; that needs a
superuser, which `check_superuser` verifies before anything is written.
"""

import hashlib
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction

from recovery.engine.wms_sql import WMS_TABLES
from recovery.errors import Refused

BACKUP_SCHEMA_PREFIX = "tidy_replay_backup_"
SEQUENCES_TABLE = "replay_sequences"
MANIFEST_TABLE = "replay_manifest"

# --- named SQL ----------------------------------------------------------------------------------

IS_SUPERUSER = """
SELECT rolsuper
FROM pg_roles
WHERE rolname = current_user
"""

OTHER_CLIENT_SESSIONS = """
SELECT pid,
       coalesce(nullif(application_name, ''), '(no application name)') AS application_name,
       coalesce(client_addr::text, 'local socket') AS client,
       state
FROM pg_stat_activity
WHERE datname = current_database()
  AND backend_type = 'client backend'
  AND pid <> pg_backend_pid()
ORDER BY pid
"""

LEFTOVER_BACKUPS = """
SELECT nspname
FROM pg_namespace
WHERE nspname LIKE 'tidy\\_replay\\_backup\\_%%'
ORDER BY nspname
"""

TABLE_SHAPE = """
SELECT a.attname,
       a.attgenerated <> '' AS generated,
       coalesce(a.attnum = ANY (i.indkey::int2[]), false) AS in_key,
       array_position(i.indkey::int2[], a.attnum) AS key_position
FROM pg_attribute AS a
LEFT JOIN pg_index AS i
    ON i.indrelid = a.attrelid
   AND i.indisprimary
WHERE a.attrelid = %(table)s::regclass
  AND a.attnum > 0
  AND NOT a.attisdropped
ORDER BY a.attnum
"""

TABLE_EXISTS = "SELECT to_regclass(%(t)s)"

OWNED_SEQUENCES = """
SELECT s.oid::regclass::text
FROM pg_depend AS d
JOIN pg_class AS s
    ON s.oid = d.objid
   AND s.relkind = 'S'
WHERE d.refobjid = %(table)s::regclass
  AND d.classid = 'pg_class'::regclass
  AND d.deptype IN ('a', 'i')
ORDER BY 1
"""


# --- named SQL of the scenarios, their context, the process supervisor and the runner ----------
# Statements for Django's cursor take %(name)s parameters; those run on a direct psycopg
# connection (a second session: a lock holder, a terminator) take %s.


STATE_QUERIES = {
    "workflows": """
        SELECT to_jsonb(w) FROM alg.tidy_workflow AS w
        WHERE w.workflow_id = ANY (%(w)s::bigint[]) ORDER BY w.workflow_id""",
    "steps": """
        SELECT to_jsonb(s) FROM alg.tidy_step AS s
        WHERE s.workflow_id = ANY (%(w)s::bigint[]) ORDER BY s.workflow_id, s.step_no""",
    "space_locks": """
        SELECT to_jsonb(l) FROM alg.tidy_space_lock AS l
        WHERE l.workflow_id = ANY (%(w)s::bigint[]) ORDER BY l.lock_id""",
    "callback_events": """
        SELECT to_jsonb(e) - 'payload' FROM alg.tidy_callback_event AS e
        WHERE e.workflow_id = ANY (%(w)s::bigint[]) ORDER BY e.event_id""",
    "active_jobs": """
        SELECT to_jsonb(j) FROM public.mydo_job AS j
        WHERE j.job_id = ANY (%(jobs)s::text[]) ORDER BY j.job_id""",
    "finished_jobs": """
        SELECT to_jsonb(f) FROM public.mydo_job_finish AS f
        WHERE f.job_id = ANY (%(jobs)s::text[]) ORDER BY f.finish_id""",
    "stock": """
        SELECT to_jsonb(b) FROM public.bas_stock AS b
        WHERE b.tray_code = ANY (%(trays)s::text[]) ORDER BY b.stock_id""",
    "cargo_spaces": """
        SELECT to_jsonb(c) FROM public.bas_cargo_space AS c
        WHERE c.cargo_space_id = ANY (%(spaces)s::text[]) ORDER BY c.cargo_space_id""",
    "recovery_decisions": """
        SELECT to_jsonb(d) - 'evidence' FROM recovery_recoverydecision AS d
        WHERE d.workflow_id = ANY (%(w)s::bigint[]) ORDER BY d.id""",
    "callback_receipts": """
        SELECT to_jsonb(r) - 'payload' FROM recovery_callbackreceipt AS r
        WHERE r.workflow_id = ANY (%(w)s::bigint[]) ORDER BY r.id""",
}

INSERT_SPACES = """
INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
SELECT space, tray
FROM unnest(%(spaces)s::text[], %(trays)s::text[]) AS u (space, tray)
"""

INSERT_STOCK = """
INSERT INTO public.bas_stock (tray_code, cargo_space_id, sku, qty)
SELECT tray, space, sku, qty
FROM unnest(%(trays)s::text[], %(spaces)s::text[], %(skus)s::text[], %(qtys)s::numeric[]) AS u (tray, space, sku, qty)
"""

STEPS_OF_WORKFLOWS = """
SELECT step_id, workflow_id, tray_code, cargo_space_id, target_cargo_space_id
FROM alg.tidy_step
WHERE workflow_id = ANY (%(w)s::bigint[])
"""

WORKFLOW_STATUS = """
SELECT status, pause_reason
FROM alg.tidy_workflow
WHERE workflow_id = %(w)s
"""

# A fixture fault: the job row lost, as a WMS restart without it would leave it.
DELETE_ACTIVE_JOB = """
DELETE FROM public.mydo_job
WHERE job_id = %(job_id)s
"""

EVENTS_IN_WINDOW = """
SELECT received_at, workflow_id, step_id, job_id, stage
FROM alg.tidy_callback_event
WHERE workflow_id = ANY (%(w)s::bigint[])
  AND received_at BETWEEN %(s)s AND %(e)s
"""

IN_TRANSACTION = """
SELECT pid,
       query,
       now() - xact_start AS in_transaction_for
FROM pg_stat_activity
WHERE datname = current_database()
  AND application_name = %(application_name)s
  AND state = 'idle in transaction'
  AND backend_xid IS NOT NULL
  AND query ILIKE %(statement)s
ORDER BY xact_start
"""

SESSIONS_OF = """
SELECT pid
FROM pg_stat_activity
WHERE datname = current_database()
  AND application_name = %(application_name)s
"""

# The session holding the runner lease (an advisory lock on RUNNER_LEASE_KEY) in this database
# (pg_locks shows the whole server's).
LEASE_HOLDER = """
SELECT pid
FROM pg_locks
WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND locktype = 'advisory'
  AND objid = %s
  AND granted
"""

TERMINATE_BACKEND = "SELECT pg_terminate_backend(%s)"

# Another session holds the workflow row (run on a direct connection inside its own transaction).
HOLD_WORKFLOW_ROW = """
SELECT workflow_id
FROM alg.tidy_workflow
WHERE workflow_id = %s
FOR UPDATE
"""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    columns: tuple[str, ...]  # stored (not generated) columns, in order
    key: tuple[str, ...]  # primary key columns (empty: the row's digest is its key)
    sequences: tuple[str, ...]

    @property
    def label(self) -> str:
        """The WMS's tables as WMS_TABLES lists them (mydo_job, alg.tidy_step), the console's by name."""
        return self.name if self.schema in ("public", settings.CONSOLE_DB_SCHEMA) else f"{self.schema}.{self.name}"

    @property
    def qualified(self) -> str:
        return f"{_quote(self.schema)}.{_quote(self.name)}"

    def backup(self, backup_schema: str) -> str:
        return f"{_quote(backup_schema)}.{_quote(f'{self.schema}__{self.name}')}"

    @property
    def row_expr(self) -> str:
        """The row's stored columns as text (the same in the live table and its backup copy)."""
        return "ROW(" + ", ".join(f"t.{_quote(c)}" for c in self.columns) + ")::text"

    @property
    def key_expr(self) -> str:
        if not self.key:
            return f"md5({self.row_expr})"
        if len(self.key) == 1:
            return f"t.{_quote(self.key[0])}::text"
        return "ROW(" + ", ".join(f"t.{_quote(k)}" for k in self.key) + ")::text"


def _split(label: str, default_schema: str) -> tuple[str, str]:
    schema, _, name = label.rpartition(".")
    return schema or default_schema, name


def replay_tables() -> list[Table]:
    """The WMS tables and every existing table of the installed apps, plus django_migrations (in
    the console's schema, CONSOLE_DB_SCHEMA)."""
    django_tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    labels = [_split(label, "public") for label in WMS_TABLES]
    labels += [_split(label, settings.CONSOLE_DB_SCHEMA)
               for label in sorted(set(django_tables) | {"django_migrations"})]
    tables = []
    with connection.cursor() as cursor:
        for schema, name in labels:
            cursor.execute(TABLE_EXISTS, {"t": f"{_quote(schema)}.{_quote(name)}"})
            if cursor.fetchone()[0] is None:
                continue
            regclass = f"{_quote(schema)}.{_quote(name)}"
            cursor.execute(TABLE_SHAPE, {"table": regclass})
            rows = cursor.fetchall()
            columns = tuple(r[0] for r in rows if not r[1])
            key = tuple(r[0] for r in sorted((r for r in rows if r[2]), key=lambda r: r[3]))
            cursor.execute(OWNED_SEQUENCES, {"table": regclass})
            sequences = tuple(r[0] for r in cursor.fetchall())
            tables.append(Table(schema, name, columns, key, sequences))
    return tables


# --- checksums ----------------------------------------------------------------------------------


@dataclass
class Checksums:
    """{table label: {key: md5 of row::text}} and {sequence: (last_value, is_called)}."""

    rows: dict[str, dict[str, str]] = field(default_factory=dict)
    sequences: dict[str, list] = field(default_factory=dict)

    def table_digest(self, label: str) -> str:
        joined = "\n".join(f"{k}={v}" for k, v in sorted(self.rows[label].items()))
        return hashlib.sha256(joined.encode()).hexdigest()

    def summary(self) -> list[dict]:
        return [{"table": label, "rows": len(rows), "digest": self.table_digest(label)}
                for label, rows in self.rows.items()]


def _row_checksums(cursor, source: str, table: Table) -> dict[str, str]:
    cursor.execute(f"SELECT {table.key_expr}, md5({table.row_expr}) FROM {source} AS t")
    out: dict[str, str] = {}
    for key, digest in cursor.fetchall():
        if not table.key:  # no primary key: a multiset of row digests
            n = 1
            while f"{key}#{n}" in out:
                n += 1
            key = f"{key}#{n}"
        out[key] = digest
    return out


def _sequence_state(cursor, sequence: str) -> list:
    cursor.execute(f"SELECT last_value, is_called FROM {sequence}")  # a regclass name from the catalog
    last_value, is_called = cursor.fetchone()
    return [int(last_value), bool(is_called)]


def live_checksums(tables: list[Table]) -> Checksums:
    sums = Checksums()
    with connection.cursor() as cursor:
        for table in tables:
            sums.rows[table.label] = _row_checksums(cursor, table.qualified, table)
            for seq in table.sequences:
                sums.sequences[seq] = _sequence_state(cursor, seq)
    return sums


def backup_checksums(tables: list[Table], backup_schema: str) -> Checksums:
    sums = Checksums()
    with connection.cursor() as cursor:
        for table in tables:
            sums.rows[table.label] = _row_checksums(cursor, table.backup(backup_schema), table)
        cursor.execute(f"SELECT sequence, last_value, is_called FROM {_quote(backup_schema)}.{SEQUENCES_TABLE}")
        for seq, last_value, is_called in cursor.fetchall():
            sums.sequences[seq] = [int(last_value), bool(is_called)]
    return sums


# --- preflight ----------------------------------------------------------------------------------


class ReplayRefused(Refused):
    """The replay will not run (or not restore) here; nothing was written."""


def check_superuser() -> None:
    with connection.cursor() as cursor:
        cursor.execute(IS_SUPERUSER)
        row = cursor.fetchone()
    if not row or not row[0]:
        raise ReplayRefused(
            "the database user is not a superuser: the replay restores the baseline with "
            "session_replication_role = replica (so the audit table's append-only trigger and foreign keys "
            "do not fire), which PostgreSQL allows only to superusers. Nothing was written.")


def other_sessions() -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(OTHER_CLIENT_SESSIONS)
        return [dict(zip(("pid", "application_name", "client", "state"), r, strict=True)) for r in cursor.fetchall()]


def leftover_backups() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(LEFTOVER_BACKUPS)
        return [r[0] for r in cursor.fetchall()]


# --- backup -------------------------------------------------------------------------------------


@dataclass
class Baseline:
    backup_schema: str
    tables: list[Table]
    checksums: Checksums
    verified: bool = False
    verify_mismatches: list[dict] = field(default_factory=list)


def take_baseline(run_id: str) -> Baseline:
    """In one REPEATABLE READ snapshot: checksum every row and sequence, copy every table into the
    run's backup schema; then verify the copy against the checksums."""
    backup_schema = f"{BACKUP_SCHEMA_PREFIX}{run_id}".lower()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        tables = replay_tables()
        sums = live_checksums(tables)
        cursor.execute(f"CREATE SCHEMA {_quote(backup_schema)}")
        for table in tables:
            cols = ", ".join(_quote(c) for c in table.columns)
            cursor.execute(f"CREATE TABLE {table.backup(backup_schema)} AS SELECT {cols} FROM {table.qualified}")
        cursor.execute(f"CREATE TABLE {_quote(backup_schema)}.{SEQUENCES_TABLE} "
                       "(sequence text PRIMARY KEY, last_value bigint NOT NULL, is_called boolean NOT NULL)")
        for seq, (last_value, is_called) in sums.sequences.items():
            cursor.execute(f"INSERT INTO {_quote(backup_schema)}.{SEQUENCES_TABLE} VALUES (%(s)s, %(v)s, %(c)s)",
                           {"s": seq, "v": last_value, "c": is_called})
        cursor.execute(f"CREATE TABLE {_quote(backup_schema)}.{MANIFEST_TABLE} "
                       "(label text PRIMARY KEY, schema_name text NOT NULL, table_name text NOT NULL)")
        for table in tables:
            cursor.execute(f"INSERT INTO {_quote(backup_schema)}.{MANIFEST_TABLE} VALUES (%(l)s, %(s)s, %(n)s)",
                           {"l": table.label, "s": table.schema, "n": table.name})
    baseline = Baseline(backup_schema, tables, sums)
    copy = backup_checksums(tables, backup_schema)
    baseline.verify_mismatches = compare(sums, copy, expected_name="live", actual_name="backup")
    baseline.verified = not baseline.verify_mismatches
    return baseline


def tables_of_backup(backup_schema: str) -> list[Table]:
    """The tables a kept backup schema covers (for restoring a backup left by an earlier run)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT label FROM {_quote(backup_schema)}.{MANIFEST_TABLE}")
        labels = {r[0] for r in cursor.fetchall()}
    wanted = [t for t in replay_tables() if t.label in labels]
    missing = labels - {t.label for t in wanted}
    if missing:
        raise ReplayRefused(f"backup {backup_schema} covers tables that no longer exist: {', '.join(sorted(missing))}")
    return wanted


# --- restore and compare -----------------------------------------------------------------------


def restore(tables: list[Table], backup_schema: str, *, lock_timeout_ms: int = 30000) -> dict:
    """Put every table back as the backup holds it and reset every sequence, in one transaction."""
    counts = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("SELECT set_config('lock_timeout', %(t)s, true)", {"t": f"{int(lock_timeout_ms)}ms"})
        for table in tables:
            cursor.execute(f"DELETE FROM {table.qualified}")
            counts[table.label] = {"deleted": cursor.rowcount}
        for table in tables:
            cols = ", ".join(_quote(c) for c in table.columns)
            cursor.execute(f"INSERT INTO {table.qualified} ({cols}) OVERRIDING SYSTEM VALUE "
                           f"SELECT {cols} FROM {table.backup(backup_schema)}")
            counts[table.label]["inserted"] = cursor.rowcount
        cursor.execute(f"SELECT sequence, last_value, is_called FROM {_quote(backup_schema)}.{SEQUENCES_TABLE}")
        for seq, last_value, is_called in cursor.fetchall():
            cursor.execute("SELECT setval(%(s)s::regclass, %(v)s, %(c)s)", {"s": seq, "v": last_value, "c": is_called})
    return counts


def compare(expected: Checksums, actual: Checksums, *, expected_name: str = "baseline",
            actual_name: str = "live") -> list[dict]:
    """Every row (and sequence) that differs: added, removed or changed, keyed by table and key."""
    out = []
    for label in sorted(set(expected.rows) | set(actual.rows)):
        exp, act = expected.rows.get(label), actual.rows.get(label)
        if exp is None or act is None:
            where = expected_name if exp is None else actual_name
            out.append({"table": label, "key": None, "kind": f"table missing in {where}"})
            continue
        for key in sorted(exp.keys() - act.keys()):
            out.append({"table": label, "key": key, "kind": f"row missing in {actual_name}", expected_name: exp[key]})
        for key in sorted(act.keys() - exp.keys()):
            out.append({"table": label, "key": key, "kind": f"row not in {expected_name}", actual_name: act[key]})
        for key in sorted(k for k in exp.keys() & act.keys() if exp[k] != act[k]):
            out.append({"table": label, "key": key, "kind": "row differs", expected_name: exp[key],
                        actual_name: act[key]})
    for seq in sorted(set(expected.sequences) | set(actual.sequences)):
        if expected.sequences.get(seq) != actual.sequences.get(seq):
            out.append({"table": seq, "key": None, "kind": "sequence differs",
                        expected_name: expected.sequences.get(seq), actual_name: actual.sequences.get(seq)})
    return out


def describe_rows(mismatches: list[dict], tables: list[Table], backup_schema: str, limit: int = 500) -> None:
    """Add the row text (live and baseline) to each differing row, so the report shows it."""
    by_label = {t.label: t for t in tables}
    with connection.cursor() as cursor:
        for m in mismatches[:limit]:
            table = by_label.get(m["table"])
            if table is None or m["key"] is None or not table.key:
                continue
            for source, name in ((table.qualified, "live_row"), (table.backup(backup_schema), "baseline_row")):
                cursor.execute(f"SELECT {table.row_expr} FROM {source} AS t WHERE {table.key_expr} = %(k)s",
                               {"k": m["key"]})
                row = cursor.fetchone()
                m[name] = row[0][:2000] if row else None


def drop_backup(backup_schema: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA {_quote(backup_schema)} CASCADE")


# --- chaos (console/replay/chaos.py) ------------------------------------------------------------
# The invariants a chaos run checks, over the workflows it created (workflow_id above the
# highest one before the run) and their trays. Each returns the rows that break it: none is right.

CHAOS_HIGHEST_WORKFLOW = "SELECT coalesce(max(workflow_id), 0) FROM alg.tidy_workflow"

# Every client session but the one asking: what a network cut or a failover ends.
CHAOS_TERMINATE_EVERY_SESSION = """
SELECT count(pg_terminate_backend(pid))
FROM pg_stat_activity
WHERE pid <> pg_backend_pid()
  AND backend_type = 'client backend'
"""

# A tray's stock booked in more than one space.
CHAOS_TRAY_BOOKED_TWICE = """
SELECT b.tray_code, array_agg(DISTINCT b.cargo_space_id ORDER BY b.cargo_space_id)
FROM public.bas_stock AS b
WHERE b.tray_code IN (SELECT s.tray_code FROM alg.tidy_step AS s WHERE s.workflow_id > %(since)s)
  AND b.cargo_space_id IS NOT NULL
GROUP BY b.tray_code
HAVING count(DISTINCT b.cargo_space_id) > 1
"""

# A tray standing in more than one space, or in a space its stock is not booked to.
CHAOS_TRAY_IN_TWO_SPACES = """
SELECT c.tray_code, array_agg(c.cargo_space_id ORDER BY c.cargo_space_id)
FROM public.bas_cargo_space AS c
WHERE c.tray_code IN (SELECT s.tray_code FROM alg.tidy_step AS s WHERE s.workflow_id > %(since)s)
GROUP BY c.tray_code
HAVING count(*) > 1
    OR bool_or(NOT EXISTS (SELECT 1 FROM public.bas_stock AS b
                           WHERE b.tray_code = c.tray_code AND b.cargo_space_id = c.cargo_space_id))
"""

# A completed step whose job is not archived exactly once, or that has not exactly one finish
# event (a callback's MOVE_FINISHED or OUTBOUND_FINISHED, or recovery's RECOVERY_FINISHED).
CHAOS_COMPLETED_STEP_NOT_ONCE = """
SELECT s.workflow_id, s.step_id, a.archived, e.finish_events
FROM alg.tidy_step AS s
CROSS JOIN LATERAL (SELECT count(*) AS archived FROM public.mydo_job_finish AS f
                    WHERE f.job_id = 'TDY-' || s.workflow_id || '-' || s.step_id) AS a
CROSS JOIN LATERAL (SELECT count(*) AS finish_events FROM alg.tidy_callback_event AS e
                    WHERE e.workflow_id = s.workflow_id AND e.step_id = s.step_id
                      AND e.stage IN ('MOVE_FINISHED', 'OUTBOUND_FINISHED', 'RECOVERY_FINISHED')) AS e
WHERE s.workflow_id > %(since)s
  AND s.status = 'COMPLETED'
  AND (a.archived <> 1 OR e.finish_events <> 1)
"""

# A space lock still held by a workflow that completed.
CHAOS_LOCK_ON_COMPLETED = """
SELECT l.workflow_id, l.cargo_space_id
FROM alg.tidy_space_lock AS l
JOIN alg.tidy_workflow AS w
    ON w.workflow_id = l.workflow_id
WHERE w.workflow_id > %(since)s
  AND w.status = 'COMPLETED'
"""

CHAOS_WORKFLOW_COUNTS = """
SELECT status, count(*)
FROM alg.tidy_workflow
WHERE workflow_id > %(since)s
GROUP BY status
"""
