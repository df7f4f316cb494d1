"""Whole-table snapshots of the WMS tables, for 'exactly this changed, nothing else' asserts."""

from django.db import connection

from recovery.engine.wms_sql import WMS_TABLES

# Columns that change on every write and are asserted separately where they matter.
VOLATILE = {"updated_at", "completed_at", "received_at", "locked_at", "created_at", "finished_at"}

KEYS = {
    "alg.tidy_workflow": "workflow_id", "alg.tidy_step": "step_id", "alg.tidy_space_lock": "lock_id",
    "alg.tidy_callback_event": "event_id", "mydo_job": "job_id", "mydo_job_finish": "finish_id",
    "bas_stock": "stock_id", "bas_cargo_space": "cargo_space_id",
}

# Every row of one WMS table in key order; table and key come from KEYS only, never from input.
TABLE_ROWS = "SELECT * FROM {table} ORDER BY {key}"


def table_rows(table: str) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(TABLE_ROWS.format(table=table, key=KEYS[table]))
        cols = [c.name for c in cursor.description]
        rows = {}
        for values in cursor.fetchall():
            row = {c: v for c, v in zip(cols, values, strict=True) if c not in VOLATILE}
            rows[row[KEYS[table]]] = row
        return rows


def snapshot() -> dict:
    return {table: table_rows(table) for table in WMS_TABLES}


def diff(before: dict, after: dict) -> dict:
    """{table: {"added": {...}, "removed": {...}, "changed": {key: {col: (old, new)}}}} for tables that differ."""
    out = {}
    for table in WMS_TABLES:
        b, a = before[table], after[table]
        added = {k: a[k] for k in a.keys() - b.keys()}
        removed = {k: b[k] for k in b.keys() - a.keys()}
        changed = {}
        for k in a.keys() & b.keys():
            cols = {c: (b[k][c], a[k][c]) for c in a[k] if a[k][c] != b[k][c]}
            if cols:
                changed[k] = cols
        if added or removed or changed:
            out[table] = {"added": added, "removed": removed, "changed": changed}
    return out
