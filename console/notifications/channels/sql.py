"""Named SQL of the chat channels (console.notifications.channels.send)."""

# The channel's state row, made on its first message; then locked by the sender (FOR UPDATE) while
# it counts the channel's recent messages and sends: one sender per channel at a time, on every
# node. Parameters: %(name)s. (console_channelstate_name_key)
ENSURE_CHANNEL_STATE = """
INSERT INTO console_channelstate (name, last_failure_code, last_failure_error)
VALUES (%(name)s, '', '')
ON CONFLICT (name) DO NOTHING
"""

LOCK_CHANNEL_STATE = """
SELECT id
FROM console_channelstate
WHERE name = %(name)s                                        -- console_channelstate_name_key
FOR UPDATE
"""

# The times of the channel's last %(count)s messages within the window, newest first: the oldest
# of them must leave the window before one more may go. (channel_send_recent_idx (channel, at))
RECENT_SENDS = """
SELECT at
FROM console_channelsend
WHERE channel = %(name)s                                     -- channel_send_recent_idx
  AND at > %(since)s
ORDER BY at DESC
LIMIT %(count)s
"""

# One message the vendor answered, at the time of its answer. (channel_send_recent_idx)
RECORD_SEND = """
INSERT INTO console_channelsend (channel, at)
VALUES (%(name)s, %(at)s)
"""

# What no limit counts any more (older than the longest window). (channel_send_recent_idx)
FORGET_SENDS = """
DELETE FROM console_channelsend
WHERE channel = %(name)s                                     -- channel_send_recent_idx
  AND at < %(before)s
"""

# Is an older message of this channel (a lower id) due and still waiting? It goes first: a burst
# leaves in the order it was written, whichever process holds which row, even when the rate limit
# moved their due times. (A failed one waiting for its retry is not due and holds nothing back.)
# (notification_delivery_due_idx: the pending rows only)
EARLIER_DUE = """
SELECT EXISTS (
    SELECT 1
    FROM console_notificationdelivery AS d
    JOIN console_notification AS n
      ON n.id = d.notification_id
    WHERE d.state = 'pending'                                -- notification_delivery_due_idx
      AND d.next_attempt_at <= %(now)s
      AND d.channel = 'chat'
      AND d.channel_name = %(name)s
      AND d.id < %(id)s
      AND n.silenced_by_id IS NULL
)
"""
