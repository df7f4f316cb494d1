"""Running one named callback function the way the frame does: the workflow row locked, the job's
target read, inside one transaction."""

from django.db import transaction

from recovery.engine import transaction as tx
from recovery.engine.callbacks import read_callback_target, split_job_id


def under_lock(fn, request):
    """Call fn(request, ...) with the workflow row locked, as process_callback hands over to it."""
    workflow_id, step_id = split_job_id(request.job_id)
    with transaction.atomic():
        status = tx.lock_workflow(workflow_id, skip_locked=False)
        target = read_callback_target(workflow_id, step_id, request.job_id)
        return fn(request, workflow_id=workflow_id, step_id=step_id, status=status, target=target)
