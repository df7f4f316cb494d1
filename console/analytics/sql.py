"""Named SQL of the analytics page (/analytics/, docs/architecture.md §16): the episodes of time
to acknowledge and time to resolve, their percentiles, weekly trend and the spaces they count
under (console.analytics.selectors)."""


# The page's reads plan above jit_above_cost (a subplan per episode) and run for tens of ms:
# compiling them costs more than it saves (stock PostgreSQL 15, jit = on: 0.4 s for the 12-week
# trend on a hundred days of history). This transaction only.
ANALYTICS_SETTINGS = """
SELECT set_config('jit', 'off', true)
"""


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
    -- One primary-key probe per pause (LIMIT 1 keeps it a probe: as a join, the planner hashes
    -- every workflow of the history, a sequential scan of the WMS's largest table).
    CROSS JOIN LATERAL (
        SELECT w.status, w.completed_at, w.updated_at
        FROM alg.tidy_workflow AS w
        WHERE w.workflow_id = d.workflow_id                    -- tidy_workflow_pkey
        LIMIT 1
    ) AS w
    LEFT JOIN LATERAL (
        SELECT s.cargo_space_id
        FROM alg.tidy_step AS s
        WHERE s.step_id = d.step_id                            -- tidy_step_pkey, a probe as above
        LIMIT 1
    ) AS st ON true
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
      AND d.decided_at >= %(since)s                            -- recovery_decision_pause_idx: the pauses only
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
    LEFT JOIN LATERAL (
        SELECT k.at
        FROM console_notificationacknowledgement AS k
        WHERE k.notification_id = n.id                         -- its unique notification_id, a probe
        LIMIT 1
    ) AS a ON true
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
# the applied pauses since then, and every step of a workflow notified since then. Each step is
# probed by its key (LIMIT 1 / OFFSET 0 keep the subqueries probes, never a hash of every step).
ANALYTICS_SPACES = """
SELECT st.cargo_space_id
FROM recovery_recoverydecision AS d
CROSS JOIN LATERAL (
    SELECT s.cargo_space_id
    FROM alg.tidy_step AS s
    WHERE s.step_id = d.step_id                                -- tidy_step_pkey
    LIMIT 1
) AS st
WHERE d.action = 'PAUSE'
  AND NOT d.observed
  AND d.decided_at >= %(since)s                                -- recovery_decision_pause_idx
UNION
SELECT st.cargo_space_id
FROM console_notification AS n
CROSS JOIN LATERAL (
    SELECT s.cargo_space_id
    FROM alg.tidy_step AS s
    WHERE s.workflow_id = n.workflow_id                        -- tidy_step_workflow_step_no_key
    OFFSET 0
) AS st
WHERE n.opened_at >= %(since)s                                -- notification_opened_idx
"""
