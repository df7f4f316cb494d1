"""Every SQL statement that reads recovery evidence or mutates the WMS tables, by name.

Long queries live in `recovery/sql/*.sql`; the short mutations are here, one clause per line,
with `%(name)s` parameters (never formatted values). Each mutation is conditional on the state
its caller read, so a stale writer changes nothing (docs/architecture.md §6); callers check the row count.

Only what recovery runs against the WMS (and the journals it writes beside it) lives here: the
leases' and heartbeats' statements are in recovery/runtime/lease_sql.py, the demo's and the warehouse
builder's in recovery/demo/sql.py, the stand-in WCS's in console/simulator/sql.py.
"""

from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


@cache
def sql_file(name: str) -> str:
    return (SQL_DIR / name).read_text(encoding="utf-8")


@cache
def classification(*, sharded: bool = False, ranged: bool = False) -> str:
    """What decide() reads of every ACTIVE workflow, oldest (lowest id) first (classification.sql).
    `sharded` adds the parameters %(shard)s and %(shard_count)s: only the workflows with
    workflow_id % shard_count = shard. Unsharded, no condition at all: a modulo hides the active
    set's size from the planner. `ranged` adds %(from_id)s and %(to_id)s: only the workflow ids
    from_id to to_id (both included), one part of a classification read in parts (CLASSIFICATION_PARTS)."""
    return sql_file("classification.sql").replace("/* shard */", _active_conditions(sharded, ranged))


def _active_conditions(sharded: bool, ranged: bool) -> str:
    return "".join((
        "AND aw.workflow_id %% %(shard_count)s = %(shard)s " if sharded else "",
        "AND aw.workflow_id BETWEEN %(from_id)s AND %(to_id)s" if ranged else "",
    ))


@cache
def classification_parts(*, sharded: bool = False) -> str:
    """How many ACTIVE workflows (of the shard) there are, and the workflow ids that cut them into
    equal parts: %(fractions)s, e.g. [0.5] for two parts. An index-only scan of the active ids."""
    return f"""
SELECT count(*),
       percentile_disc(%(fractions)s::float8[]) WITHIN GROUP (ORDER BY aw.workflow_id)
FROM alg.tidy_workflow AS aw
WHERE aw.status = 'ACTIVE' {_active_conditions(sharded, False)}
"""


# The classification reads every active workflow once, streamed a chunk of rows at a time
# (psycopg's stream(), an ordinary statement) in its own read transaction. JIT is off for it:
# compiling the projection's expressions costs more than executing them (several hundred ms on a
# stock server's defaults for a query whose rows take microseconds each). Its joins hash whole
# tables of the active set (spaces, jobs, steps): enough work_mem keeps each hash in one batch
# instead of spilling to disk (for this one read transaction only).
CLASSIFICATION_SETTINGS = """
SELECT set_config('jit', 'off', true),
       set_config('work_mem', '32MB', true)
"""

# Session-wide, once per connection (recovery.engine.prepared): only statements it prepares are
# affected, and they keep one generic plan instead of being planned on every call.
SET_GENERIC_PLANS = """
SET plan_cache_mode = force_generic_plan
"""


@cache
def _evidence_projection() -> str:
    """evidence.sql compacted (_compact): it runs for every callback and every decision, and
    psycopg keeps its parsed form of a statement (where the parameters go) only for statements up
    to 4 kB; longer ones it parses again on every execution."""
    return _compact(sql_file("evidence.sql"))


@cache
def evidence_for_workflows() -> str:
    """Parameter: %(workflow_ids)s, a list of workflow ids."""
    return _evidence_projection() + "WHERE w.workflow_id = ANY (%(workflow_ids)s::bigint[])\nORDER BY w.workflow_id\n"


@cache
def evidence_for_active_workflows() -> str:
    """The full evidence of every ACTIVE workflow, oldest first, workflow by workflow (the replay
    and the tests read it; the recovery cycle classifies with classification())."""
    return _evidence_projection() + "WHERE w.status = 'ACTIVE'\nORDER BY w.workflow_id\n"


@cache
def evidence_for_one_workflow() -> str:
    """Parameter: %(workflow_id)s. The same projection for one workflow, by equality: as a prepared
    statement it keeps one generic plan (recovery.engine.prepared), and for `= ANY (array)` that plan
    counts on ten workflows, so while mydo_job holds up to a few thousand active jobs it hashes the
    whole table rather than probing its key once (the callback's read under the lock, for every
    jobFinish)."""
    return _evidence_projection() + "WHERE w.workflow_id = %(workflow_id)s::bigint\n"


# --- the workflow row lock (docs/architecture.md §6): always taken first ----------------------

LOCK_WORKFLOW_SKIP_LOCKED = """
SELECT workflow_id, status
FROM alg.tidy_workflow
WHERE workflow_id = %(workflow_id)s
FOR UPDATE SKIP LOCKED
"""

LOCK_WORKFLOW_WAIT = """
SELECT workflow_id, status
FROM alg.tidy_workflow
WHERE workflow_id = %(workflow_id)s
FOR UPDATE
"""


# --- advancement (callback and RECOVERY_FINISHED share it) ----------------------------------

INSERT_CALLBACK_EVENT = """
INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage, payload)
VALUES (%(workflow_id)s, %(step_id)s, %(job_id)s, %(stage)s, %(payload)s::jsonb)
ON CONFLICT (workflow_id, step_id, job_id, stage) DO NOTHING
RETURNING event_id
"""

# The deterministic id makes job creation idempotent: ON CONFLICT covers an active job, the
# NOT EXISTS an archived one, so a step never gets a second move job.
CREATE_STEP_JOB = """
INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT %(job_id)s, 28, 1, %(tray_code)s, %(cargo_space_id)s, %(target_cargo_space_id)s
WHERE NOT EXISTS (SELECT 1 FROM public.mydo_job_finish WHERE job_id = %(job_id)s)
ON CONFLICT (job_id) DO NOTHING
"""

DISPATCH_STEP = """
UPDATE alg.tidy_step
SET status = 'DISPATCHED'
WHERE step_id = %(step_id)s
  AND status = 'PENDING'
"""

COMPLETE_WORKFLOW = """
UPDATE alg.tidy_workflow
SET status = 'COMPLETED',
    completed_at = now(),
    updated_at = now(),
    pause_reason = NULL
WHERE workflow_id = %(workflow_id)s
  AND status = %(expected_status)s
"""

RELEASE_LOCKS = """
DELETE FROM alg.tidy_space_lock
WHERE workflow_id = %(workflow_id)s
"""

# The advancement in two round trips (it runs once per finished step, for every callback and
# every proven finish). Each is one statement whose parts see the same snapshot; the first's
# writes are visible to the second.

# Record the event (duplicates ignored) and complete the step, conditional on its status.
RECORD_EVENT_AND_COMPLETE_STEP = """
WITH event AS (
    INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage, payload)
    VALUES (%(workflow_id)s, %(step_id)s, %(job_id)s, %(stage)s, %(payload)s::jsonb)
    ON CONFLICT (workflow_id, step_id, job_id, stage) DO NOTHING
    RETURNING event_id
), completed AS (
    UPDATE alg.tidy_step
    SET status = 'COMPLETED',
        completed_at = now(),
        pause_reason = NULL
    WHERE step_id = %(step_id)s
      AND workflow_id = %(workflow_id)s
      AND status = %(expected_status)s
    RETURNING step_id
)
SELECT (SELECT count(*) FROM event)     AS events_recorded,
       (SELECT count(*) FROM completed) AS steps_completed
"""

# Then either dispatch the next step (its deterministic job unless it exists, active or
# archived; PENDING -> DISPATCHED) and touch the workflow, or, with no step left, complete the
# workflow and release its locks. Conditional on the workflow's status as read.
ADVANCE_WORKFLOW = """
WITH next_step AS (
    SELECT workflow_id, step_id, tray_code, cargo_space_id, target_cargo_space_id
    FROM alg.tidy_step
    WHERE workflow_id = %(workflow_id)s
      AND status IS DISTINCT FROM 'COMPLETED'
    ORDER BY step_no
    LIMIT 1
), next_job AS (
    INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
    SELECT 'TDY-' || n.workflow_id || '-' || n.step_id, 28, 1, n.tray_code, n.cargo_space_id,
           n.target_cargo_space_id
    FROM next_step AS n
    WHERE NOT EXISTS (SELECT 1 FROM public.mydo_job_finish AS f
                      WHERE f.job_id = 'TDY-' || n.workflow_id || '-' || n.step_id)
    ON CONFLICT (job_id) DO NOTHING
    RETURNING job_id
), dispatched AS (
    UPDATE alg.tidy_step AS s
    SET status = 'DISPATCHED'
    FROM next_step AS n
    WHERE s.step_id = n.step_id
      AND s.status = 'PENDING'
    RETURNING s.step_id
), workflow AS (
    UPDATE alg.tidy_workflow AS w
    SET updated_at = now(),
        status = CASE WHEN EXISTS (SELECT 1 FROM next_step) THEN w.status ELSE 'COMPLETED' END,
        completed_at = CASE WHEN EXISTS (SELECT 1 FROM next_step) THEN w.completed_at ELSE now() END,
        pause_reason = CASE WHEN EXISTS (SELECT 1 FROM next_step) THEN w.pause_reason END
    WHERE w.workflow_id = %(workflow_id)s
      AND w.status = %(expected_status)s
    RETURNING w.workflow_id
), released AS (
    DELETE FROM alg.tidy_space_lock AS l
    WHERE l.workflow_id = %(workflow_id)s
      AND NOT EXISTS (SELECT 1 FROM next_step)
      AND EXISTS (SELECT 1 FROM workflow)
    RETURNING l.lock_id
)
SELECT (SELECT step_id FROM next_step)  AS next_step_id,
       (SELECT count(*) FROM workflow)  AS workflows_updated,
       (SELECT count(*) FROM released)  AS locks_released,
       (SELECT count(*) FROM next_job)  AS jobs_created
"""


# --- pause (locks are kept) ------------------------------------------------------------------

PAUSE_WORKFLOW = """
UPDATE alg.tidy_workflow
SET status = 'PAUSED_RECOVERY',
    pause_reason = %(reason)s,
    updated_at = now()
WHERE workflow_id = %(workflow_id)s
  AND status = %(expected_status)s
"""

PAUSE_STEP = """
UPDATE alg.tidy_step
SET status = 'PAUSED_RECOVERY',
    pause_reason = %(reason)s
WHERE step_id = %(step_id)s
  AND workflow_id = %(workflow_id)s
  AND status IS NOT DISTINCT FROM %(expected_step_status)s
"""

# The decision journal (recovery.models.RecoveryDecision), written in the decision's transaction.
INSERT_RECOVERY_DECISION = """
INSERT INTO recovery_recoverydecision (cycle_id, source, decided_at, workflow_id, step_id, action, reason,
                                       rule, evidence, fingerprint)
VALUES (%(cycle_id)s, %(source)s, now(), %(workflow_id)s, %(step_id)s, %(action)s, %(reason)s,
        %(rule)s, %(evidence)s::jsonb, %(fingerprint)s)
RETURNING id
"""

# Observe mode (docs/architecture.md §16): the decisions a cycle would make, journaled as observed
# in one statement per chunk of workflows, parallel arrays one element per workflow. A workflow
# whose newest journaled decision is this very observation (same action, reason and evidence
# fingerprint) gets no new row: a workflow left as it is would otherwise be journaled again every
# cycle. The newest decision of each workflow is one probe of the (workflow_id, -decided_at) index.
# Returns the workflow ids journaled.
INSERT_OBSERVED_DECISIONS = """
INSERT INTO recovery_recoverydecision (cycle_id, source, decided_at, workflow_id, step_id, action, reason,
                                       rule, evidence, fingerprint, observed)
SELECT %(cycle_id)s, 'RECOVERY', now(), o.workflow_id, o.step_id, o.action, o.reason,
       o.rule, o.evidence::jsonb, o.fingerprint, true
FROM unnest(%(workflow_ids)s::bigint[], %(step_ids)s::bigint[], %(actions)s::text[], %(reasons)s::text[],
            %(rules)s::text[], %(evidence)s::text[], %(fingerprints)s::text[])
     AS o (workflow_id, step_id, action, reason, rule, evidence, fingerprint)
WHERE NOT EXISTS (SELECT 1
                  FROM (SELECT d.observed, d.action, d.reason, d.fingerprint
                        FROM recovery_recoverydecision AS d
                        WHERE d.workflow_id = o.workflow_id   -- recovery_re_workflo_ee9b9d_idx
                        ORDER BY d.decided_at DESC, d.id DESC
                        LIMIT 1) AS newest
                  WHERE newest.observed
                    AND newest.action = o.action
                    AND newest.reason = o.reason
                    AND newest.fingerprint = o.fingerprint)
RETURNING workflow_id
"""

# A recovery decision's writes and its journal row in one round trip each (they run once per
# decided workflow, under the workflow row lock), built from the same UPDATEs as above so the
# pause and the completion are written once. The counts let the caller refuse a stale write:
# it raises, and the whole transaction, journal row included, rolls back.
PAUSE_AND_JOURNAL = f"""
WITH workflow AS ({PAUSE_WORKFLOW}RETURNING workflow_id
), step AS ({PAUSE_STEP}RETURNING step_id
), journal AS (
    {INSERT_RECOVERY_DECISION}
)
SELECT (SELECT count(*) FROM workflow) AS workflows_paused,
       (SELECT count(*) FROM step)     AS steps_paused,
       (SELECT id FROM journal)        AS decision_id
"""

COMPLETE_AND_JOURNAL = f"""
WITH workflow AS ({COMPLETE_WORKFLOW}RETURNING workflow_id
), released AS (
    DELETE FROM alg.tidy_space_lock
    WHERE workflow_id = (SELECT workflow_id FROM workflow)
    RETURNING lock_id
), journal AS (
    {INSERT_RECOVERY_DECISION}
)
SELECT (SELECT count(*) FROM workflow) AS workflows_completed,
       (SELECT count(*) FROM released) AS locks_released,
       (SELECT id FROM journal)        AS decision_id
"""

COUNT_PAUSED_WORKFLOWS = """
SELECT count(*) FROM alg.tidy_workflow WHERE status = 'PAUSED_RECOVERY'
"""


# --- WCS callbacks, job status and tidy creation (the normal path beside recovery) -----------

# SET cannot take a bind parameter; set_config(..., is_local => true) is SET LOCAL.
SET_LOCAL_LOCK_TIMEOUT = """
SELECT set_config('lock_timeout', %(lock_timeout)s, true)
"""

# What a callback names, read under the workflow row lock: the step (it must belong to the
# workflow the job id names), the job in both job tables (primary key / mydo_job_finish_job_id_idx)
# and the step ADVANCE_WORKFLOW would dispatch once this one is COMPLETED (the first other step not
# COMPLETED, by step_no; tidy_step_workflow_step_no_key), so a jobFinish's receipt can name the
# next job in the same round trip as the advancement (docs/architecture.md §8). The step's tray and
# target are what a job-finish's reported tray_code and location are compared with.
CALLBACK_TARGET = """
SELECT s.step_id,
       s.step_no,
       s.status AS step_status,
       (SELECT j.status FROM public.mydo_job AS j WHERE j.job_id = %(job_id)s) AS active_status,
       (SELECT count(*) FROM public.mydo_job_finish AS f WHERE f.job_id = %(job_id)s) AS finish_count,
       s.tray_code,                -- CallbackTarget.step_tray_code (read by position)
       s.target_cargo_space_id,
       s.cargo_space_id,
       (SELECT n.step_id
        FROM alg.tidy_step AS n
        WHERE n.workflow_id = %(workflow_id)s
          AND n.step_id <> %(step_id)s
          AND n.status IS DISTINCT FROM 'COMPLETED'
        ORDER BY n.step_no
        LIMIT 1) AS next_step_id
FROM (SELECT 1) AS one
LEFT JOIN alg.tidy_step AS s
    ON s.step_id = %(step_id)s
   AND s.workflow_id = %(workflow_id)s
"""

# CALLBACK_TARGET's columns: the first ones of callback_target_and_evidence()'s row.
CALLBACK_TARGET_COLUMNS = 9


def _compact(sql: str) -> str:
    """`sql` without indentation, blank lines, `--` comments and runs of spaces (outside quoted
    literals): the alignment that makes the files readable would not fit psycopg's parse cache."""
    lines = []
    for line in sql.splitlines():
        quoted, out = False, []
        for i, ch in enumerate(line):
            if ch == "'":
                quoted = not quoted
            elif ch == "-" and not quoted and line.startswith("--", i):
                break
            elif ch == " " and not quoted and out and out[-1] == " ":
                continue
            out.append(ch)
        line = "".join(out)
        if line.strip():
            lines.append(line.strip() + "\n")
    return "".join(lines)


@cache
def callback_target_and_evidence() -> str:
    """Parameters: %(workflow_id)s, %(step_id)s, %(job_id)s. What a jobFinish reads under the
    workflow row lock, in one statement instead of two: CALLBACK_TARGET's row (its first
    CALLBACK_TARGET_COLUMNS columns), then the workflow's evidence (evidence_for_one_workflow's
    columns; NULL when the workflow is absent). Both parts read one snapshot, taken after the lock
    was granted (the two statements took one each, both after it). The evidence is a MATERIALIZED
    CTE so it keeps the plan it has alone (tests/recovery/callbacks/test_evidence_read.py); the statement is
    compacted to fit psycopg's parse cache, as the evidence projection is."""
    return _compact(f"""
WITH e AS MATERIALIZED (
{evidence_for_one_workflow()}
)
SELECT t.*, e.*
FROM (
{CALLBACK_TARGET}
) AS t
LEFT JOIN e ON true
""")


# A jobFinish already applied, answered without a lock or a transaction (docs/architecture.md §8):
# one snapshot of the workflow's state (the answer) and, once, whether this callback is a
# duplicate: its step COMPLETED, its job known (archived or active), and its very (workflow, step,
# job, stage) event recorded (tidy_callback_event's unique key). NULL: not provably a duplicate,
# the callback takes the locked path. The workflow's status decides the rest (ACTIVE or COMPLETED).
FINISH_DUPLICATE_PROBE = """
SELECT w.status AS workflow_status,
       w.pause_reason,
       s.step_id,
       s.step_no,
       s.status AS step_status,
       (SELECT t.step_no
        FROM alg.tidy_step AS t
        WHERE t.step_id = %(step_id)s
          AND t.workflow_id = %(workflow_id)s
          AND t.status = 'COMPLETED'
          AND EXISTS (SELECT 1 FROM alg.tidy_callback_event AS e
                      WHERE e.workflow_id = %(workflow_id)s AND e.step_id = %(step_id)s
                        AND e.job_id = %(job_id)s AND e.stage = %(stage)s)
          AND (EXISTS (SELECT 1 FROM public.mydo_job_finish AS f WHERE f.job_id = %(job_id)s)
               OR EXISTS (SELECT 1 FROM public.mydo_job AS j WHERE j.job_id = %(job_id)s))) AS duplicate_step_no
FROM alg.tidy_workflow AS w
LEFT JOIN alg.tidy_step AS s
    ON s.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
WHERE w.workflow_id = %(workflow_id)s
ORDER BY s.step_no
"""

def _receipt_from_probe(*, message: str, proven: str) -> str:
    """The receipt of a duplicate answered before the lock: inserted from the `probe` row only when
    `proven` holds for it (a CTE of FINISH_DUPLICATE_ANSWER and STATUS_DUPLICATE_ANSWER)."""
    return f"""    INSERT INTO recovery_callbackreceipt (
        received_at, endpoint, job_id, workflow_id, step_id, stage, job_status,
        wcs_event_id, http_status, outcome, message, payload, duration_ms,
        sequence, tray_code, location, mismatch, unknown_fields, unknown_fields_rest)
    SELECT now(), %(endpoint)s, %(job_id)s, %(workflow_id)s, %(step_id)s, %(stage)s, %(job_status)s,
           %(wcs_event_id)s, %(http_status)s, %(outcome)s, {message}, %(payload)s::jsonb, %(duration_ms)s,
           %(sequence)s, %(tray_code)s, %(location)s, %(mismatch)s::jsonb, %(unknown_fields)s::jsonb,
           %(unknown_fields_rest)s
    FROM probe AS p
    WHERE {proven}
    LIMIT 1
    RETURNING id"""


# The probe and, when it proves a duplicate, that duplicate's receipt in one statement: one
# round trip and one autocommit transaction for the whole answer (docs/architecture.md §8). The
# receipt is inserted only when the probe proves a duplicate of an ACTIVE or COMPLETED workflow
# (the answer the locked path would give); its message is %(message)s with the step number
# (format()'s %s); `recorded` says whether it was. Otherwise nothing is written and the callback
# takes the locked path.
FINISH_DUPLICATE_ANSWER = f"""
WITH probe AS (
{FINISH_DUPLICATE_PROBE.strip()}
), receipt AS (
{_receipt_from_probe(message="format(%(message)s, p.duplicate_step_no)",
                     proven="p.duplicate_step_no IS NOT NULL AND p.workflow_status IN ('ACTIVE', 'COMPLETED')")}
)
SELECT p.*, (SELECT count(*) FROM receipt) AS recorded
FROM probe AS p
ORDER BY p.step_no
"""

# A job status report already applied (the job's status is the reported one), answered and
# recorded without a lock or a transaction (docs/architecture.md §8): the workflow's state (the
# answer) and, when the workflow is ACTIVE, the step belongs to it and its active job already has
# %(job_status)s, that duplicate's receipt; `recorded` says whether it was written. Otherwise
# nothing is written and the report takes the locked path.
STATUS_DUPLICATE_ANSWER = f"""
WITH probe AS (
    SELECT w.status AS workflow_status,
           w.pause_reason,
           s.step_id,
           s.step_no,
           s.status AS step_status,
           w.status = 'ACTIVE'
           AND EXISTS (SELECT 1 FROM alg.tidy_step AS t
                       WHERE t.step_id = %(step_id)s AND t.workflow_id = %(workflow_id)s)
           AND EXISTS (SELECT 1 FROM public.mydo_job AS j
                       WHERE j.job_id = %(job_id)s AND j.status = %(job_status)s) AS duplicate
    FROM alg.tidy_workflow AS w
    LEFT JOIN alg.tidy_step AS s
        ON s.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
    WHERE w.workflow_id = %(workflow_id)s
), receipt AS (
{_receipt_from_probe(message="%(message)s", proven="p.duplicate")}
)
SELECT p.*, (SELECT count(*) FROM receipt) AS recorded
FROM probe AS p
ORDER BY p.step_no
"""

# Moves the stock, empties the source, fills the target, archives the job (docs/architecture.md §3). Raises
# (no_data_found / check_violation) for an unknown job or one not in the pre-move state.
COMPLETE_MOVE_JOB = """
SELECT alg.usp_complete_move_job(%(job_id)s)
"""

# Forward only: conditional on the status the caller read under the workflow row lock.
SET_JOB_STATUS = """
UPDATE public.mydo_job
SET status = %(status)s,
    updated_at = now()
WHERE job_id = %(job_id)s
  AND status = %(expected_status)s
"""

WORKFLOW_STATE = """
SELECT w.status AS workflow_status,
       w.pause_reason,
       s.step_id,
       s.step_no,
       s.status AS step_status
FROM alg.tidy_workflow AS w
LEFT JOIN alg.tidy_step AS s
    ON s.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
WHERE w.workflow_id = %(workflow_id)s
ORDER BY s.step_no
"""

# The console's receipt of a WCS callback (recovery_callbackreceipt, a Django model): written
# with the callback's own transaction on the hot path, so plain SQL rather than the ORM.
INSERT_CALLBACK_RECEIPT = """
INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, workflow_id, step_id, stage, job_status,
                                      wcs_event_id, http_status, outcome, message, payload, duration_ms,
                                      sequence, tray_code, location, mismatch, unknown_fields,
                                      unknown_fields_rest)
VALUES (now(), %(endpoint)s, %(job_id)s, %(workflow_id)s, %(step_id)s, %(stage)s, %(job_status)s,
        %(wcs_event_id)s, %(http_status)s, %(outcome)s, %(message)s, %(payload)s::jsonb, %(duration_ms)s,
        %(sequence)s, %(tray_code)s, %(location)s, %(mismatch)s::jsonb, %(unknown_fields)s::jsonb,
        %(unknown_fields_rest)s)
"""

# The highest sequence recorded for one job's reports, of either endpoint (callback_receipt_job_idx).
# A report that changed nothing because the server could not process it (UNAVAILABLE: the WCS
# retries it) or could not read it does not count.
JOB_HIGHEST_SEQUENCE = """
SELECT max(sequence)
FROM recovery_callbackreceipt
WHERE job_id = %(job_id)s                                   -- callback_receipt_job_idx
  AND sequence IS NOT NULL
  AND outcome NOT IN ('UNAVAILABLE', 'BAD_REQUEST')
"""

# The receipt and the workflow's resulting state (the callback's answer) in one round trip.
# The data-modifying CTE runs whether or not the SELECT reads it; the SELECT sees every earlier
# write of the transaction.
INSERT_CALLBACK_RECEIPT_RETURNING_STATE = f"""
WITH receipt AS (
{INSERT_CALLBACK_RECEIPT.strip()}
RETURNING id
)
{WORKFLOW_STATE.strip()}
"""

# A request refused at authentication (401) is counted, not kept: the newest UNAUTHORIZED
# receipt of the endpoint in the current minute is bumped, or one is started. At most a row per
# endpoint and minute (two at once only when two first requests of a minute race), whatever the
# flood. Index callback_receipt_time_idx finds the minute's rows.
COUNT_UNAUTHORIZED_CALLBACK = """
WITH bumped AS (
    UPDATE recovery_callbackreceipt
    SET request_count = request_count + 1,
        remote_addr = %(remote_addr)s
    WHERE id = (
        SELECT r.id
        FROM recovery_callbackreceipt AS r
        WHERE r.received_at >= date_trunc('minute', now())
          AND r.outcome = 'UNAUTHORIZED'
          AND r.endpoint = %(endpoint)s
        ORDER BY r.received_at DESC, r.id DESC
        LIMIT 1
    )
    RETURNING id
)
INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, stage, wcs_event_id, http_status, outcome,
                                      message, remote_addr, request_count)
SELECT now(), %(endpoint)s, '', '', '', 401, 'UNAUTHORIZED', %(message)s, %(remote_addr)s, 1
WHERE NOT EXISTS (SELECT 1 FROM bumped)
"""

INSERT_WORKFLOW = """
INSERT INTO alg.tidy_workflow (origin, status)
VALUES (%(origin)s, 'ACTIVE')
RETURNING workflow_id
"""

INSERT_STEP = """
INSERT INTO alg.tidy_step (workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id, status)
VALUES (%(workflow_id)s, %(step_no)s, %(tray_code)s, %(cargo_space_id)s, %(target_cargo_space_id)s, 'PENDING')
RETURNING step_id
"""

# One space cannot be promised twice (tidy_space_lock_cargo_space_id_key). Rows go in in
# sorted order, so two creations waiting on each other's uncommitted locks cannot deadlock;
# a space another workflow holds is simply not returned.
LOCK_SPACES = """
INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
SELECT %(workflow_id)s, space
FROM unnest(%(spaces)s::text[]) AS space
ORDER BY space
ON CONFLICT (cargo_space_id) DO NOTHING
RETURNING cargo_space_id
"""

SPACE_LOCK_HOLDERS = """
SELECT l.cargo_space_id,
       l.workflow_id
FROM alg.tidy_space_lock AS l
WHERE l.cargo_space_id = ANY (%(spaces)s::text[])
  AND l.workflow_id <> %(workflow_id)s
ORDER BY l.cargo_space_id
"""

# Tidy creation serialises on each tray it moves: a transaction-level advisory lock per tray
# (two-key form, so it never meets the recovery lease's one-key lock), taken in key order so two
# creations sharing trays wait instead of deadlocking. The keys are hashes: a collision only
# makes two creations wait for each other.
TRAY_LOCK_KEYS = """
SELECT DISTINCT hashtext(tray) AS lock_key
FROM unnest(%(trays)s::text[]) AS tray
ORDER BY lock_key
"""

LOCK_TRAY_KEY = """
SELECT pg_advisory_xact_lock(%(namespace)s, %(lock_key)s)
"""

# What already holds any of these trays: an active job of any kind (in_or_out), or a tidy
# workflow that is ACTIVE or PAUSED_RECOVERY with a step for the tray. mydo_job holds only
# active jobs (finished ones are archived), so it stays small; open workflows are few and found
# through tidy_workflow_status_idx before their steps.
TRAY_HOLDERS = """
SELECT j.tray_code,
       j.job_id,
       j.in_or_out,
       j.status,
       NULL::bigint AS workflow_id,
       NULL::text AS workflow_status
FROM public.mydo_job AS j
WHERE j.tray_code = ANY (%(trays)s::text[])
UNION ALL
SELECT DISTINCT s.tray_code,
       NULL::text,
       NULL::integer,
       NULL::integer,
       w.workflow_id,
       w.status
FROM alg.tidy_workflow AS w
JOIN alg.tidy_step AS s
    ON s.workflow_id = w.workflow_id                    -- tidy_step_workflow_step_no_key
WHERE w.status IN ('ACTIVE', 'PAUSED_RECOVERY')         -- tidy_workflow_status_idx
  AND s.tray_code = ANY (%(trays)s::text[])
ORDER BY 1, 2, 5
"""

CARGO_SPACES = """
SELECT cargo_space_id,
       tray_code
FROM public.bas_cargo_space
WHERE cargo_space_id = ANY (%(spaces)s::text[])
"""

# Cordons (recovery/engine/cordons.py, docs/architecture.md §18). Parameters: %(spaces)s, the space
# codes of a creation's moves, and %(aisles)s, their aisles. A cordon is in force until it is
# lifted (a recovery_cordonlift row) or its end passes; now() is the creation's transaction time.
# Relies on recovery_cordon_place_idx (scope, place).
CORDONS_IN_FORCE = """
SELECT c.id,
       c.scope,
       c.place,
       c.reason,
       c.created_by,
       c.created_at,
       c.ends_at
FROM recovery_cordon AS c
WHERE ((c.scope = 'SPACE' AND c.place = ANY (%(spaces)s::text[]))
       OR (c.scope = 'AISLE' AND c.place = ANY (%(aisles)s::text[])))
  AND (c.ends_at IS NULL OR c.ends_at > now())
  AND NOT EXISTS (SELECT 1 FROM recovery_cordonlift AS l WHERE l.cordon_id = c.id)
ORDER BY c.id
"""

# Every space code, for checking that an aisle to cordon has spaces (the pattern splits codes in
# Python: PostgreSQL's regular expressions have no named groups).
ALL_CARGO_SPACE_CODES = """
SELECT cargo_space_id
FROM public.bas_cargo_space
"""

TRAY_STOCK_SUMMARY = """
SELECT b.tray_code,
       count(*) AS stock_rows,
       array_agg(DISTINCT coalesce(b.cargo_space_id, '(none)') ORDER BY coalesce(b.cargo_space_id, '(none)'))
           AS stock_locations
FROM public.bas_stock AS b
WHERE b.tray_code = ANY (%(trays)s::text[])             -- bas_stock_tray_code_idx
GROUP BY b.tray_code
"""


# --- unknown callback fields: the site's labels and their counts (recovery/engine/callback_fields.py) ------

# Serializes the processes registering new labels (a few times in a site's life, until the 50 slots
# are taken): each sees the others' names and free slots. SHARE ROW EXCLUSIVE conflicts with itself,
# not with readers.
LOCK_FIELD_LABELS = """
LOCK TABLE recovery_callbackfieldlabel IN SHARE ROW EXCLUSIVE MODE
"""

# Parameters: %(names)s (distinct names, in the order the body had them), %(max_names)s. Each name
# not yet a label takes the next free slot while there is one (the slots' check constraint is the
# cap); returns every label, those added included. Under LOCK_FIELD_LABELS no two registrations
# pick one slot; ON CONFLICT is the guard if one ever did.
REGISTER_FIELD_LABELS = """
WITH wanted AS (
    SELECT w.name,
           row_number() OVER (ORDER BY w.n) AS k
    FROM unnest(%(names)s::text[]) WITH ORDINALITY AS w(name, n)
    WHERE NOT EXISTS (SELECT 1
                      FROM recovery_callbackfieldlabel AS l
                      WHERE l.name = w.name)                -- recovery_callbackfieldlabel_name_key
),
free AS (
    SELECT s.slot,
           row_number() OVER (ORDER BY s.slot) AS k
    FROM generate_series(1, %(max_names)s) AS s(slot)
    WHERE NOT EXISTS (SELECT 1
                      FROM recovery_callbackfieldlabel AS l
                      WHERE l.slot = s.slot)                -- recovery_callbackfieldlabel_pkey
),
added AS (
    INSERT INTO recovery_callbackfieldlabel (slot, name)
    SELECT f.slot, w.name
    FROM wanted AS w
    JOIN free AS f
      ON f.k = w.k
    ON CONFLICT DO NOTHING
    RETURNING name
)
SELECT name
FROM recovery_callbackfieldlabel
UNION ALL
SELECT name
FROM added
"""

# Parameters: %(endpoint)s, %(fields)s and %(counts)s (one count per label), %(shards)s. Adds to
# the session's shard of each label (callback_field_total_key), the rows locked in label order so
# two callbacks never deadlock; autocommit, so a row is held for this statement only.
COUNT_UNKNOWN_FIELDS = """
INSERT INTO recovery_callbackfieldtotal (endpoint, field, shard, total)
SELECT %(endpoint)s, c.field, pg_backend_pid() %% %(shards)s, c.n
FROM unnest(%(fields)s::text[], %(counts)s::bigint[]) AS c(field, n)
ORDER BY c.field
ON CONFLICT (endpoint, field, shard)                        -- callback_field_total_key
DO UPDATE SET total = recovery_callbackfieldtotal.total + EXCLUDED.total
"""


# --- operator repairs (recovery/engine/transaction/repair.py) ------------------------------------

# All steps of a workflow, for the repair context and the row snapshot.
WORKFLOW_STEPS = """
SELECT step_id, step_no, status, tray_code, cargo_space_id, target_cargo_space_id
FROM alg.tidy_step
WHERE workflow_id = %(workflow_id)s                       -- tidy_step_workflow_step_no_key
ORDER BY step_no
"""

# Every active TDY-<wid>-* job (prefix range on mydo_job_job_id_pattern_idx, as evidence.sql).
WORKFLOW_ACTIVE_JOBS = """
SELECT job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id
FROM public.mydo_job
WHERE job_id ~>=~ %(prefix)s
  AND job_id ~<~ %(prefix_end)s
ORDER BY job_id
"""

# Every stock row of one tray and where it is booked.
TRAY_STOCK_ROWS = """
SELECT stock_id, cargo_space_id
FROM public.bas_stock
WHERE tray_code = %(tray_code)s                           -- bas_stock_tray_code_idx
ORDER BY stock_id
"""

# Spaces that record the tray (bas_cargo_space_tray_code_idx) plus the step's two spaces.
SPACES_OF_MOVE = """
SELECT cargo_space_id, tray_code
FROM public.bas_cargo_space
WHERE cargo_space_id = ANY (%(spaces)s::text[])
   OR tray_code = %(tray_code)s
ORDER BY cargo_space_id
"""

FINISH_ROWS_OF_JOB = """
SELECT count(*)
FROM public.mydo_job_finish
WHERE job_id = %(job_id)s                                 -- mydo_job_finish_job_id_idx
"""

RESUME_WORKFLOW = """
UPDATE alg.tidy_workflow
SET status = 'ACTIVE',
    pause_reason = NULL,
    updated_at = now()
WHERE workflow_id = %(workflow_id)s
  AND status = 'PAUSED_RECOVERY'
"""

RESUME_STEP = """
UPDATE alg.tidy_step
SET status = %(new_status)s,
    pause_reason = NULL
WHERE step_id = %(step_id)s
  AND workflow_id = %(workflow_id)s
  AND status IS NOT DISTINCT FROM %(expected_status)s
"""

# Book every stock row of the tray at the stated space (rows already there are untouched).
BOOK_TRAY_STOCK_AT = """
UPDATE public.bas_stock
SET cargo_space_id = %(cargo_space_id)s
WHERE tray_code = %(tray_code)s
  AND cargo_space_id IS DISTINCT FROM %(cargo_space_id)s
"""

# Conditional on what the space recorded when it was read (never overwrites another tray).
SET_SPACE_TRAY = """
UPDATE public.bas_cargo_space
SET tray_code = %(tray_code)s
WHERE cargo_space_id = %(cargo_space_id)s
  AND tray_code IS NOT DISTINCT FROM %(expected_tray_code)s
"""

CLEAR_TRAY_ELSEWHERE = """
UPDATE public.bas_cargo_space
SET tray_code = NULL
WHERE tray_code = %(tray_code)s
  AND cargo_space_id <> %(cargo_space_id)s
"""

RESET_JOB_STATUS = """
UPDATE public.mydo_job
SET status = 1,
    updated_at = now()
WHERE job_id = %(job_id)s
  AND status IS NOT DISTINCT FROM %(expected_status)s
"""

# Archive one active job: copy it into mydo_job_finish and take it out of mydo_job, in one
# statement. archive_status NULL keeps the job's own status.
ARCHIVE_JOB = """
WITH archived AS (
    DELETE FROM public.mydo_job
    WHERE job_id = %(job_id)s
      AND status IS NOT DISTINCT FROM %(expected_status)s
    RETURNING *
)
INSERT INTO public.mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id,
                             target_cargo_space_id, created_at, updated_at, finished_at)
SELECT job_id, in_or_out, coalesce(%(archive_status)s::integer, status), tray_code, cargo_space_id,
       target_cargo_space_id, created_at, now(), now()
FROM archived
RETURNING finish_id
"""

CANCEL_OPEN_STEPS = """
UPDATE alg.tidy_step
SET status = 'CANCELLED'
WHERE workflow_id = %(workflow_id)s
  AND status IS DISTINCT FROM 'COMPLETED'
  AND status IS DISTINCT FROM 'CANCELLED'
"""

CANCEL_WORKFLOW = """
UPDATE alg.tidy_workflow
SET status = 'CANCELLED',
    updated_at = now()
WHERE workflow_id = %(workflow_id)s
  AND status = 'PAUSED_RECOVERY'
"""

# Every space that records one of the trays (bas_cargo_space_tray_code_idx).
SPACES_RECORDING_TRAYS = """
SELECT cargo_space_id
FROM public.bas_cargo_space
WHERE tray_code = ANY (%(trays)s::text[])
"""

# The rows an operator action on one workflow can touch, by table: (key column, statement).
# A preview and an audit row show them before and after.
REPAIR_SNAPSHOT = {
    "alg.tidy_workflow": ("workflow_id", "SELECT * FROM alg.tidy_workflow WHERE workflow_id = %(workflow_id)s"),
    "alg.tidy_step": ("step_id", "SELECT * FROM alg.tidy_step WHERE workflow_id = %(workflow_id)s"),
    "alg.tidy_space_lock": ("lock_id", "SELECT * FROM alg.tidy_space_lock WHERE workflow_id = %(workflow_id)s"),
    "alg.tidy_callback_event": ("event_id",
                                "SELECT * FROM alg.tidy_callback_event WHERE workflow_id = %(workflow_id)s"),
    "mydo_job": ("job_id", "SELECT * FROM public.mydo_job WHERE job_id ~>=~ %(prefix)s AND job_id ~<~ %(prefix_end)s"),
    "mydo_job_finish": ("finish_id", "SELECT * FROM public.mydo_job_finish "
                                     "WHERE job_id ~>=~ %(prefix)s AND job_id ~<~ %(prefix_end)s"),
    "bas_stock": ("stock_id", "SELECT * FROM public.bas_stock WHERE tray_code = ANY (%(trays)s::text[])"),
    "bas_cargo_space": ("cargo_space_id",
                        "SELECT * FROM public.bas_cargo_space WHERE cargo_space_id = ANY (%(spaces)s::text[])"),
}


# --- the WMS schema's shape (recovery/engine/schema.py) and its tables -----------------------------------

TABLE_COLUMNS = """
SELECT column_name,
       data_type
FROM information_schema.columns
WHERE table_schema = %(schema)s
  AND table_name = %(name)s
"""

PROCEDURE_EXISTS = "SELECT to_regprocedure(%(sig)s) IS NOT NULL"


# The WMS tables, children first: what the demo empties, the replay backs up and restores. These
# are their labels (as pages, audit rows and the replay show them); SQL names them with their
# schema, `qualified(label)`.
WMS_TABLES = (
    "alg.tidy_callback_event", "alg.tidy_space_lock", "alg.tidy_step", "alg.tidy_workflow",
    "mydo_job", "mydo_job_finish", "bas_stock", "bas_cargo_space",
)


def qualified(label: str) -> str:
    """A WMS table as SQL names it, always with its schema (design §16): the console's own schema
    comes first in the search_path, and a WMS table is never looked up through it."""
    return label if "." in label else f"public.{label}"
