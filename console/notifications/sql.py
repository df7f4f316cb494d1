"""Named SQL of the notifications (console.notifications): the evaluator's lock and the paused
workflows its events read."""


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


# The notifications list's count per state, capped: each state's count reads at most %(cap)s
# entries (a LIMITed subquery), so the list costs the same on a long history; the page shows
# "1,000+" beyond the cap. %(event)s: one event, or '' for every event (the planner folds the
# comparison of two constants away, so each form reads its own index). The states are those of
# Notification.State, each written out so the planner sees how rare it is.
# Parameters: %(event)s, %(cap)s (STATE_COUNT_CAP + 1).
NOTIFICATION_STATE_COUNTS = """
SELECT (SELECT count(*)
        FROM (SELECT 1
              FROM console_notification AS n
              WHERE n.state = 'open'                      -- notification_state_idx (state, opened_at DESC)
                AND (%(event)s = '' OR n.event = %(event)s) -- notification_event_state_idx (event, state)
              LIMIT %(cap)s) AS capped) AS open,
       (SELECT count(*)
        FROM (SELECT 1
              FROM console_notification AS n
              WHERE n.state = 'acknowledged'              -- notification_state_idx (state, opened_at DESC)
                AND (%(event)s = '' OR n.event = %(event)s) -- notification_event_state_idx (event, state)
              LIMIT %(cap)s) AS capped) AS acknowledged,
       (SELECT count(*)
        FROM (SELECT 1
              FROM console_notification AS n
              WHERE n.state = 'resolved'                  -- notification_state_idx (state, opened_at DESC)
                AND (%(event)s = '' OR n.event = %(event)s) -- notification_event_state_idx (event, state)
              LIMIT %(cap)s) AS capped) AS resolved
"""
