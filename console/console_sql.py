"""Named SQL of the console's reads where the ORM cannot state the predicate exactly.

Both statements repeat the predicate of the partial indexes on unfinished steps
(recovery/sql/wms_schema.sql: tidy_step_open_*_idx) word for word, so PostgreSQL can prove
the index applies; the tidy_step table keeps every historical step, the indexes only the open
ones.
"""

from recovery import retention_sql

OPEN_STEP = "status NOT IN ('COMPLETED', 'CANCELLED')"



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
# One page and the facet counts. The WHERE clause is assembled by console.workflows.selectors from the
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

# Counts per reason and origin, with how many paused after each age-bucket bound
# (console.readers.paused.AGE_BUCKETS); the caller takes the buckets as differences, so each row is
# compared once per bound: this runs over every paused workflow on every refresh. The bounds are
# timestamps computed by the caller, so rows are compared with constants.
PAUSED_FACETS = """
SELECT w.pause_reason,
       w.origin,
       count(*)                                       AS n,
       count(*) FILTER (WHERE w.updated_at > %(h1)s)  AS after_h1,
       count(*) FILTER (WHERE w.updated_at > %(h8)s)  AS after_h8,
       count(*) FILTER (WHERE w.updated_at > %(h24)s) AS after_h24
FROM alg.tidy_workflow AS w
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_paused_idx (index-only)
{where}
GROUP BY w.pause_reason, w.origin
"""

WHERE_REASON = "AND w.pause_reason = %(reason)s"
# An aisle: the current step's source is one of %(aisle_spaces)s, the paused sources whose code
# SPACE_CODE_PATTERN puts in that aisle (console.readers.paused.aisle_spaces computes them).
WHERE_AISLE = """AND (SELECT st.cargo_space_id
          FROM alg.tidy_step AS st
          WHERE st.workflow_id = w.workflow_id              -- tidy_step_workflow_step_no_key
            AND st.status IS DISTINCT FROM 'COMPLETED'
          ORDER BY st.step_no
          LIMIT 1) = ANY(%(aisle_spaces)s::text[])"""
# The distinct current-step sources of the paused workflows (what an aisle filter chooses from).
PAUSED_SOURCES = """
SELECT DISTINCT (SELECT st.cargo_space_id
                 FROM alg.tidy_step AS st
                 WHERE st.workflow_id = w.workflow_id       -- tidy_step_workflow_step_no_key
                   AND st.status IS DISTINCT FROM 'COMPLETED'
                 ORDER BY st.step_no
                 LIMIT 1) AS source
FROM alg.tidy_workflow AS w
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_status_idx (status, updated_at)
"""
WHERE_ORIGIN = "AND w.origin = %(origin)s"
WHERE_PAUSED_BEFORE = "AND w.updated_at <= %(paused_before)s"
WHERE_PAUSED_AFTER = "AND w.updated_at > %(paused_after)s"
WHERE_AFTER_CURSOR = "AND (w.updated_at, w.workflow_id) > (%(cursor_at)s, %(cursor_id)s)"
WHERE_BEFORE_CURSOR = "AND (w.updated_at, w.workflow_id) < (%(cursor_at)s, %(cursor_id)s)"
WHERE_SEARCH = f"""AND (w.workflow_id IN ({WORKFLOWS_WITH_OPEN_STEP_MATCHING})
     OR w.workflow_id IN (SELECT workflow_id FROM alg.tidy_space_lock WHERE cargo_space_id = %(q)s)
     OR w.workflow_id = %(q_id)s)"""


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
     FROM "mydo_job" AS j
     WHERE j.job_id IN (SELECT job_id FROM steps)) AS jobs,             -- mydo_job_pkey
    (SELECT coalesce(json_agg(f ORDER BY f.finish_id), '[]')
     FROM "mydo_job_finish" AS f
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
     LEFT JOIN bas_cargo_space AS c
       ON c.cargo_space_id = l.cargo_space_id) AS locks,                -- bas_cargo_space_pkey
    (SELECT coalesce(json_agg(b ORDER BY b.workflow_id, b.step_no), '[]')
     FROM ({_open_steps_using("ARRAY(SELECT cargo_space_id FROM locks)")}) AS b) AS blockers
"""


# --- recovery health ------------------------------------------------------------------------
# Every live page asks: the newest successful cycle (index (outcome, -finished_at)) and the
# newest cycle of any outcome (recovery_cycle_started_idx), one row each, in one statement
# (console.readers.recovery.recovery_health reads them as RecoveryCycle rows, `kind` telling which).
RECOVERY_HEALTH_CYCLES = """
(SELECT c.*, 'success' AS kind
 FROM recovery_recoverycycle AS c
 WHERE c.outcome = 'SUCCEEDED'
 ORDER BY c.finished_at DESC
 LIMIT 1)
UNION ALL
(SELECT c.*, 'latest' AS kind
 FROM recovery_recoverycycle AS c
 ORDER BY c.started_at DESC
 LIMIT 1)
"""


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


# The notification evaluator runs alone: a transaction-scoped advisory lock, so two clusters'
# schedules never evaluate at once (the partial unique index is the last line of defence).
# Parameter: %(key)s, the lock key of console.notifications.evaluate.
TRY_EVALUATOR_LOCK = "SELECT pg_try_advisory_xact_lock(%(key)s)"

# Every paused workflow with its reason, when it paused and the source of its current step (the
# first one not completed, as the paused list shows it): the aisle its notifications group under.
NOTIFY_PAUSED_WORKFLOWS = """
SELECT w.workflow_id,
       w.pause_reason,
       w.updated_at,
       (SELECT st.cargo_space_id
        FROM alg.tidy_step AS st
        WHERE st.workflow_id = w.workflow_id                -- tidy_step_workflow_step_no_key
          AND st.status IS DISTINCT FROM 'COMPLETED'
        ORDER BY st.step_no
        LIMIT 1) AS source
FROM alg.tidy_workflow AS w
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_status_idx (status, updated_at)
ORDER BY w.workflow_id
"""

# The enabled user triggers on the silence tables (their append-only checks).
SILENCE_TABLE_EXISTS = "SELECT to_regclass('console_silence') IS NOT NULL"
SILENCE_TRIGGERS = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = to_regclass('console_silence')
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""
SILENCE_ENDING_TABLE_EXISTS = "SELECT to_regclass('console_silenceending') IS NOT NULL"
SILENCE_ENDING_TRIGGERS = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = to_regclass('console_silenceending')
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""

# The enabled user triggers on the acknowledgement table (the append-only check).
ACKNOWLEDGEMENT_TABLE_EXISTS = "SELECT to_regclass('console_notificationacknowledgement') IS NOT NULL"
ACKNOWLEDGEMENT_TRIGGERS = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = to_regclass('console_notificationacknowledgement')
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""



# --- floor operations: stalled and active workflows, search --------------------------------
# A workflow's current step is its first unfinished one (lowest step_no); its job is
# TDY-<workflow>-<step> in mydo_job. Stalled: the workflow is ACTIVE and that job, at status
# 1, 2 or 3, has not changed (mydo_job.updated_at) since %(stalled_before)s (now minus
# STALLED_AFTER_MINUTES). A derived flag, never stored (README, "Active and stalled workflows").

CURRENT_STEP_AND_JOB = f"""
LEFT JOIN LATERAL (
    SELECT st.step_id, st.step_no, st.status, st.tray_code, st.cargo_space_id, st.target_cargo_space_id
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
      AND st.{OPEN_STEP}
    ORDER BY st.step_no
    LIMIT 1
) AS s ON true
LEFT JOIN mydo_job AS j
  ON j.job_id = 'TDY-' || w.workflow_id || '-' || s.step_id  -- mydo_job_pkey
"""

# Parameter: %(stalled_before)s. Every stalled workflow, longest unchanged first.
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
        WHERE e.workflow_id = w.workflow_id) AS last_callback_at  -- tidy_callback_event_identity_key
FROM alg.tidy_workflow AS w
{CURRENT_STEP_AND_JOB}
WHERE w.status = 'ACTIVE'                                   -- tidy_workflow_active_idx
  AND j.status IN (1, 2, 3)
  AND j.updated_at <= %(stalled_before)s
ORDER BY j.updated_at, w.workflow_id
"""

# Parameter: %(stalled_before)s. How many ACTIVE workflows there are, and how many are stalled.
ACTIVE_COUNTS = f"""
SELECT count(*) AS active,
       count(*) FILTER (WHERE j.status IN (1, 2, 3)
                          AND j.updated_at <= %(stalled_before)s) AS stalled
FROM alg.tidy_workflow AS w
{CURRENT_STEP_AND_JOB}
WHERE w.status = 'ACTIVE'                                   -- tidy_workflow_active_idx
"""

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
# one index; `matched` says which ones hit.
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
)
SELECT w.workflow_id,
       w.status,
       w.origin,
       w.pause_reason,
       w.created_at,
       w.updated_at,
       w.completed_at,
       array_agg(DISTINCT h.matched ORDER BY h.matched) AS matched
FROM hits AS h
JOIN alg.tidy_workflow AS w
  ON w.workflow_id = h.workflow_id
GROUP BY w.workflow_id
ORDER BY w.workflow_id DESC
LIMIT %(limit)s
"""

# System check (console/floor_checks.py): the workflow notes' own enabled triggers.
NOTE_TABLE_EXISTS = "SELECT to_regclass('console_workflownote') IS NOT NULL"
NOTE_TRIGGERS_PRESENT = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = 'console_workflownote'::regclass
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""


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


# --- rack map (/map/ and the workflow page's small map) -----------------------------------
# Named SQL of the rack map (/map/ and the workflow page's small map): set-based reads, a
# fixed number whatever the number of cargo spaces.
#
# The stalled flag is computed inline (an ACTIVE workflow whose current step's job, status 1-3,
# has not changed since %(stalled_before)s, the same cut-off and comparison as STALLED_WORKFLOWS)
# so the map needs no other statement.

# Every cargo space with its tray and the workflow that locks it, plus locks on codes that
# bas_cargo_space does not list (never dropped: the map lists them as unknown spaces).
# {spaces} and {locks} are the two tables whole (ALL_*) or only some codes (OF_CODES_*, with
# %(codes)s; OF_PREFIXES_*, with %(likes)s). Parameter: %(stalled_before)s.
RACK_MAP_SPACES = """
WITH stalled AS (
    SELECT w.workflow_id
    FROM alg.tidy_workflow AS w
    CROSS JOIN LATERAL (
        SELECT s.step_id
        FROM alg.tidy_step AS s
        WHERE s.workflow_id = w.workflow_id                 -- tidy_step_workflow_step_no_key
          AND s.status NOT IN ('COMPLETED', 'CANCELLED')
        ORDER BY s.step_no
        LIMIT 1
    ) AS cur
    JOIN mydo_job AS j
      ON j.job_id = 'TDY-' || w.workflow_id || '-' || cur.step_id   -- mydo_job_pkey
    WHERE w.status = 'ACTIVE'                               -- tidy_workflow_active_idx
      AND j.status IN (1, 2, 3)
      AND j.updated_at <= %(stalled_before)s
)
SELECT coalesce(c.cargo_space_id, l.cargo_space_id) AS code,
       c.tray_code,
       l.workflow_id,
       -- The space's CSS classes on the map (console/rack_map.py): its lock, then o for a tray.
       concat_ws(' ',
                 CASE WHEN l.workflow_id IS NULL THEN NULL
                      WHEN w.status = 'PAUSED_RECOVERY' THEN 'p'
                      WHEN w.status = 'ACTIVE' AND st.workflow_id IS NOT NULL THEN 's'
                      WHEN w.status = 'ACTIVE' THEN 'a'
                      ELSE 'x'
                 END,
                 CASE WHEN c.tray_code IS NOT NULL THEN 'o' END) AS css,
       CASE WHEN w.status NOT IN ('ACTIVE', 'PAUSED_RECOVERY') THEN w.status END AS holder_status,
       c.cargo_space_id IS NOT NULL AS known
FROM {spaces} AS c
FULL JOIN {locks} AS l
  ON l.cargo_space_id = c.cargo_space_id
LEFT JOIN alg.tidy_workflow AS w
  ON w.workflow_id = l.workflow_id
LEFT JOIN stalled AS st
  ON st.workflow_id = l.workflow_id
"""

RACK_MAP_ALL_SPACES = "bas_cargo_space"
RACK_MAP_ALL_LOCKS = "alg.tidy_space_lock"
# %(codes)s: the codes of one aisle (and the codes no aisle takes), from RACK_MAP_CODES.
RACK_MAP_OF_CODES_SPACES = """(SELECT cargo_space_id, tray_code
    FROM bas_cargo_space                                    -- bas_cargo_space_pkey
    WHERE cargo_space_id = ANY (%(codes)s::text[]))"""
RACK_MAP_OF_CODES_LOCKS = """(SELECT workflow_id, cargo_space_id
    FROM alg.tidy_space_lock                                -- tidy_space_lock_cargo_space_id_key
    WHERE cargo_space_id = ANY (%(codes)s::text[]))"""
# %(likes)s: LIKE patterns ('A01%' for aisle A01, wildcards in the aisle escaped).
RACK_MAP_OF_PREFIXES_SPACES = """(SELECT cargo_space_id, tray_code
    FROM bas_cargo_space
    WHERE cargo_space_id LIKE ANY (%(likes)s::text[]))"""
RACK_MAP_OF_PREFIXES_LOCKS = """(SELECT workflow_id, cargo_space_id
    FROM alg.tidy_space_lock
    WHERE cargo_space_id LIKE ANY (%(likes)s::text[]))"""

# Every code the map places: the spaces, and locks on codes bas_cargo_space does not list.
RACK_MAP_CODES = """
SELECT c.cargo_space_id
FROM bas_cargo_space AS c
UNION ALL
SELECT l.cargo_space_id
FROM alg.tidy_space_lock AS l
WHERE NOT EXISTS (SELECT 1
                  FROM bas_cargo_space AS c
                  WHERE c.cargo_space_id = l.cargo_space_id)  -- bas_cargo_space_pkey
"""

# Changes when a code is added, removed or renamed: the aisle list is read again only then.
RACK_MAP_CODES_FINGERPRINT = f"""
SELECT count(*),
       coalesce(sum(hashtext(codes.code)), 0)
FROM ({RACK_MAP_CODES}) AS codes(code)
"""

# The steps recovery paused (the workflow and its step both PAUSED_RECOVERY): the map draws
# each as an arrow from its source to its target.
RACK_MAP_PAUSED_STEPS = """
SELECT s.workflow_id,
       s.step_no,
       s.tray_code,
       s.cargo_space_id,
       s.target_cargo_space_id
FROM alg.tidy_workflow AS w
JOIN alg.tidy_step AS s
  ON s.workflow_id = w.workflow_id                          -- tidy_step_workflow_step_no_key
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_paused_idx
  AND s.status = 'PAUSED_RECOVERY'
ORDER BY s.workflow_id, s.step_no
"""



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


# The /metrics counters: folded totals plus the journal rows not folded yet.
def _folded_before(journal: str) -> str:
    """The moment before which `journal`'s rows are already in its folded totals (retention folds,
    then deletes; recovery/retention.py): a counter adds the rows from then on."""
    return f"coalesce((SELECT folded_before FROM recovery_journalfold WHERE journal = '{journal}'), '-infinity')"


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

# Counters: the totals folded by recovery.retention plus the rows newer than its watermark
# (callback_receipt_time_idx / recovery_decision_time_idx), so they survive row deletion.
CALLBACK_COUNTS = f"""
SELECT endpoint,
       outcome,
       sum(n)::bigint AS total
FROM (
    SELECT label1 AS endpoint, label2 AS outcome, total AS n
    FROM recovery_journaltotal
    WHERE journal = 'callbacks'
    UNION ALL
    -- A row may stand for several requests (401s: one row per endpoint and minute).
    SELECT endpoint, outcome, sum(request_count)
    FROM recovery_callbackreceipt
    WHERE received_at >= {_folded_before('callbacks')}
    GROUP BY endpoint, outcome
) AS counted
GROUP BY endpoint, outcome
"""

# tidy_callback_unknown_fields_total: the counts taken when the callbacks were read (at most 51
# labels per endpoint, a few shards each: recovery/callback_fields.py), never the receipts.
CALLBACK_UNKNOWN_FIELD_COUNTS = """
SELECT endpoint,
       field,
       sum(total)::bigint AS total
FROM recovery_callbackfieldtotal                            -- a few hundred rows at most
GROUP BY endpoint, field
"""

# tidy_callback_duration_seconds: per endpoint, each bucket's own count (its upper bound, '+Inf'
# beyond the last; not cumulative) and '_sum_us', the sum in microseconds; the folded totals
# plus the receipts not folded yet (as recovery.retention_sql.FOLD_CALLBACK_DURATIONS counts them).
CALLBACK_DURATION_BUCKETS = f"""
WITH unfolded AS MATERIALIZED (
    SELECT endpoint, duration_ms
    FROM recovery_callbackreceipt
    WHERE received_at >= {_folded_before('callbacks')}     -- callback_receipt_time_idx
      AND duration_ms IS NOT NULL
)
SELECT endpoint,
       bucket,
       sum(n)::float8 AS total
FROM (
    SELECT label1 AS endpoint, label2 AS bucket, total::float8 AS n
    FROM recovery_journaltotal
    WHERE journal = 'callback_duration'
    UNION ALL
    SELECT r.endpoint,
           coalesce((SELECT min(b) FROM unnest(%(bounds)s::float8[]) AS b
                     WHERE r.duration_ms / 1000.0 <= b)::text, '+Inf'),
           count(*)
    FROM unfolded AS r
    GROUP BY 1, 2
    UNION ALL
    SELECT r.endpoint, '_sum_us', sum(r.duration_ms) * 1000
    FROM unfolded AS r
    GROUP BY r.endpoint
) AS counted
GROUP BY endpoint, bucket
"""

# Decisions the background recovery applied (source RECOVERY, not observed); callbacks and
# repairs journal theirs with another source, observe mode its own as observed (folded as OBSERVED).
RECOVERY_DECISION_COUNTS = f"""
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
      AND NOT observed
      AND decided_at >= {_folded_before('decisions')}
    GROUP BY action
) AS counted
GROUP BY action
"""


# tidy_notification_deliveries_total: every recorded attempt (console.notifications.delivery
# writes one per try, sent or failed). Attempts are never deleted, and they are few (one per
# message and retry), so they are counted whole; the delivery's channel through its primary key
# (console_notificationdelivery_pkey).
NOTIFICATION_DELIVERY_COUNTS = """
SELECT d.channel,
       a.ok,
       count(*) AS total
FROM console_notificationdeliveryattempt AS a
JOIN console_notificationdelivery AS d
  ON d.id = a.delivery_id
GROUP BY d.channel, a.ok
"""

# --- communication quality (docs/architecture.md §17): the WCS heard, outbound requests, job ages

# Seconds since the newest authenticated callback of either endpoint, whatever its answer (an
# UNAUTHORIZED row is anyone's request, not the WCS speaking); no row: never heard within the
# journal's retention. max() walks callback_receipt_time_idx back from the newest row, past at
# most a couple of UNAUTHORIZED rows a minute.
WCS_LAST_HEARD_AGE = """
SELECT extract(epoch FROM now() - max(received_at))::float8 AS age_seconds
FROM recovery_callbackreceipt
WHERE outcome <> 'UNAUTHORIZED'                             -- callback_receipt_time_idx
"""

# tidy_outbound_requests_total{target, outcome}: the totals folded by recovery.retention plus the
# rows newer than its watermark (outbound_http_time_idx), labelled by the fold's own fragments.
OUTBOUND_REQUEST_COUNTS = f"""
SELECT target,
       outcome,
       sum(n)::bigint AS total
FROM (
    SELECT label1 AS target, label2 AS outcome, total AS n
    FROM recovery_journaltotal
    WHERE journal = 'outbound'
    UNION ALL
    SELECT {retention_sql.OUTBOUND_TARGET},
           {retention_sql.OUTBOUND_OUTCOME},
           count(*)
    FROM recovery_outboundhttprequest
    WHERE started_at >= {_folded_before('outbound')}
      AND {retention_sql.OUTBOUND_COUNTED}
    GROUP BY 1, 2
) AS counted
GROUP BY target, outcome
"""

# The active tidy move jobs' ages (now - created_at): how many, how many the WCS has taken
# (status 2 or 3: a vehicle is on its way or moving the tray), and the median, 95th percentile
# and oldest age, interpolated (percentile_cont), and the sum of the ages (the summary's _sum).
# Both /metrics (tidy_active_job_age_seconds) and /flow/ read this one statement, so they show the
# same numbers. NULL ages: no active job.
ACTIVE_JOB_AGES = """
SELECT a.jobs, a.in_progress, a.p[1] AS p50, a.p[2] AS p95, a.oldest, a.total
FROM (
    SELECT count(*) AS jobs,
           count(*) FILTER (WHERE status IN (2, 3)) AS in_progress,
           -- Both percentiles from one sort of the ages.
           percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY extract(epoch FROM now() - created_at)) AS p,
           extract(epoch FROM now() - min(created_at))::float8 AS oldest,
           coalesce(sum(extract(epoch FROM now() - created_at)), 0)::float8 AS total
    FROM mydo_job
    WHERE in_or_out = 28
) AS a
"""

# Parameter: %(since)s. The tidy move jobs finished since then (mydo_job_finish_finished_at_idx)
# and how long each took from creation to finish (the archive keeps the job's created_at): how
# many, median, 95th percentile and longest, in seconds. NULL durations: none finished.
COMPLETED_JOB_DURATIONS = """
SELECT count(*) AS jobs,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at)) AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at)) AS p95,
       extract(epoch FROM max(finished_at - created_at))::float8 AS longest
FROM mydo_job_finish
WHERE finished_at >= %(since)s                              -- mydo_job_finish_finished_at_idx
  AND in_or_out = 28
"""


# One person's posts of one kind (notes, cordons, silences) one at a time (console.rate_limits): a
# transaction-scoped advisory lock on (namespace: the kind, user id folded into 31 bits), so two
# posts at once cannot both pass the rate limit's count. Parameters: %(namespace)s and %(key)s.
RATE_LIMIT_LOCK = "SELECT pg_advisory_xact_lock(%(namespace)s, %(key)s)"


# One run of a batch re-check at a time (console.repair.batch): a session-level advisory lock
# on (namespace, batch id), held for the whole run and released at its end, or by PostgreSQL
# when the worker's connection dies. A second delivery of the task finds it taken and leaves.
# Parameters: %(namespace)s and %(key)s, both 32-bit (the batch id folded into 31 bits).
TRY_BATCH_RUN_LOCK = "SELECT pg_try_advisory_lock(%(namespace)s, %(key)s)"
RELEASE_BATCH_RUN_LOCK = "SELECT pg_advisory_unlock(%(namespace)s, %(key)s)"

# Is recovery fresh, for /health/ready (console/health.py) and the console's banner
# (console.readers.recovery.recovery_health): the newest successful cycle's age and, when recovery is
# sharded, the shards with no successful cycle within %(stale_after_seconds)s and the backlog the
# newest success of each shard left (unsharded: the newest success's own backlog). Shards are few,
# and each probe walks the (outcome, finished_at) index back only to its newest success.
READY_RECOVERY_FACTS = """
WITH newest AS (
    SELECT finished_at, shard, shard_count, backlog
    FROM recovery_recoverycycle
    WHERE outcome = 'SUCCEEDED'                                 -- recovery_re_outcome_760dfc_idx
    ORDER BY finished_at DESC
    LIMIT 1
), fresh_per_shard AS (
    SELECT DISTINCT ON (c.shard) c.shard, c.backlog
    FROM recovery_recoverycycle AS c, newest
    WHERE newest.shard IS NOT NULL
      AND c.outcome = 'SUCCEEDED' AND c.shard IS NOT NULL
      AND c.shard_count = newest.shard_count
      AND c.finished_at >= now() - make_interval(secs => %(stale_after_seconds)s)
    ORDER BY c.shard, c.finished_at DESC
)
SELECT extract(epoch FROM now() - newest.finished_at)::float8 AS age_seconds,
       ARRAY(SELECT s FROM generate_series(0, newest.shard_count - 1) AS s
             WHERE newest.shard IS NOT NULL
               AND s NOT IN (SELECT shard FROM fresh_per_shard)
             ORDER BY s) AS stale_shards,
       CASE WHEN newest.shard IS NULL THEN newest.backlog
            ELSE (SELECT coalesce(sum(backlog), 0) FROM fresh_per_shard)::integer
       END AS backlog
FROM newest
"""


# --- observe mode: /recovery/observe/ (docs/architecture.md §16) --------------------------------
# What happened to a workflow after an observed decision, one name per row (`outcome`), earliest
# first in this precedence: cancelled (the workflow is CANCELLED now); repaired (an operator repair
# that resolves a pause was applied after it: %(resolving_actions)s, the codes whose spec in
# console.repair.registry says `resolves_pause`); recovery (recovery applied a decision after it,
# in apply mode: `later_*` say which); completed_by_callback / advanced_by_callback (a WCS finish
# advanced a step after it, and the workflow is or is not COMPLETED now); unchanged. Whether that
# agrees with the observed decision is console.operations.observe.agreement (pure), so the page and
# the 24-hour rates say the same. The probes: the workflow's primary key, its decisions by
# (workflow_id, -decided_at), its repair audit by (workflow_id, -id), its callback events by their
# identity key's first column.
_OBSERVED_FROM = """
FROM recovery_recoverydecision AS d
LEFT JOIN alg.tidy_workflow AS w
    ON w.workflow_id = d.workflow_id                            -- tidy_workflow_pkey
LEFT JOIN LATERAL (
    SELECT a.action, a.reason
    FROM recovery_recoverydecision AS a
    WHERE a.workflow_id = d.workflow_id                         -- recovery_re_workflo_ee9b9d_idx
      AND NOT a.observed
      AND a.decided_at > d.decided_at
    ORDER BY a.decided_at, a.id
    LIMIT 1
) AS later ON true
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN w.status = 'CANCELLED' THEN 'cancelled'
        WHEN EXISTS (SELECT 1
                     FROM console_repairaudit AS r
                     WHERE r.workflow_id = d.workflow_id        -- console_rep_workflo_cbe146_idx
                       AND r.at > d.decided_at
                       AND r.stage = 'APPLY'
                       AND r.outcome = 'APPLIED'
                       AND r.action = ANY(%(resolving_actions)s)) THEN 'repaired'
        WHEN later.action IS NOT NULL THEN 'recovery'
        WHEN EXISTS (SELECT 1
                     FROM alg.tidy_callback_event AS e
                     WHERE e.workflow_id = d.workflow_id        -- tidy_callback_event_identity_key
                       AND e.received_at > d.decided_at
                       AND e.stage IN ('MOVE_FINISHED', 'OUTBOUND_FINISHED'))
             THEN CASE WHEN w.status = 'COMPLETED' THEN 'completed_by_callback' ELSE 'advanced_by_callback' END
        ELSE 'unchanged'
    END AS outcome
) AS after
WHERE d.observed
"""

# Parameters: %(limit)s, %(resolving_actions)s, and those of the optional conditions below. Newest
# first, one keyset page.
OBSERVED_DECISIONS = """
SELECT d.id, d.decided_at, d.cycle_id, d.workflow_id, d.step_id, d.action, d.reason, d.rule, d.fingerprint,
       w.status AS workflow_status,
       after.outcome,
       later.action AS later_action,
       coalesce(later.reason, '') AS later_reason
""" + _OBSERVED_FROM + """{where}
ORDER BY d.decided_at DESC, d.id DESC                           -- recovery_decision_observed_idx
LIMIT %(limit)s
"""

OBSERVED_WHERE_ACTION = "  AND d.action = %(action)s\n"
OBSERVED_WHERE_REASON = "  AND d.reason = %(reason)s\n"
OBSERVED_WHERE_BEFORE = "  AND (d.decided_at, d.id) < (%(before_at)s, %(before_id)s)\n"

# Parameters: %(since)s, %(resolving_actions)s. The observed decisions since then, counted by what
# happened afterwards (the agreement rate per action over the last 24 hours).
OBSERVED_OUTCOME_COUNTS = """
SELECT d.action, d.reason, after.outcome, later.action AS later_action, coalesce(later.reason, '') AS later_reason,
       count(*) AS n
""" + _OBSERVED_FROM + """  AND d.decided_at >= %(since)s                 -- recovery_decision_observed_idx
GROUP BY d.action, d.reason, after.outcome, later.action, later.reason
"""



# --- analytics: /analytics/ (docs/architecture.md §16) ------------------------------------------------
# Two waits a warehouse manager targets: time to acknowledge (a notification opened -> someone
# acknowledged it) and time to resolve (a workflow paused -> resumed by a repair, completed or
# cancelled). Both as `episodes`: when it started, how long it took in seconds (NULL: not yet),
# its reason code, the cargo space whose aisle it counts under, and its shift.
#
# A pause is an applied PAUSE decision (never an observed one); it ends at the first of: an applied
# repair that resumes or cancels it (%(resolving_actions)s: the codes whose spec in
# console.repair.registry says `resolves_pause`), the
# workflow's completion, its cancellation; a workflow cannot pause again before it resumed, so the
# first end after a pause is that pause's own. A notification is counted under its own reason code;
# its aisle is that of the step the workflow's latest pause before it named, else of its first step;
# a notification without a workflow (recovery stale, backlog) has no space; a group of workflows
# (paused, stalled per reason and aisle) counts under the aisle it keeps.
# The aisle of a space is computed in Python (SPACE_CODE_PATTERN is a Python expression) and given
# as %(spaces)s / %(aisles)s; the shift is the latest of %(shift_starts)s (warehouse clock times,
# %(tz)s) at or before the start, else the day's last. Parameters also: %(since)s (the earliest
# start read), %(now)s.
_EPISODES = """
WITH episodes AS (
    SELECT 'resolve' AS metric,
           d.decided_at AS started_at,
           extract(epoch FROM ends.ended_at - d.decided_at)::float8 AS seconds,
           d.reason AS reason,
           st.cargo_space_id AS space,
           NULL::text AS aisle
    FROM recovery_recoverydecision AS d
    JOIN alg.tidy_workflow AS w
        ON w.workflow_id = d.workflow_id                       -- tidy_workflow_pkey
    LEFT JOIN alg.tidy_step AS st
        ON st.step_id = d.step_id                              -- tidy_step_pkey
    CROSS JOIN LATERAL (
        SELECT min(t) AS ended_at
        FROM (SELECT min(r.at) AS t
              FROM console_repairaudit AS r
              WHERE r.workflow_id = d.workflow_id              -- console_rep_workflo_cbe146_idx
                AND r.at > d.decided_at
                AND r.at <= %(now)s
                AND r.stage = 'APPLY'
                AND r.outcome = 'APPLIED'
                AND r.action = ANY(%(resolving_actions)s)
              UNION ALL
              SELECT w.completed_at
              WHERE w.completed_at > d.decided_at
                AND w.completed_at <= %(now)s
              UNION ALL
              SELECT w.updated_at
              WHERE w.status = 'CANCELLED'
                AND w.updated_at > d.decided_at
                AND w.updated_at <= %(now)s) AS candidate
    ) AS ends
    WHERE d.action = 'PAUSE'
      AND NOT d.observed
      AND d.decided_at >= %(since)s                            -- recovery_decision_time_idx
      AND d.decided_at <= %(now)s
    UNION ALL
    SELECT 'acknowledge',
           n.opened_at,
           CASE WHEN a.at <= %(now)s THEN extract(epoch FROM a.at - n.opened_at)::float8 END,
           n.reason,
           coalesce((SELECT ps.cargo_space_id
                     FROM recovery_recoverydecision AS p
                     JOIN alg.tidy_step AS ps
                         ON ps.step_id = p.step_id
                     WHERE p.workflow_id = n.workflow_id       -- recovery_re_workflo_ee9b9d_idx
                       AND p.action = 'PAUSE'
                       AND NOT p.observed
                       AND p.decided_at <= n.opened_at
                     ORDER BY p.decided_at DESC
                     LIMIT 1),
                    (SELECT fs.cargo_space_id
                     FROM alg.tidy_step AS fs
                     WHERE fs.workflow_id = n.workflow_id      -- tidy_step_workflow_step_no_key
                     ORDER BY fs.step_no
                     LIMIT 1)),
           nullif(n.aisle, '')                                 -- a group's own aisle (workflow_id NULL)
    FROM console_notification AS n
    LEFT JOIN console_notificationacknowledgement AS a
        ON a.notification_id = n.id                            -- its unique notification_id
    WHERE n.opened_at >= %(since)s                             -- notification_opened_idx: the window's rows only
      AND n.opened_at <= %(now)s
), placed AS (
    SELECT e.metric, e.started_at, e.seconds, coalesce(e.reason, '') AS reason,
           CASE WHEN e.aisle IS NOT NULL THEN e.aisle
                WHEN e.space IS NULL THEN '' ELSE coalesce(m.aisle, 'other') END AS aisle,
           coalesce((SELECT max(s) FROM unnest(%(shift_starts)s::time[]) AS s
                     WHERE s <= (e.started_at AT TIME ZONE %(tz)s)::time),
                    (SELECT max(s) FROM unnest(%(shift_starts)s::time[]) AS s)) AS shift
    FROM episodes AS e
    LEFT JOIN unnest(%(spaces)s::text[], %(aisles)s::text[]) AS m (space, aisle)
        ON m.space = e.space
)
"""

# p50 and p90 (percentile_cont over the finished episodes) with the counts, per metric and window
# (7 and 30 days back from %(now)s), overall and by reason, by aisle and by shift. `dimension`
# says which grouping a row is; the finished count is `done`, the rest `still_open`.
ANALYTICS_PERCENTILES = _EPISODES + """
SELECT p.metric,
       w.days,
       CASE WHEN grouping(p.reason) = 0 THEN 'reason'
            WHEN grouping(p.aisle) = 0 THEN 'aisle'
            WHEN grouping(p.shift) = 0 THEN 'shift'
            ELSE 'all' END AS dimension,
       coalesce(p.reason, p.aisle, to_char(p.shift, 'HH24:MI'), '') AS key,
       count(p.seconds) AS done,
       count(*) - count(p.seconds) AS still_open,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p.seconds) AS p50,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY p.seconds) AS p90
FROM placed AS p
JOIN (VALUES (7), (30)) AS w (days)
    ON p.started_at >= %(now)s - make_interval(days => w.days)
GROUP BY GROUPING SETS ((p.metric, w.days), (p.metric, w.days, p.reason), (p.metric, w.days, p.aisle),
                        (p.metric, w.days, p.shift))
ORDER BY p.metric, w.days, dimension, key
"""

# The weekly trend: p50 and p90 per metric and warehouse week (weeks start on Monday), for the
# weeks from %(since)s on.
ANALYTICS_WEEKLY = _EPISODES + """
SELECT p.metric,
       date_trunc('week', p.started_at AT TIME ZONE %(tz)s)::date AS week,
       count(p.seconds) AS done,
       count(*) - count(p.seconds) AS still_open,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p.seconds) AS p50,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY p.seconds) AS p90
FROM placed AS p
GROUP BY p.metric, week
ORDER BY p.metric, week
"""

# Parameter: %(since)s. The cargo spaces the analytics may count under an aisle: the steps named by
# the pauses since then, and every step of a workflow notified since then.
ANALYTICS_SPACES = """
SELECT st.cargo_space_id
FROM recovery_recoverydecision AS d
JOIN alg.tidy_step AS st
    ON st.step_id = d.step_id
WHERE d.action = 'PAUSE'
  AND d.decided_at >= %(since)s                                -- recovery_decision_time_idx
UNION
SELECT st.cargo_space_id
FROM console_notification AS n
JOIN alg.tidy_step AS st
    ON st.workflow_id = n.workflow_id                          -- tidy_step_workflow_step_no_key
WHERE n.opened_at >= %(since)s                                -- notification_opened_idx
"""


# --- the recovery processes page and `cluster_status` (console/readers/processes.py) ----------

# Every worker process that ran recovery and was seen since %(since)s, cluster by cluster
# (recovery_heartbeat_seen_idx).
PROCESSES_SEEN = """
SELECT h.cluster,
       h.host,
       h.cluster_pid,
       h.worker,
       h.started_at,
       h.last_seen_at,
       ARRAY(SELECT jsonb_array_elements_text(h.shards)::int) AS shards,
       h.shard_count
FROM recovery_processheartbeat AS h
WHERE h.last_seen_at >= %(since)s
ORDER BY h.host, h.cluster, h.worker
"""

# Each shard 0 .. %(shard_count)s - 1 and its newest cycle (any outcome). An unsharded cycle (shard
# null: the start-up cycle, `recover --once`, or RECOVERY_SHARDS=1) covers every shard. Each
# lateral read walks recovery_cycle_started_idx backwards and stops at the first match.
SHARD_LAST_CYCLES = """
SELECT s.shard,
       c.id,
       c.started_at,
       c.finished_at,
       c.outcome,
       c.worker,
       c.trigger,
       c.duration_ms,
       c.examined,
       c.errors
FROM generate_series(0, %(shard_count)s - 1) AS s(shard)
LEFT JOIN LATERAL (
    SELECT rc.*
    FROM recovery_recoverycycle AS rc
    WHERE rc.shard = s.shard
       OR rc.shard IS NULL
    ORDER BY rc.started_at DESC
    LIMIT 1
) AS c ON true
ORDER BY s.shard
"""

# System check (console/cordons/checks.py): the cordon tables' own enabled triggers.
CORDON_TABLE_EXISTS = "SELECT to_regclass('recovery_cordon') IS NOT NULL"
CORDON_TRIGGERS_PRESENT = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = 'recovery_cordon'::regclass
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""
CORDON_LIFT_TABLE_EXISTS = "SELECT to_regclass('recovery_cordonlift') IS NOT NULL"
CORDON_LIFT_TRIGGERS_PRESENT = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = 'recovery_cordonlift'::regclass
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""

# Log lines dropped because a process's log output did not keep up: each process's running
# total, one row per process (recovery.logdrops), summed.
LOG_RECORDS_DROPPED = """
SELECT coalesce(sum(dropped), 0)
  FROM recovery_logdrops
"""
