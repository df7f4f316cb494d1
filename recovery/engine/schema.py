"""Apply the shipped WMS DDL (docs/architecture.md §3), refusing a database whose tables have another shape."""

from dataclasses import dataclass

from django.db import connection, transaction

from recovery.engine import wms_sql
from recovery.engine.wms_sql import sql_file
from recovery.errors import TidyError

# The contract of the WMS tables (docs/architecture.md §3): table -> column -> the family of types that satisfies it.
INTEGER = {"bigint", "integer", "smallint"}
TEXT = {"text", "character varying", "character"}
TIMESTAMP = {"timestamp with time zone", "timestamp without time zone"}
NUMBER = {"numeric", "integer", "bigint", "smallint", "double precision", "real"}
JSON = {"jsonb", "json"}

CONTRACT: dict[str, dict[str, set[str]]] = {
    "alg.tidy_workflow": {"workflow_id": INTEGER, "origin": TEXT, "status": TEXT, "pause_reason": TEXT,
                          "created_at": TIMESTAMP, "updated_at": TIMESTAMP, "completed_at": TIMESTAMP},
    "alg.tidy_step": {"step_id": INTEGER, "workflow_id": INTEGER, "step_no": INTEGER, "tray_code": TEXT,
                      "cargo_space_id": TEXT, "target_cargo_space_id": TEXT, "status": TEXT,
                      "pause_reason": TEXT, "completed_at": TIMESTAMP},
    "alg.tidy_space_lock": {"lock_id": INTEGER, "workflow_id": INTEGER, "cargo_space_id": TEXT,
                            "locked_at": TIMESTAMP},
    "alg.tidy_callback_event": {"event_id": INTEGER, "workflow_id": INTEGER, "step_id": INTEGER,
                                "job_id": TEXT, "stage": TEXT, "received_at": TIMESTAMP, "payload": JSON},
    "mydo_job": {"job_id": TEXT, "in_or_out": INTEGER, "status": INTEGER, "tray_code": TEXT,
                 "cargo_space_id": TEXT, "target_cargo_space_id": TEXT, "created_at": TIMESTAMP,
                 "updated_at": TIMESTAMP},
    "mydo_job_finish": {"job_id": TEXT, "in_or_out": INTEGER, "status": INTEGER, "tray_code": TEXT,
                        "cargo_space_id": TEXT, "target_cargo_space_id": TEXT, "created_at": TIMESTAMP,
                        "updated_at": TIMESTAMP, "finished_at": TIMESTAMP},
    "bas_stock": {"stock_id": INTEGER, "tray_code": TEXT, "cargo_space_id": TEXT, "sku": TEXT, "qty": NUMBER},
    "bas_cargo_space": {"cargo_space_id": TEXT, "tray_code": TEXT},
}
PROCEDURE = "alg.usp_complete_move_job"


@dataclass(frozen=True)
class ShapeDifference:
    table: str
    message: str

    def __str__(self) -> str:
        return f"{self.table}: {self.message}"


def _split(table: str) -> tuple[str, str]:
    schema, _, name = table.rpartition(".")
    return schema or "public", name


def existing_columns(table: str) -> dict[str, str]:
    schema, name = _split(table)
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.TABLE_COLUMNS, {"schema": schema, "name": name})
        return dict(cursor.fetchall())


def shape_differences() -> list[ShapeDifference]:
    """Differences between existing WMS tables and the contract; absent tables are not listed."""
    found = []
    for table, columns in CONTRACT.items():
        have = existing_columns(table)
        if not have:
            continue
        for column, types in columns.items():
            if column not in have:
                found.append(ShapeDifference(table, f"column {column} is missing"))
            elif have[column] not in types:
                found.append(ShapeDifference(
                    table, f"column {column} is {have[column]}, expected one of {', '.join(sorted(types))}"))
    return found


def missing_tables() -> list[str]:
    return [table for table in CONTRACT if not existing_columns(table)]


def procedure_exists() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.PROCEDURE_EXISTS, {"sig": f"{PROCEDURE}(text)"})
        return cursor.fetchone()[0]


class SchemaShapeError(TidyError):
    def __init__(self, differences: list[ShapeDifference]):
        self.differences = differences
        super().__init__("; ".join(str(d) for d in differences))


def apply_wms_schema() -> list[str]:
    """Create what is missing; return the tables that were created. Refuses other shapes."""
    with transaction.atomic():
        differences = shape_differences()
        if differences:
            raise SchemaShapeError(differences)
        before = set(missing_tables())
        with connection.cursor() as cursor:
            cursor.execute(sql_file("wms_schema.sql"))
    return [table for table in CONTRACT if table in before]
