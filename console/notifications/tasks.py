"""The scheduled notification task (schedule `tidy-notifications`, every minute, in the qcluster)."""

from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications


def run_notifications() -> dict:
    """Evaluate, then deliver. Idempotent: an overlapping run skips the evaluation (advisory
    lock) and never sends a delivery another run holds (row locks)."""
    evaluation = evaluate_notifications()
    delivery = deliver_pending()
    return {"skipped": evaluation.skipped, "opened": len(evaluation.opened), "resolved": len(evaluation.resolved),
            "escalated": len(evaluation.escalated), "sent": delivery.sent, "failed": delivery.failed}
