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


# --- health and metrics (console/health.py, console/metrics.py) -----------------------------
# Read at every probe and scrape, so each is served by an index and touches few rows.

# Bounds a scrape that meets a locked table or a slow server (SET LOCAL: this transaction only).
METRICS_STATEMENT_TIMEOUT = """
SET LOCAL statement_timeout = '5s'
"""

LAST_SUCCESS_AGE = """
SELECT extract(epoch FROM now() - finished_at)::float8 AS age_seconds
FROM recovery_recoverycycle
WHERE outcome = 'SUCCEEDED'                                 -- recovery_re_outcome_760dfc_idx
ORDER BY finished_at DESC
LIMIT 1
"""

LAST_CYCLE_DURATION = """
SELECT duration_ms
FROM recovery_recoverycycle
WHERE finished_at IS NOT NULL
ORDER BY started_at DESC                                    -- recovery_cycle_started_idx
LIMIT 1
"""

WORKFLOW_COUNTS = """
SELECT status,
       pause_reason,
       count(*) AS workflows,
       extract(epoch FROM now() - min(updated_at))::float8 AS oldest_age_seconds
FROM alg.tidy_workflow
WHERE status IN ('ACTIVE', 'PAUSED_RECOVERY')               -- tidy_workflow_status_idx
GROUP BY status, pause_reason
"""

RETAINED_LOCKS = """
SELECT count(*)
FROM alg.tidy_space_lock AS l
JOIN alg.tidy_workflow AS w
  ON w.workflow_id = l.workflow_id
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_paused_idx
"""

JOB_BACKLOG = """
SELECT count(*),
       extract(epoch FROM now() - min(created_at))::float8 AS oldest_age_seconds
FROM mydo_job
WHERE in_or_out = 28
"""

# Parameter: %(stalled_after_minutes)s. ACTIVE workflows whose current step (the first one not
# COMPLETED) has its deterministic job active in status 1-3 and unchanged for that long.
STALLED_WORKFLOWS = """
SELECT count(*)
FROM alg.tidy_workflow AS w
JOIN LATERAL (
    SELECT st.step_id
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
      AND st.status IS DISTINCT FROM 'COMPLETED'
    ORDER BY st.step_no
    LIMIT 1
) AS s ON true
JOIN mydo_job AS j
  ON j.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id   -- mydo_job_pkey
WHERE w.status = 'ACTIVE'                                   -- tidy_workflow_active_idx
  AND j.status IN (1, 2, 3)
  AND j.updated_at < now() - make_interval(mins => %(stalled_after_minutes)s)
"""

# Counters: the totals folded by recovery.retention plus the rows newer than its watermark
# (callback_receipt_time_idx / recovery_decision_time_idx), so they survive row deletion.
CALLBACK_COUNTS = """
SELECT endpoint,
       outcome,
       sum(n)::bigint AS total
FROM (
    SELECT label1 AS endpoint, label2 AS outcome, total AS n
    FROM recovery_journaltotal
    WHERE journal = 'callbacks'
    UNION ALL
    SELECT endpoint, outcome, count(*)
    FROM recovery_callbackreceipt
    WHERE received_at >= coalesce((SELECT folded_before
                                   FROM recovery_journalfold
                                   WHERE journal = 'callbacks'), '-infinity')
    GROUP BY endpoint, outcome
) AS counted
GROUP BY endpoint, outcome
"""

# Decisions of the background recovery (source RECOVERY); callbacks and repairs journal theirs
# with another source.
RECOVERY_DECISION_COUNTS = """
SELECT action,
       sum(n)::bigint AS total
FROM (
    SELECT label1 AS action, total AS n
    FROM recovery_journaltotal
    WHERE journal = 'decisions'
      AND label2 = 'RECOVERY'
    UNION ALL
    SELECT action, count(*)
    FROM recovery_recoverydecision
    WHERE source = 'RECOVERY'
      AND decided_at >= coalesce((SELECT folded_before
                                  FROM recovery_journalfold
                                  WHERE journal = 'decisions'), '-infinity')
    GROUP BY action
) AS counted
GROUP BY action
"""
