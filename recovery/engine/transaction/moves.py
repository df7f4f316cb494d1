"""The WCS's move in the WMS: alg.usp_complete_move_job in a savepoint, and a job's status moving
forward (docs/architecture.md §6, §8). Only the callback path calls the procedure; recovery never
does. The caller holds the workflow row lock inside transaction.atomic."""

from django.db import DatabaseError

from recovery.engine import wms_sql
from recovery.engine.transaction.statements import PipelineFailed, expect_rows, run_pipelined
from recovery.errors import Refused

# The savepoint that lets a refused move roll back alone (the callback then answers 409 and
# records its receipt in the same transaction).
MOVE_SAVEPOINT = "SAVEPOINT tidy_move"
MOVE_RELEASE = "RELEASE SAVEPOINT tidy_move"
MOVE_ROLLBACK = "ROLLBACK TO SAVEPOINT tidy_move"


class MoveRefused(Refused):
    """alg.usp_complete_move_job refused: unknown job or evidence not in the pre-move state."""


# SQLSTATEs the procedure raises on purpose (docs/architecture.md §3): no_data_found, check_violation.
_MOVE_REFUSAL_STATES = {"P0002", "23514"}


def raise_if_move_refused(exc: DatabaseError) -> None:
    """After alg.usp_complete_move_job failed in its savepoint: on its deliberate refusal roll back
    to the savepoint (nothing changed, the transaction goes on) and raise MoveRefused with the
    procedure's message; any other error is left to roll the whole transaction back."""
    cause = exc.__cause__
    if getattr(cause, "sqlstate", None) not in _MOVE_REFUSAL_STATES:
        return
    run_pipelined([(MOVE_ROLLBACK, None)])
    diag = getattr(cause, "diag", None)
    raise MoveRefused(getattr(diag, "message_primary", None) or str(exc)) from exc


def complete_move_job(job_id: str) -> None:
    """Run alg.usp_complete_move_job in a savepoint, in one round trip; on its deliberate refusal
    roll back to the savepoint (nothing changed) and raise MoveRefused with the procedure's message."""
    try:
        run_pipelined([(MOVE_SAVEPOINT, None), (wms_sql.COMPLETE_MOVE_JOB, {"job_id": job_id}), (MOVE_RELEASE, None)])
    except PipelineFailed as exc:
        if exc.index == 1:
            raise_if_move_refused(exc)
        raise


def set_job_status(*, job_id: str, status: int, expected_status: int) -> None:
    """Move an active job's status forward, conditional on the status read under the lock."""
    expect_rows(wms_sql.SET_JOB_STATUS, {"job_id": job_id, "status": status, "expected_status": expected_status},
                "set job status")
