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

# Parameter: %(tables)s, the append-only audit tables. For each one that exists: could the
# connected role alter it? Owning it (or being able to act as its owner) allows ALTER TABLE ...
# DISABLE TRIGGER; UPDATE, DELETE and TRUNCATE grants, a superuser, or membership of the test
# role tidy_audit_test (whose TRUNCATE switch the trigger honours) are the other ways.
AUDIT_TABLE_ALTERABLE = """
SELECT c.relname AS table_name,
       current_user AS role_name,
       r.rolsuper AS superuser,
       pg_has_role(current_user, c.relowner, 'MEMBER') AS owner,
       has_table_privilege(c.oid, 'UPDATE') AS can_update,
       has_table_privilege(c.oid, 'DELETE') AS can_delete,
       has_table_privilege(c.oid, 'TRUNCATE') AS can_truncate,
       has_table_privilege(c.oid, 'TRIGGER') AS can_trigger,
       CASE WHEN to_regrole('tidy_audit_test') IS NULL THEN false
            ELSE pg_has_role(current_user, 'tidy_audit_test', 'MEMBER')
       END AS audit_test_role
FROM pg_class AS c
JOIN pg_roles AS r
  ON r.rolname = current_user
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(%(tables)s::text[]) AS t)
ORDER BY c.relname
"""

ROLE_AUDIT_TABLE_EXISTS = "SELECT to_regclass('console_rolechangeaudit') IS NOT NULL"

# The append-only triggers of the role-change audit (migration console 0003), enabled.
ROLE_AUDIT_TRIGGERS_PRESENT = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = 'console_rolechangeaudit'::regclass
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""

# The role names deploy/sql/roles.sql reads (session settings, so the file itself has no
# parameters and runs with psql as well).
SET_ROLE_NAMES = """
SELECT set_config('tidy.owner_role', %(owner)s, false),
       set_config('tidy.runtime_role', %(runtime)s, false)
"""
