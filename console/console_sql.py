"""Named SQL of the console's reads where the ORM cannot state the predicate exactly.

Both statements repeat the predicate of the partial indexes on unfinished steps
(recovery/sql/wms_schema.sql: tidy_step_open_*_idx) word for word, so PostgreSQL can prove
the index applies; the tidy_step table keeps every historical step, the indexes only the open
ones.
"""

OPEN_STEP = "status NOT IN ('COMPLETED', 'CANCELLED')"

# Parameter: %(spaces)s, a list of cargo space ids. Unfinished steps of ACTIVE or paused
# workflows that use one of them as source or target: what a retained lock blocks.
OPEN_STEPS_USING_SPACES = f"""
SELECT s.workflow_id,
       w.status AS workflow_status,
       s.step_id,
       s.step_no,
       s.status,
       s.tray_code,
       s.cargo_space_id,
       s.target_cargo_space_id
FROM alg.tidy_step AS s
JOIN alg.tidy_workflow AS w
  ON w.workflow_id = s.workflow_id
WHERE s.{OPEN_STEP}
  AND w.status IN ('ACTIVE', 'PAUSED_RECOVERY')
  AND (s.cargo_space_id = ANY (%(spaces)s::text[])          -- tidy_step_open_source_idx
       OR s.target_cargo_space_id = ANY (%(spaces)s::text[]))  -- tidy_step_open_target_idx
ORDER BY s.workflow_id, s.step_no
"""

# Parameter: %(q)s. Workflows with an unfinished step whose tray, source or target is exactly q.
WORKFLOWS_WITH_OPEN_STEP_MATCHING = f"""
SELECT workflow_id
FROM alg.tidy_step
WHERE {OPEN_STEP}
  AND (tray_code = %(q)s                 -- tidy_step_open_tray_idx
       OR cargo_space_id = %(q)s         -- tidy_step_open_source_idx
       OR target_cargo_space_id = %(q)s) -- tidy_step_open_target_idx
"""


# --- the paused list -----------------------------------------------------------------------
# One page and the facet counts. The WHERE clause is assembled by console.selectors from the
# fixed fragments below (never from values); every value is a %(name)s parameter.

PAUSED_PAGE = """
SELECT w.workflow_id,
       w.origin,
       w.pause_reason,
       w.updated_at,
       w.created_at,
       (SELECT count(*)
        FROM alg.tidy_space_lock AS l
        WHERE l.workflow_id = w.workflow_id) AS lock_count,       -- tidy_space_lock_workflow_idx
       s.step_no,
       s.tray_code,
       s.cargo_space_id,
       s.target_cargo_space_id
FROM alg.tidy_workflow AS w
LEFT JOIN LATERAL (
    SELECT st.step_no, st.tray_code, st.cargo_space_id, st.target_cargo_space_id
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
      AND st.status IS DISTINCT FROM 'COMPLETED'
    ORDER BY st.step_no
    LIMIT 1
) AS s ON true
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_status_idx (status, updated_at)
{where}
ORDER BY w.updated_at {direction}, w.workflow_id {direction}
LIMIT %(limit)s
"""

# Counts per reason and origin, split by the list's age buckets (console.selectors.AGE_BUCKETS);
# the bounds are timestamps computed by the caller, so rows are compared with constants.
PAUSED_FACETS = """
SELECT w.pause_reason,
       w.origin,
       count(*) FILTER (WHERE w.updated_at > %(h1)s)                             AS "lt1h",
       count(*) FILTER (WHERE w.updated_at <= %(h1)s AND w.updated_at > %(h8)s)  AS "1h-8h",
       count(*) FILTER (WHERE w.updated_at <= %(h8)s AND w.updated_at > %(h24)s) AS "8h-24h",
       count(*) FILTER (WHERE w.updated_at <= %(h24)s)                           AS "gt24h"
FROM alg.tidy_workflow AS w
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_paused_idx (index-only)
{where}
GROUP BY w.pause_reason, w.origin
"""

WHERE_REASON = "AND w.pause_reason = %(reason)s"
WHERE_ORIGIN = "AND w.origin = %(origin)s"
WHERE_PAUSED_BEFORE = "AND w.updated_at <= %(paused_before)s"
WHERE_PAUSED_AFTER = "AND w.updated_at > %(paused_after)s"
WHERE_AFTER_CURSOR = "AND (w.updated_at, w.workflow_id) > (%(cursor_at)s, %(cursor_id)s)"
WHERE_BEFORE_CURSOR = "AND (w.updated_at, w.workflow_id) < (%(cursor_at)s, %(cursor_id)s)"
WHERE_SEARCH = f"""AND (w.workflow_id IN ({WORKFLOWS_WITH_OPEN_STEP_MATCHING})
     OR w.workflow_id IN (SELECT workflow_id FROM alg.tidy_space_lock WHERE cargo_space_id = %(q)s)
     OR w.workflow_id = %(q_id)s)"""


# System check (console/checks.py): is the repair audit migrated, and which of its own enabled
# triggers does it carry.
AUDIT_TABLE_EXISTS = "SELECT to_regclass('console_repairaudit') IS NOT NULL"

AUDIT_TRIGGERS_PRESENT = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = 'console_repairaudit'::regclass
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""


# --- stalled workflows (README: "Notifications") ------------------------------
# Parameter: %(stalled_before)s, now - STALLED_AFTER_MINUTES. An ACTIVE workflow is stalled when
# the job of its current step (the first unfinished one) is still active (status 1-3) and has
# not changed since then. A derived flag, never a workflow status: the decision table leaves
# these workflows alone. The job is found by its deterministic id TDY-<workflow>-<step>.
STALLED_WORKFLOWS = f"""
SELECT w.workflow_id,
       w.origin,
       s.step_id,
       s.step_no,
       s.tray_code,
       s.cargo_space_id,
       s.target_cargo_space_id,
       j.job_id,
       j.status AS job_status,
       j.updated_at AS job_updated_at,
       (SELECT max(e.received_at)
        FROM alg.tidy_callback_event AS e
        WHERE e.workflow_id = w.workflow_id) AS last_callback_at  -- UNIQUE (workflow_id, step_id, job_id, stage)
FROM alg.tidy_workflow AS w
JOIN LATERAL (
    SELECT st.step_id, st.step_no, st.tray_code, st.cargo_space_id, st.target_cargo_space_id
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id                     -- tidy_step_workflow_step_no_key
      AND st.{OPEN_STEP}
    ORDER BY st.step_no
    LIMIT 1
) AS s ON true
JOIN mydo_job AS j
  ON j.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id  -- mydo_job primary key
WHERE w.status = 'ACTIVE'                                    -- tidy_workflow_status_idx (status, updated_at)
  AND j.status IN (1, 2, 3)
  AND j.updated_at < %(stalled_before)s
ORDER BY j.updated_at, w.workflow_id
"""

# The notification evaluator runs alone: a transaction-scoped advisory lock, so two clusters'
# schedules never evaluate at once (the partial unique index is the last line of defence).
# Parameter: %(key)s, the lock key of console.notifications.evaluate.
TRY_EVALUATOR_LOCK = "SELECT pg_try_advisory_xact_lock(%(key)s)"

# The enabled user triggers on the acknowledgement table (the append-only check).
ACKNOWLEDGEMENT_TABLE_EXISTS = "SELECT to_regclass('console_notificationacknowledgement') IS NOT NULL"
ACKNOWLEDGEMENT_TRIGGERS = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = to_regclass('console_notificationacknowledgement')
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""

# One run of a batch re-check at a time (console.repair.batch): a session-level advisory lock
# on (namespace, batch id), held for the whole run and released at its end, or by PostgreSQL
# when the worker's connection dies. A second delivery of the task finds it taken and leaves.
# Parameters: %(namespace)s and %(key)s, both 32-bit (the batch id folded into 31 bits).
TRY_BATCH_RUN_LOCK = "SELECT pg_try_advisory_lock(%(namespace)s, %(key)s)"
RELEASE_BATCH_RUN_LOCK = "SELECT pg_advisory_unlock(%(namespace)s, %(key)s)"
