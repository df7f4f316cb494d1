"""Notifications: the periodic evaluator opens and resolves them, a separate delivery worker
sends them by e-mail and webhook, people acknowledge them in the console (docs/user-guide.md: "Notifications").

The outbox shape: the evaluator writes a Notification and its pending NotificationDelivery rows
in one transaction; `deliver_pending` sends them later, outside any request or recovery
transaction, recording every attempt and retrying with backoff until it succeeds.

Where things are (docs/architecture.md §12): events.py declares each event once (its spec and
the reader of its causes); groups.py merges paused, paused-too-long and stalled causes per reason
and aisle; silences.py says which silence holds a notification back; evaluate.py and delivery.py
are the two halves of the outbox; selectors.py, services.py, forms.py and views.py the pages.
"""
