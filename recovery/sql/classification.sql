-- name: tidy_recovery_classification
-- What decide() reads of every ACTIVE workflow's evidence, and only that, oldest first: the
-- recovery cycle's classification (recovery.engine.wms_sql puts the shard's condition in place of
-- /* shard */, or nothing for the whole active set). Each column has the value evidence.sql gives
-- the field of the same name; the fields decide() never reads (origin, the lock and step
-- counts, the stock locations, whether the spaces exist) are not read here at all, and a
-- workflow needing a decision is re-read in full under its row lock before anything changes
-- (docs/architecture.md §4). evidence.sql answers one workflow (or a few) with one nested loop of
-- index probes per workflow; over the whole active set the per-workflow parts become joins the
-- planner can run over the set, and what only a few workflows need is computed only for them:
--   - the first incomplete step is DISTINCT ON (workflow_id) in (workflow_id, step_no) order;
--   - the finish archive is probed for its newest row, and its rows counted only when it has one
--     (no window over every workflow);
--   - active TDY- jobs are counted only when every step is COMPLETED (the one rule needing them).
-- tests/recovery/test_evidence_classification.py holds these columns to the full evidence, and decide()
-- to the same decision, for every decision case.
WITH active AS NOT MATERIALIZED (
    SELECT aw.workflow_id, aw.status
    FROM alg.tidy_workflow AS aw
    WHERE aw.status = 'ACTIVE'                           -- tidy_workflow_active_idx
      /* shard */
)
SELECT
    w.workflow_id,
    w.status                         AS workflow_status,
    CASE WHEN s.step_id IS NULL THEN (
        SELECT count(*)
        FROM public.mydo_job AS j
        WHERE j.job_id ~>=~ ('TDY-' || w.workflow_id || '-')   -- mydo_job_job_id_pattern_idx
          AND j.job_id ~<~ ('TDY-' || w.workflow_id || '.')
    ) ELSE 0 END                     AS active_tidy_job_count,
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
    CASE WHEN fj.job_id IS NULL THEN 0 ELSE (
        SELECT count(*)
        FROM public.mydo_job_finish AS f2
        WHERE f2.job_id = fj.job_id                      -- mydo_job_finish_job_id_idx
    ) END                            AS finish_count,
    coalesce(st.stock_rows, 0)       AS stock_rows,
    coalesce(st.stock_at_source, 0)  AS stock_at_source,
    coalesce(st.stock_at_target, 0)  AS stock_at_target,
    src.tray_code                    AS source_tray_code,
    tgt.tray_code                    AS target_tray_code,
    coalesce(wr.m, false)            AS finish_report_mismatch
FROM active AS w
LEFT JOIN (
    SELECT DISTINCT ON (so.workflow_id) so.*
    FROM alg.tidy_step AS so
    JOIN active AS a ON a.workflow_id = so.workflow_id
    WHERE so.status IS DISTINCT FROM 'COMPLETED'
    ORDER BY so.workflow_id, so.step_no                  -- tidy_step_workflow_step_no_key
) AS s ON s.workflow_id = w.workflow_id
LEFT JOIN public.mydo_job AS aj
    ON aj.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id
LEFT JOIN LATERAL (
    SELECT f.*
    FROM public.mydo_job_finish AS f
    WHERE f.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id   -- mydo_job_finish_job_id_idx
    ORDER BY f.finished_at DESC, f.finish_id DESC
    LIMIT 1
) AS fj ON true
LEFT JOIN LATERAL (
    SELECT count(*)                                                      AS stock_rows,
           count(*) FILTER (WHERE b.cargo_space_id = s.cargo_space_id)        AS stock_at_source,
           count(*) FILTER (WHERE b.cargo_space_id = s.target_cargo_space_id) AS stock_at_target
    FROM public.bas_stock AS b
    WHERE b.tray_code = s.tray_code                      -- bas_stock_tray_code_idx
) AS st ON s.step_id IS NOT NULL
LEFT JOIN public.bas_cargo_space AS src ON src.cargo_space_id = s.cargo_space_id
LEFT JOIN LATERAL (
    -- The latest finish report the WCS sent for the active job (the console's receipts; for a
    -- job-finish, 200 and 409 are the answers about the job itself), unless an operator answered
    -- the step on the floor since (an operator stage in tidy_callback_event, by its unique key):
    -- whether it named another tray or place than the step's (REPORT_MISMATCH).
    SELECT r.outcome = 'REPORT_MISMATCH' AS m
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
ORDER BY w.workflow_id
