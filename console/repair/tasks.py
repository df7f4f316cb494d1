"""The repair tasks the qcluster runs (enqueued by console.repair.batch)."""

from console.repair.batch import batch_run


def batch_recheck_task(batch_id: int) -> str:
    """Run one batch re-check (a plain function: tests call it directly)."""
    batch = batch_run(batch_id=batch_id)
    state = f"finished {batch.finished_at:%H:%M:%S}" if batch.finished_at else "running in another delivery"
    return f"batch re-check {batch.pk}: {batch.workflow_count} workflow(s), {state}"
