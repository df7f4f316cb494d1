-- name: tidy_recovery_evidence
-- The recovery projection (WMS-local data only, docs/architecture.md §4) for each workflow: the
-- first incomplete step, its deterministic job TDY-<workflowId>-<stepId> left-joined to both
-- the active and the finish job tables, and the tray's stock and space occupancy.
-- Two filters are appended by recovery.engine.wms_sql: every ACTIVE workflow (the classification,
-- partial index tidy_workflow_active_idx), or the given workflow ids whatever their status
-- (the re-read under the workflow row lock, the console, the repair flow).
SELECT
    w.workflow_id,
    w.status                         AS workflow_status,
    w.origin,
    locks.lock_count,
    steps.step_count,
    steps.completed_step_count,
    tidy_jobs.active_tidy_job_count,
    s.step_id,
    s.step_no,
    s.status                         AS step_status,
    s.tray_code,
    s.cargo_space_id,
    s.target_cargo_space_id,
    aj.job_id                        AS active_job_id,
    aj.in_or_out                     AS active_in_or_out,
    aj.status                        AS active_status,
    aj.tray_code                     AS active_tray_code,
    aj.cargo_space_id                AS active_cargo_space_id,
    aj.target_cargo_space_id         AS active_target_cargo_space_id,
    fj.job_id                        AS finish_job_id,
    fj.in_or_out                     AS finish_in_or_out,
    fj.status                        AS finish_status,
    fj.tray_code                     AS finish_tray_code,
    fj.cargo_space_id                AS finish_cargo_space_id,
    fj.target_cargo_space_id         AS finish_target_cargo_space_id,
    coalesce(fj.finish_count, 0)     AS finish_count,
    coalesce(st.stock_rows, 0)       AS stock_rows,
    coalesce(st.stock_at_source, 0)  AS stock_at_source,
    coalesce(st.stock_at_target, 0)  AS stock_at_target,
    coalesce(st.stock_locations, '{}') AS stock_locations,
    src.cargo_space_id IS NOT NULL   AS source_exists,
    src.tray_code                    AS source_tray_code,
    tgt.cargo_space_id IS NOT NULL   AS target_exists,
    tgt.tray_code                    AS target_tray_code,
    coalesce(wr.m, false)            AS finish_report_mismatch,
    nullif(wr.t, '')                 AS finish_report_tray_code,
    nullif(wr.l, '')                 AS finish_report_location
FROM alg.tidy_workflow AS w
CROSS JOIN LATERAL (
    SELECT count(*) AS lock_count
    FROM alg.tidy_space_lock AS l
    WHERE l.workflow_id = w.workflow_id                  -- tidy_space_lock_workflow_idx
) AS locks
CROSS JOIN LATERAL (
    SELECT count(*)                                        AS step_count,
           count(*) FILTER (WHERE st.status = 'COMPLETED') AS completed_step_count
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id                 -- tidy_step_workflow_step_no_key
) AS steps
LEFT JOIN LATERAL (
    SELECT st.*
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id
      AND st.status IS DISTINCT FROM 'COMPLETED'
    ORDER BY st.step_no
    LIMIT 1
) AS s ON true
CROSS JOIN LATERAL (
    -- Active jobs TDY-<workflowId>-*, counted only when every step is COMPLETED (the one rule
    -- that needs them; the outer-only condition becomes a one-time filter, so the scan is
    -- skipped for every other workflow). A byte-wise prefix range on the text_pattern_ops
    -- index mydo_job_job_id_pattern_idx.
    SELECT count(*) AS active_tidy_job_count
    FROM public.mydo_job AS j
    WHERE s.step_id IS NULL
      AND j.job_id ~>=~ ('TDY-' || w.workflow_id || '-')
      AND j.job_id ~<~ ('TDY-' || w.workflow_id || '.')
) AS tidy_jobs
LEFT JOIN public.mydo_job AS aj
    ON aj.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id
LEFT JOIN LATERAL (
    SELECT f.*, count(*) OVER () AS finish_count
    FROM public.mydo_job_finish AS f
    WHERE f.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id   -- mydo_job_finish_job_id_idx
    ORDER BY f.finished_at DESC, f.finish_id DESC
    LIMIT 1
) AS fj ON true
LEFT JOIN LATERAL (
    SELECT count(*)                                                      AS stock_rows,
           count(*) FILTER (WHERE b.cargo_space_id = s.cargo_space_id)        AS stock_at_source,
           count(*) FILTER (WHERE b.cargo_space_id = s.target_cargo_space_id) AS stock_at_target,
           array_agg(DISTINCT coalesce(b.cargo_space_id, '(none)') ORDER BY coalesce(b.cargo_space_id, '(none)'))
               AS stock_locations
    FROM public.bas_stock AS b
    WHERE b.tray_code = s.tray_code                      -- bas_stock_tray_code_idx
) AS st ON s.step_id IS NOT NULL
LEFT JOIN public.bas_cargo_space AS src ON src.cargo_space_id = s.cargo_space_id
LEFT JOIN LATERAL (
    -- The latest finish report the WCS sent for the active job (the console's receipts; for a
    -- job-finish, 200 and 409 are the answers about the job itself), unless an operator answered
    -- the step on the floor since (an operator stage in tidy_callback_event, by its unique key):
    -- whether it named another tray or place than the step's (REPORT_MISMATCH), and what it named.
    SELECT r.outcome = 'REPORT_MISMATCH' AS m, r.tray_code AS t, r.location AS l
    FROM recovery_callbackreceipt r
    WHERE r.job_id = aj.job_id                           -- callback_receipt_job_idx
      AND r.endpoint = 'job-finish'
      AND r.http_status IN (200, 409)
      AND r.received_at > ALL (SELECT e.received_at
                               FROM alg.tidy_callback_event e
                               WHERE e.workflow_id = w.workflow_id
                                 AND e.job_id = aj.job_id)
    ORDER BY r.id DESC
    LIMIT 1
) AS wr ON aj.job_id IS NOT NULL
LEFT JOIN public.bas_cargo_space AS tgt ON tgt.cargo_space_id = s.target_cargo_space_id
-- The WHERE clause is appended by recovery.engine.wms_sql (all active, or the given workflow ids).
