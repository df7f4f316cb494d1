"""Every SQL statement that reads recovery evidence or mutates the WMS tables, by name.

Long queries live in `recovery/sql/*.sql`; the short mutations are here, one clause per line,
with `%(name)s` parameters (never formatted values). Each mutation is conditional on the state
its caller read, so a stale writer changes nothing (design §5); callers check the row count.
"""

from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent / "sql"


@cache
def sql_file(name: str) -> str:
    return (SQL_DIR / name).read_text(encoding="utf-8")


def evidence_for_active_workflows() -> str:
    return sql_file("evidence.sql") + "WHERE w.status = 'ACTIVE'\nORDER BY w.workflow_id\n"


def evidence_for_workflows() -> str:
    """Parameter: %(workflow_ids)s, a list of workflow ids."""
    return sql_file("evidence.sql") + "WHERE w.workflow_id = ANY (%(workflow_ids)s::bigint[])\nORDER BY w.workflow_id\n"


# --- the workflow row lock (design §5): always taken first -----------------------------------

LOCK_WORKFLOW_SKIP_LOCKED = """
SELECT workflow_id, status
FROM alg.tidy_workflow
WHERE workflow_id = %(workflow_id)s
FOR UPDATE SKIP LOCKED
"""

LOCK_WORKFLOW_WAIT = """
SELECT workflow_id, status
FROM alg.tidy_workflow
WHERE workflow_id = %(workflow_id)s
FOR UPDATE
"""

# --- advancement (callback and RECOVERY_FINISHED share it) ----------------------------------

INSERT_CALLBACK_EVENT = """
INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage, payload)
VALUES (%(workflow_id)s, %(step_id)s, %(job_id)s, %(stage)s, %(payload)s::jsonb)
ON CONFLICT (workflow_id, step_id, job_id, stage) DO NOTHING
RETURNING event_id
"""

COMPLETE_STEP = """
UPDATE alg.tidy_step
SET status = 'COMPLETED',
    completed_at = now(),
    pause_reason = NULL
WHERE step_id = %(step_id)s
  AND workflow_id = %(workflow_id)s
  AND status = %(expected_status)s
"""

NEXT_INCOMPLETE_STEP = """
SELECT step_id, step_no, status, tray_code, cargo_space_id, target_cargo_space_id
FROM alg.tidy_step
WHERE workflow_id = %(workflow_id)s
  AND status IS DISTINCT FROM 'COMPLETED'
ORDER BY step_no
LIMIT 1
"""

# The deterministic id makes job creation idempotent: ON CONFLICT covers an active job, the
# NOT EXISTS an archived one, so a step never gets a second move job.
CREATE_STEP_JOB = """
INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT %(job_id)s, 28, 1, %(tray_code)s, %(cargo_space_id)s, %(target_cargo_space_id)s
WHERE NOT EXISTS (SELECT 1 FROM mydo_job_finish WHERE job_id = %(job_id)s)
ON CONFLICT (job_id) DO NOTHING
"""

DISPATCH_STEP = """
UPDATE alg.tidy_step
SET status = 'DISPATCHED'
WHERE step_id = %(step_id)s
  AND status = 'PENDING'
"""

TOUCH_WORKFLOW = """
UPDATE alg.tidy_workflow
SET updated_at = now()
WHERE workflow_id = %(workflow_id)s
  AND status = %(expected_status)s
"""

COMPLETE_WORKFLOW = """
UPDATE alg.tidy_workflow
SET status = 'COMPLETED',
    completed_at = now(),
    updated_at = now(),
    pause_reason = NULL
WHERE workflow_id = %(workflow_id)s
  AND status = %(expected_status)s
"""

RELEASE_LOCKS = """
DELETE FROM alg.tidy_space_lock
WHERE workflow_id = %(workflow_id)s
"""

# --- pause (locks are kept) ------------------------------------------------------------------

PAUSE_WORKFLOW = """
UPDATE alg.tidy_workflow
SET status = 'PAUSED_RECOVERY',
    pause_reason = %(reason)s,
    updated_at = now()
WHERE workflow_id = %(workflow_id)s
  AND status = %(expected_status)s
"""

PAUSE_STEP = """
UPDATE alg.tidy_step
SET status = 'PAUSED_RECOVERY',
    pause_reason = %(reason)s
WHERE step_id = %(step_id)s
  AND workflow_id = %(workflow_id)s
  AND status IS NOT DISTINCT FROM %(expected_status)s
"""

COUNT_PAUSED_WORKFLOWS = """
SELECT count(*) FROM alg.tidy_workflow WHERE status = 'PAUSED_RECOVERY'
"""
