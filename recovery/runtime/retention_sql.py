"""Named SQL of the journal retention task (recovery/runtime/retention.py).

Folding counts journal rows into recovery_journaltotal before any of them can be deleted, so the
metric counters built on them never go down (docs/operations.md "Monitoring"). Every
statement is bounded by the folded_before watermark or a LIMIT, and each relies on a time index
named beside it.
"""

ENSURE_FOLD_ROW = """
INSERT INTO recovery_journalfold (journal, folded_before)
VALUES (%(journal)s, '1970-01-01T00:00:00Z')  -- before any journal row
ON CONFLICT (journal) DO NOTHING
"""

# Serializes two retention runs: the second waits, then reads the first one's watermark.
LOCK_FOLD_ROW = """
SELECT folded_before
FROM recovery_journalfold
WHERE journal = %(journal)s
FOR UPDATE
"""

# Parameters: %(since)s (the locked watermark), %(until)s (the new one). One statement per
# journal: counts rows in [since, until) per label and adds them to the totals.
FOLD_CALLBACKS = """
INSERT INTO recovery_journaltotal (journal, label1, label2, total)
SELECT 'callbacks',
       endpoint,
       outcome,
       sum(request_count)                                   -- a 401 row stands for a minute's requests
FROM recovery_callbackreceipt
WHERE received_at >= %(since)s                              -- callback_receipt_time_idx
  AND received_at < %(until)s
GROUP BY endpoint, outcome
ON CONFLICT (journal, label1, label2)
DO UPDATE SET total = recovery_journaltotal.total + EXCLUDED.total
"""

# The callbacks' durations (tidy_callback_duration_seconds), in the callbacks' fold: per endpoint,
# the count of each bucket (label2: its upper bound, the smallest of %(bounds)s the duration fits
# in; '+Inf' beyond them; not cumulative) and the sum in microseconds (label2 '_sum_us').
FOLD_CALLBACK_DURATIONS = """
INSERT INTO recovery_journaltotal (journal, label1, label2, total)
SELECT 'callback_duration',
       endpoint,
       bucket,
       sum(n)
FROM (
    SELECT r.endpoint,
           coalesce((SELECT min(b) FROM unnest(%(bounds)s::float8[]) AS b
                     WHERE r.duration_ms / 1000.0 <= b)::text, '+Inf') AS bucket,
           count(*) AS n
    FROM recovery_callbackreceipt AS r
    WHERE r.received_at >= %(since)s                        -- callback_receipt_time_idx
      AND r.received_at < %(until)s
      AND r.duration_ms IS NOT NULL
    GROUP BY 1, 2
    UNION ALL
    SELECT r.endpoint, '_sum_us', round(sum(r.duration_ms) * 1000)::bigint
    FROM recovery_callbackreceipt AS r
    WHERE r.received_at >= %(since)s
      AND r.received_at < %(until)s
      AND r.duration_ms IS NOT NULL
    GROUP BY r.endpoint
) AS counted
GROUP BY endpoint, bucket
ON CONFLICT (journal, label1, label2)
DO UPDATE SET total = recovery_journaltotal.total + EXCLUDED.total
"""

# Observed decisions (observe mode) are folded under their own label, OBSERVED: the counters of
# applied decisions never count them.
FOLD_DECISIONS = """
INSERT INTO recovery_journaltotal (journal, label1, label2, total)
SELECT 'decisions',
       action,
       CASE WHEN observed THEN 'OBSERVED' ELSE source END,
       count(*)
FROM recovery_recoverydecision
WHERE decided_at >= %(since)s                               -- recovery_decision_time_idx
  AND decided_at < %(until)s
GROUP BY action, CASE WHEN observed THEN 'OBSERVED' ELSE source END
ON CONFLICT (journal, label1, label2)
DO UPDATE SET total = recovery_journaltotal.total + EXCLUDED.total
"""

# The outbound journal holds every request the project makes; the communication metric
# (tidy_outbound_requests_total) counts two kinds of it, by target: the WCS vehicle snapshot
# (purpose vehicle-snapshot, recovery.engine.wcs) and the notification webhook (purpose
# notification-webhook, console.notifications.delivery). The outcome is the transport's:
# `ok` a 2xx answer read whole, `http_error` any other answer, `no_answer` none at all
# (refused, unreachable, timed out). The metric and the fold share these fragments, so a
# folded row is counted under the same labels as a live one.
OUTBOUND_TARGET = """CASE purpose
           WHEN 'vehicle-snapshot' THEN 'wcs_snapshot'
           WHEN 'notification-webhook' THEN 'webhook'
       END"""
OUTBOUND_OUTCOME = """CASE
           WHEN status IS NULL THEN 'no_answer'
           WHEN status BETWEEN 200 AND 299 AND error = '' THEN 'ok'
           ELSE 'http_error'
       END"""
OUTBOUND_COUNTED = "purpose IN ('vehicle-snapshot', 'notification-webhook')"

FOLD_OUTBOUND = f"""
INSERT INTO recovery_journaltotal (journal, label1, label2, total)
SELECT 'outbound',
       {OUTBOUND_TARGET},
       {OUTBOUND_OUTCOME},
       count(*)
FROM recovery_outboundhttprequest
WHERE started_at >= %(since)s                               -- outbound_http_time_idx
  AND started_at < %(until)s
  AND {OUTBOUND_COUNTED}
GROUP BY 2, 3
ON CONFLICT (journal, label1, label2)
DO UPDATE SET total = recovery_journaltotal.total + EXCLUDED.total
"""

MOVE_FOLD_MARK = """
UPDATE recovery_journalfold
SET folded_before = %(until)s
WHERE journal = %(journal)s
"""

# Parameters: %(before)s, %(batch)s. Oldest first, one small batch per statement (and per
# transaction), so no statement holds many row locks or runs long.
DELETE_DECISIONS = """
DELETE FROM recovery_recoverydecision
WHERE id IN (SELECT id
             FROM recovery_recoverydecision
             WHERE decided_at < %(before)s                  -- recovery_decision_time_idx
             ORDER BY decided_at
             LIMIT %(batch)s)
"""

# After the decisions. A cycle still referenced by a decision (one made a moment after the
# cutoff) stays until a later run: the foreign key is checked in the database, while Django's
# SET_NULL exists only in Python.
DELETE_CYCLES = """
DELETE FROM recovery_recoverycycle
WHERE id IN (SELECT c.id
             FROM recovery_recoverycycle AS c
             WHERE c.started_at < %(before)s                -- recovery_cycle_started_idx
               AND NOT EXISTS (SELECT 1
                               FROM recovery_recoverydecision AS d
                               WHERE d.cycle_id = c.id)     -- recovery_recoverydecision_cycle_id
             ORDER BY c.started_at
             LIMIT %(batch)s)
"""

DELETE_CALLBACK_RECEIPTS = """
DELETE FROM recovery_callbackreceipt
WHERE id IN (SELECT id
             FROM recovery_callbackreceipt
             WHERE received_at < %(before)s                 -- callback_receipt_time_idx
             ORDER BY received_at
             LIMIT %(batch)s)
"""

DELETE_OUTBOUND_REQUESTS = """
DELETE FROM recovery_outboundhttprequest
WHERE id IN (SELECT id
             FROM recovery_outboundhttprequest
             WHERE started_at < %(before)s                  -- outbound_http_time_idx
             ORDER BY started_at
             LIMIT %(batch)s)
"""
