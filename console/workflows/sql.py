"""Named SQL of the workflow page (console.workflows.selectors): the workflow and its journal, its
history, and the unfinished steps its retained locks block."""

from console.readers.sql import OPEN_STEP


def _open_steps_using(spaces: str) -> str:
    """Unfinished steps of ACTIVE or paused workflows that use one of `spaces` (an SQL text[]
    expression) as source or target: what a retained lock blocks."""
    return f"""
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
  AND (s.cargo_space_id = ANY ({spaces})          -- tidy_step_open_source_idx
       OR s.target_cargo_space_id = ANY ({spaces}))  -- tidy_step_open_target_idx
"""


# Parameter: %(spaces)s, a list of cargo space ids.
OPEN_STEPS_USING_SPACES = _open_steps_using("%(spaces)s::text[]") + "ORDER BY s.workflow_id, s.step_no\n"


# --- the workflow page ----------------------------------------------------------------------
# Parameter: %(workflow_id)s. The workflow row and its newest 50 journaled decisions (newest
# first: by the journal's own sequence, its ids, never by clocks alone), each as JSON
# (console.workflows.selectors.workflow_detail turns them back into model rows): no row when the
# workflow does not exist.
WORKFLOW_AND_JOURNAL = """
SELECT to_jsonb(w) AS workflow,
       (SELECT coalesce(json_agg(d ORDER BY d.id DESC), '[]')
        FROM (SELECT *
              FROM "recovery_recoverydecision"
              WHERE workflow_id = %(workflow_id)s               -- (workflow_id, -decided_at) index
              ORDER BY id DESC
              LIMIT 50) AS d) AS decisions
FROM "alg"."tidy_workflow" AS w
WHERE w.workflow_id = %(workflow_id)s                           -- tidy_workflow_pkey
"""


# Parameter: %(workflow_id)s. Everything the history fragment shows beside the evidence, in one
# statement: the workflow's steps (step_no order), the active and the finished jobs
# TDY-<workflow>-<step> of those steps, its callback events and its newest 100 callback receipts,
# each in the journal's own order (ids: clocks may disagree, the sequence does not; the pages show
# the timestamps beside it), its locks (space order) with the tray each space
# holds, and the unfinished steps those spaces block. Each is a JSON array of rows that
# console.workflows.selectors.WorkflowDetail turns back into model rows. The tables are named quoted, as
# the ORM names them.
WORKFLOW_HISTORY = f"""
WITH steps AS (
    SELECT st.*, 'TDY-' || st.workflow_id || '-' || st.step_id AS job_id
    FROM "alg"."tidy_step" AS st
    WHERE st.workflow_id = %(workflow_id)s                    -- tidy_step_workflow_step_no_key
), locks AS (
    SELECT l.lock_id, l.cargo_space_id, l.locked_at
    FROM "alg"."tidy_space_lock" AS l
    WHERE l.workflow_id = %(workflow_id)s                     -- tidy_space_lock_workflow_idx
)
SELECT
    (SELECT coalesce(json_agg(to_jsonb(s) - 'job_id' ORDER BY s.step_no), '[]') FROM steps AS s) AS steps,
    (SELECT coalesce(json_agg(j), '[]')
     FROM "public"."mydo_job" AS j
     WHERE j.job_id IN (SELECT job_id FROM steps)) AS jobs,             -- mydo_job_pkey
    (SELECT coalesce(json_agg(f ORDER BY f.finish_id), '[]')
     FROM "public"."mydo_job_finish" AS f
     WHERE f.job_id IN (SELECT job_id FROM steps)) AS finishes,         -- mydo_job_finish_job_id_idx
    (SELECT coalesce(json_agg(e ORDER BY e.event_id), '[]')
     FROM "alg"."tidy_callback_event" AS e
     WHERE e.workflow_id = %(workflow_id)s) AS events,                  -- tidy_callback_event_identity_key
    (SELECT coalesce(json_agg(r ORDER BY r.id DESC), '[]')
     FROM (SELECT *
           FROM "recovery_callbackreceipt"
           WHERE workflow_id = %(workflow_id)s                          -- callback_receipt_wf_idx
           ORDER BY id DESC
           LIMIT 100) AS r) AS receipts,
    (SELECT coalesce(json_agg(json_build_object('lock_id', l.lock_id, 'cargo_space_id', l.cargo_space_id,
                                                'locked_at', l.locked_at, 'space_tray_code', c.tray_code)
                              ORDER BY l.cargo_space_id), '[]')
     FROM locks AS l
     LEFT JOIN public.bas_cargo_space AS c
       ON c.cargo_space_id = l.cargo_space_id) AS locks,                -- bas_cargo_space_pkey
    (SELECT coalesce(json_agg(b ORDER BY b.workflow_id, b.step_no), '[]')
     FROM ({_open_steps_using("ARRAY(SELECT cargo_space_id FROM locks)")}) AS b) AS blockers
"""
