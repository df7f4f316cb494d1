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

# Positional parameters (for RawSQL inside the paused list's filter): the search text three
# times. Workflows with an unfinished step whose tray, source or target is exactly the text.
WORKFLOWS_WITH_OPEN_STEP_MATCHING = f"""
SELECT workflow_id
FROM alg.tidy_step
WHERE {OPEN_STEP}
  AND (tray_code = %s                 -- tidy_step_open_tray_idx
       OR cargo_space_id = %s         -- tidy_step_open_source_idx
       OR target_cargo_space_id = %s) -- tidy_step_open_target_idx
"""

