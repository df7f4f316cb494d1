"""Named SQL of the floor pages (console.floor.selectors): the active list and the search."""

from console.readers.sql import CURRENT_STEP_AND_JOB

# The active list: one page of every ACTIVE workflow with its current step, job and the last
# callback heard, ordered by how long it has gone unchanged (`since`: the job's updated_at, or
# the workflow's when it has no job), the paused list's keyset cursor over (since, workflow_id).
# The outer WHERE is assembled by console.floor from the fixed fragments below.
ACTIVE_PAGE = f"""
SELECT a.*
FROM (
    SELECT w.workflow_id,
           w.origin,
           w.created_at,
           w.updated_at,
           s.step_id,
           s.step_no,
           s.status AS step_status,
           s.tray_code,
           s.cargo_space_id,
           s.target_cargo_space_id,
           j.job_id,
           j.status AS job_status,
           j.created_at AS job_created_at,
           j.updated_at AS job_updated_at,
           coalesce(j.updated_at, w.updated_at) AS since,
           (j.status IN (1, 2, 3) AND j.updated_at <= %(stalled_before)s) IS TRUE AS stalled,
           greatest(
               (SELECT max(r.received_at)
                FROM recovery_callbackreceipt AS r
                WHERE r.workflow_id = w.workflow_id),       -- callback_receipt_wf_idx
               (SELECT max(e.received_at)
                FROM alg.tidy_callback_event AS e
                WHERE e.workflow_id = w.workflow_id
                  AND e.step_id = s.step_id)                -- tidy_callback_event_identity_key
           ) AS last_callback_at
    FROM alg.tidy_workflow AS w
    {CURRENT_STEP_AND_JOB}
    WHERE w.status = 'ACTIVE'                               -- tidy_workflow_active_idx
) AS a
WHERE true
{{where}}
ORDER BY a.since {{direction}}, a.workflow_id {{direction}}
LIMIT %(limit)s
"""


ACTIVE_WHERE_STALLED = "AND a.stalled"


ACTIVE_WHERE_ORIGIN = "AND a.origin = %(origin)s"


ACTIVE_WHERE_AFTER_CURSOR = "AND (a.since, a.workflow_id) > (%(cursor_at)s, %(cursor_id)s)"


ACTIVE_WHERE_BEFORE_CURSOR = "AND (a.since, a.workflow_id) < (%(cursor_at)s, %(cursor_id)s)"


# Search in every status: %(q)s is compared exactly with tray codes, source and target spaces of
# any step (finished ones included) and locked spaces; %(q_id)s is the workflow id when q is a
# number; %(job_workflow)s/%(job_step)s the parts of a TDY-<w>-<s> job id. Each branch reads
# one index; `matched` says which ones hit. One page, newest (highest id) first: %(limit)s
# workflows with an id below %(before)s (NULL: the newest); only the page's workflows are then
# read from alg.tidy_workflow and shown, however many a busy space has seen.
SEARCH_WORKFLOWS = """
WITH hits AS (
    SELECT workflow_id, 'workflow id' AS matched
    FROM alg.tidy_workflow
    WHERE workflow_id = %(q_id)s                            -- tidy_workflow_pkey
    UNION ALL
    SELECT workflow_id, 'job id'
    FROM alg.tidy_step
    WHERE step_id = %(job_step)s                            -- tidy_step_pkey
      AND workflow_id = %(job_workflow)s
    UNION ALL
    SELECT workflow_id, 'tray'
    FROM alg.tidy_step
    WHERE tray_code = %(q)s                                 -- tidy_step_tray_code_idx
    UNION ALL
    SELECT workflow_id, 'source space'
    FROM alg.tidy_step
    WHERE cargo_space_id = %(q)s                            -- tidy_step_cargo_space_id_idx
    UNION ALL
    SELECT workflow_id, 'target space'
    FROM alg.tidy_step
    WHERE target_cargo_space_id = %(q)s                     -- tidy_step_target_cargo_space_id_idx
    UNION ALL
    SELECT workflow_id, 'locked space'
    FROM alg.tidy_space_lock
    WHERE cargo_space_id = %(q)s                            -- tidy_space_lock_cargo_space_id_key
),
page AS (
    SELECT h.workflow_id,
           array_agg(DISTINCT h.matched ORDER BY h.matched) AS matched
    FROM hits AS h
    WHERE (%(before)s::bigint IS NULL OR h.workflow_id < %(before)s::bigint)
    GROUP BY h.workflow_id
    ORDER BY h.workflow_id DESC
    LIMIT %(limit)s
)
SELECT w.workflow_id,
       w.status,
       w.origin,
       w.pause_reason,
       w.created_at,
       w.updated_at,
       w.completed_at,
       p.matched
FROM page AS p
JOIN alg.tidy_workflow AS w
  ON w.workflow_id = p.workflow_id                          -- tidy_workflow_pkey
ORDER BY w.workflow_id DESC
"""
