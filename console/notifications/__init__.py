"""Notifications: the periodic evaluator opens and resolves them, a separate delivery worker
sends them by e-mail and webhook, people acknowledge them in the console (README: "Notifications").

The outbox shape: the evaluator writes a Notification and its pending NotificationDelivery rows
in one transaction; `deliver_pending` sends them later, outside any request or recovery
transaction, recording every attempt and retrying with backoff until it succeeds.
"""
