"""Named SQL of the operations pages: the /metrics scrape (console.operations.metrics) and observe
mode (console.operations.observe). Read at every scrape, so each is served by an index and
touches few rows. The readiness probe and the flow page read console.readers.sql."""

from recovery.runtime import retention_sql

# --- metrics (console/operations/metrics.py) -----------------------------------------------
# A scrape that meets a locked table or a slow server is bounded by CONSOLE_STATEMENT_TIMEOUT_MS,
# set for the request's transaction (console/database/timeouts.py).


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


# The /metrics counters: folded totals plus the journal rows not folded yet. Each journal's
# watermark (the moment before which its rows are already in its folded totals: retention folds,
# then deletes; recovery/runtime/retention.py) is read first, by itself, and each counter gets it
# as %(since)s: a bound the planner knows when it plans the statement, so it reads the rows from
# then on through the time index whatever the history. Given as a subquery instead, the bound is
# unknown at plan time and PostgreSQL scans every row of the journal (docs/operations.md, "Cost
# and history").
JOURNAL_WATERMARKS = """
SELECT journal,
       folded_before
FROM recovery_journalfold                                   -- one row per journal, three at most
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
FROM public.mydo_job
WHERE in_or_out = 28
"""


# Counters: the totals folded by recovery.runtime.retention plus the rows newer than its watermark
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
    -- A row may stand for several requests (401s: one row per endpoint and minute).
    SELECT endpoint, outcome, sum(request_count)
    FROM recovery_callbackreceipt
    WHERE received_at >= %(since)s                          -- callback_receipt_time_idx
    GROUP BY endpoint, outcome
) AS counted
GROUP BY endpoint, outcome
"""


# tidy_callback_unknown_fields_total: the counts taken when the callbacks were read (at most 51
# labels per endpoint, a few shards each: recovery/engine/callback_fields.py), never the receipts.
CALLBACK_UNKNOWN_FIELD_COUNTS = """
SELECT endpoint,
       field,
       sum(total)::bigint AS total
FROM recovery_callbackfieldtotal                            -- a few hundred rows at most
GROUP BY endpoint, field
"""


# tidy_callback_duration_seconds: per endpoint, each bucket's own count (its upper bound, '+Inf'
# beyond the last; not cumulative) and '_sum_us', the sum in microseconds; the folded totals
# plus the receipts not folded yet (as recovery.runtime.retention_sql.FOLD_CALLBACK_DURATIONS counts them).
CALLBACK_DURATION_BUCKETS = """
WITH unfolded AS MATERIALIZED (
    SELECT endpoint, duration_ms
    FROM recovery_callbackreceipt
    WHERE received_at >= %(since)s                          -- callback_receipt_time_idx
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
      AND NOT observed
      AND decided_at >= %(since)s                           -- recovery_decision_time_idx
    GROUP BY action
) AS counted
GROUP BY action
"""


# tidy_notification_deliveries_total: every recorded attempt (console.notifications.delivery
# writes one per try, sent or failed). Attempts are never deleted, and they are few (one per
# message and retry), so they are counted whole; the delivery's channel through its primary key
# (console_notificationdelivery_pkey). A chat channel's attempts are labelled by the channel's
# name (NOTIFY_CHANNELS_FILE), the others by their channel (email, webhook, log).
NOTIFICATION_DELIVERY_COUNTS = """
SELECT COALESCE(NULLIF(d.channel_name, ''), d.channel) AS channel,
       a.ok,
       count(*) AS total
FROM console_notificationdeliveryattempt AS a
JOIN console_notificationdelivery AS d
  ON d.id = a.delivery_id
GROUP BY 1, a.ok
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


# tidy_outbound_requests_total{target, outcome}: the totals folded by recovery.runtime.retention plus the
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
    WHERE started_at >= %(since)s                           -- outbound_http_time_idx
      AND {retention_sql.OUTBOUND_COUNTED}
    GROUP BY 1, 2
) AS counted
GROUP BY target, outcome
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
LEFT JOIN LATERAL (
    SELECT w.status
    FROM alg.tidy_workflow AS w
    WHERE w.workflow_id = d.workflow_id                         -- tidy_workflow_pkey: a probe (LIMIT 1), never
    LIMIT 1                                                     -- a hash of every workflow of the history
) AS w ON true
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


# Log lines dropped because a process's log output did not keep up: each process's running
# total, one row per process (recovery.logs.logdrops), summed.
LOG_RECORDS_DROPPED = """
SELECT coalesce(sum(dropped), 0)
  FROM recovery_logdrops
"""
