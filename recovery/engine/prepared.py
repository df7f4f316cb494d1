"""Server-side prepared statements on Django's connection, for the per-workflow hot paths.

Django's psycopg cursors bind parameters on the client and never prepare, so PostgreSQL plans
the evidence query afresh on every call; for one workflow its planning costs several times its
execution. Here a statement runs as a psycopg prepared statement, on Django's connection and in
its current transaction. Every connection is switched to `plan_cache_mode =
force_generic_plan` when it opens (recovery.runtime.signals): PostgreSQL would otherwise keep choosing
custom plans it thinks cheaper. That setting only concerns prepared statements, and only the
ones run here are prepared (Django's own queries never are), so nothing else is affected.
"""

import time

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections

from recovery.engine import wms_sql

_NEVER_AUTOMATICALLY = 2**31


def use_generic_plans(db_connection) -> None:
    """Run when a connection opens, before any transaction, so the setting lasts its session."""
    if db_connection.vendor == "postgresql":
        with db_connection.cursor() as cursor:
            cursor.execute(wms_sql.SET_GENERIC_PLANS)


def preparing_connection():
    """Django's connection of this thread, open, with psycopg's preparation back on for explicit
    prepare=True only. Django turns it off; the threshold is out of reach, so nothing else is ever
    prepared automatically. Looked up once: the proxy `connection` looks it up again on every
    attribute it is asked for."""
    db = connections[DEFAULT_DB_ALIAS]
    db.ensure_connection()
    if db.connection.prepare_threshold is None:
        db.connection.prepare_threshold = _NEVER_AUTOMATICALLY
    return db


def run_prepared(sql: str, params: dict) -> tuple[list[str], list[tuple]]:
    """Run `sql` prepared; return (column names, rows). Errors surface as Django DatabaseErrors."""
    db = preparing_connection()
    started = time.monotonic()
    try:
        with db.wrap_database_errors, psycopg.Cursor(db.connection) as cursor:
            cursor.execute(sql, params, prepare=True)
            if not cursor.pgresult.nfields:
                return [], []
            return result_columns(sql, cursor), cursor.fetchall()
    finally:
        if db.queries_logged:  # counted with Django's own queries (DEBUG, the query-count tests)
            db.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})


# A statement's result columns are fixed by its text: their names are read from the first result
# and reused (36 names decoded per evidence read were a tenth of a decision's Python).
_RESULT_COLUMNS: dict[str, list[str]] = {}


def result_columns(sql: str, cursor: psycopg.Cursor) -> list[str]:
    """column_names of `cursor`'s result of `sql`, read once per statement text (callers only
    read the list)."""
    names = _RESULT_COLUMNS.get(sql)
    if names is None:
        names = _RESULT_COLUMNS[sql] = column_names(cursor)
    return names


def column_names(cursor: psycopg.Cursor) -> list[str]:
    """The result's column names, straight from it: `cursor.description` builds a Column object
    per column on every access, which for the evidence row (36 columns) costs more than the rest
    of a decision's Python."""
    result = cursor.pgresult
    return [result.fname(i).decode() for i in range(result.nfields)]
