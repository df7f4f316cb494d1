"""How the workflow transaction sends its statements (docs/architecture.md §6): a conditional
write that must touch the rows it expects, else StaleWrite (the whole transaction rolls back, a
stale worker changes nothing), and several prepared statements in one network round trip.
The caller holds the workflow row lock inside transaction.atomic."""

from contextlib import nullcontext

import psycopg
from django.db import DatabaseError, connection

from recovery.engine import wms_sql
from recovery.engine.prepared import preparing_connection, result_columns
from recovery.errors import TidyError


class StaleWrite(TidyError):
    """A conditional write matched no row: the state changed after it was read."""


class StaleEvidence(StaleWrite):
    """The evidence under the lock differs from the evidence a decision was made on."""


class WorkflowLocked(TidyError):
    """Another transaction holds the workflow row (raised only where waiting is not wanted)."""


def execute_rows(sql: str, params: dict) -> int:
    """Run one named statement; the number of rows it touched."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def expect_rows(sql: str, params: dict, what: str, rows: int = 1) -> None:
    """Run one conditional write that must touch exactly `rows` rows, else StaleWrite."""
    if execute_rows(sql, params) != rows:
        raise StaleWrite(f"{what}: state changed since it was read ({params})")


class PipelineFailed(DatabaseError):
    """A statement of `run_pipelined` failed; `index` is that statement's position. The
    database error itself is the cause (`__cause__`, a psycopg error with its sqlstate)."""

    def __init__(self, index: int, error: DatabaseError):
        super().__init__(str(error))
        self.index = index


def run_pipelined(statements: list[tuple[str, dict | None]]) -> list[tuple[list[str], list[tuple]]]:
    """Run statements in order, in the current transaction, in one network round trip (psycopg's
    pipeline mode when there are several; a transaction's BEGIN travels with them). Each is a
    prepared statement, except those given `None` for parameters (SAVEPOINT, RELEASE: commands
    PostgreSQL does not prepare). PostgreSQL still runs them one after the other, each with its
    own snapshot, so a statement sees what the earlier ones wrote and, after a row lock, what was
    committed before the lock was granted. After the first failing statement the rest are not
    run; the failure surfaces as PipelineFailed (a Django DatabaseError) naming its position."""
    db = preparing_connection()
    raw = db.connection
    cursors = []
    try:
        with db.wrap_database_errors:
            with raw.pipeline() if len(statements) > 1 else nullcontext():
                for sql, params in statements:
                    cursor = psycopg.Cursor(raw)
                    cursors.append(cursor)
                    if params is None:
                        cursor.execute(sql, prepare=False)
                    else:
                        cursor.execute(sql, params, prepare=True)
            return [(result_columns(sql, c), c.fetchall()) if c.pgresult.nfields else ([], [])
                    for (sql, _), c in zip(statements, cursors, strict=True)]
    except DatabaseError as exc:
        # The failing statement is the first without a result (the ones after it never ran).
        failed = next((i for i, c in enumerate(cursors) if c.pgresult is None), len(cursors) - 1)
        raise PipelineFailed(failed, exc) from exc.__cause__
    finally:
        for cursor in cursors:
            cursor.close()


def set_lock_timeout(milliseconds: int) -> None:
    """SET LOCAL lock_timeout: a waiting lock raises 55P03 instead of hanging forever."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.SET_LOCAL_LOCK_TIMEOUT, {"lock_timeout": f"{int(milliseconds)}ms"})
