"""Named SQL read by more than one console feature (docs/architecture.md §3): the paused list,
recovery health and readiness, stalled and active counts, the flow's job ages, the recovery
processes, the append-only checks of every audit table, and the rate limit's lock. A statement
one feature alone runs lives in that feature's own `sql.py`.

The statements on unfinished steps repeat the predicate of the partial indexes on unfinished
steps (recovery/sql/wms_schema.sql: tidy_step_open_*_idx) word for word (OPEN_STEP), so PostgreSQL
can prove the index applies; the tidy_step table keeps every historical step, the indexes only
the open ones.
"""


OPEN_STEP = "status NOT IN ('COMPLETED', 'CANCELLED')"


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
# One page and the facet counts. The WHERE clause is assembled by console.readers.paused from the
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


# --- stalled and active workflows (console.readers.stalled; the active list: console/floor/sql.py)
# A workflow's current step is its first unfinished one (lowest step_no); its job is
# TDY-<workflow>-<step> in mydo_job. Stalled: the workflow is ACTIVE and that job, at status
# 1, 2 or 3, has not changed (mydo_job.updated_at) since %(stalled_before)s (now minus
# STALLED_AFTER_MINUTES). A derived flag, never stored (docs/user-guide.md, "Active and stalled workflows").
CURRENT_STEP_AND_JOB = f"""
LEFT JOIN LATERAL (
    SELECT st.step_id, st.step_no, st.status, st.tray_code, st.cargo_space_id, st.target_cargo_space_id
    FROM alg.tidy_step AS st
    WHERE st.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
      AND st.{OPEN_STEP}
    ORDER BY st.step_no
    LIMIT 1
) AS s ON true
LEFT JOIN public.mydo_job AS j
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
    FROM public.mydo_job
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
FROM public.mydo_job_finish
WHERE finished_at >= %(since)s                              -- mydo_job_finish_finished_at_idx
  AND in_or_out = 28
"""


# One person's posts of one kind (notes, cordons, silences) one at a time (console.rate_limits): a
# transaction-scoped advisory lock on (namespace: the kind, user id folded into 31 bits), so two
# posts at once cannot both pass the rate limit's count. Parameters: %(namespace)s and %(key)s.
RATE_LIMIT_LOCK = "SELECT pg_advisory_xact_lock(%(namespace)s, %(key)s)"


# Is recovery fresh, for /health/ready (console/operations/health.py) and the console's banner
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


# --- append-only tables (console/checks.py: every feature's append-only system check) ----------
# Parameter: %(table)s, the table's name, read through the catalog (never formatted in). Is it
# migrated yet?
APPEND_ONLY_TABLE_EXISTS = "SELECT to_regclass(%(table)s) IS NOT NULL"

# Parameter: %(table)s. The table's own enabled triggers (its append-only checks, docs/architecture.md
# §10); no row while the table does not exist (pg_trigger_tgrelid_tgname_index).
APPEND_ONLY_TRIGGERS = """
SELECT tgname
FROM pg_trigger
WHERE tgrelid = to_regclass(%(table)s)
  AND NOT tgisinternal
  AND tgenabled <> 'D'
"""
