"""The rows a new tidy workflow writes: the workflow, its steps and the locks on its spaces
(recovery/engine/creation.py decides and checks; docs/architecture.md §8)."""

from dataclasses import dataclass

from django.db import connection

from recovery.engine import wms_sql


def insert_workflow(*, origin: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.INSERT_WORKFLOW, {"origin": origin})
        return cursor.fetchone()[0]


def insert_step(*, workflow_id: int, step_no: int, tray_code: str, cargo_space_id: str,
                target_cargo_space_id: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.INSERT_STEP, {
            "workflow_id": workflow_id, "step_no": step_no, "tray_code": tray_code,
            "cargo_space_id": cargo_space_id, "target_cargo_space_id": target_cargo_space_id,
        })
        return cursor.fetchone()[0]


@dataclass(frozen=True)
class SpaceHolder:
    cargo_space_id: str
    workflow_id: int | None  # None: held a moment ago, released since


def lock_spaces(*, workflow_id: int, spaces: list[str]) -> list[SpaceHolder]:
    """Lock every space for `workflow_id` (sorted order); return the spaces another workflow
    holds, with their holder. The caller rolls back when the list is not empty."""
    wanted = sorted(set(spaces))
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.LOCK_SPACES, {"workflow_id": workflow_id, "spaces": wanted})
        got = {row[0] for row in cursor.fetchall()}
        missing = [s for s in wanted if s not in got]
        if not missing:
            return []
        cursor.execute(wms_sql.SPACE_LOCK_HOLDERS, {"workflow_id": workflow_id, "spaces": missing})
        holders = dict(cursor.fetchall())
    return [SpaceHolder(space, holders.get(space)) for space in missing]
