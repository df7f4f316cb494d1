"""Batch re-check: one reason for many paused workflows, each re-checked through the apply-once
frame in its own transaction, one audit row each, all linked to one RepairBatch.

The request only validates, records the batch (with the fingerprint previewed for each
workflow) and enqueues `batch_run` for the qcluster, in one transaction: the queue row commits
with the batch or not at all. The task re-checks the workflows one by one; each outcome commits
as it finishes, so the batch page shows progress. django-q2 may deliver the task twice (or run
it again after a worker died): every item has its own idempotency key, so an item already
re-checked returns its first result and is never re-checked again.
"""

import contextlib
import logging

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django_q.tasks import async_task

from console.models import RepairAudit, RepairBatch
from console.repair import frame
from console.repair import sql as repair_sql
from console.repair import texts as t
from console.repair.actions import repair_apply
from console.repair.registry import RepairAction, check_reason_code, permitted
from console.repair.rules import Refusal, RepairRefused, RepairRequest, check_text
from console.repair.selectors import BATCH_LIMIT
from recovery.messages import message

log = logging.getLogger(__name__)

BATCH_TASK = "console.repair.tasks.batch_recheck_task"


def check_batch_permission(user, *, stage: str) -> None:
    """Refuses, audited, a user whose role may not re-check."""
    if not permitted(user, RepairAction.RECHECK):
        refused = RepairRefused(Refusal.FORBIDDEN, t.RECHECK_FORBIDDEN)
        frame.record_refusal(refused, user=user, request=RepairRequest(RepairAction.RECHECK, 0), stage=stage)
        raise refused


def item_key(batch: RepairBatch, workflow_id: int) -> str:
    """The idempotency key of one workflow's re-check in the batch."""
    return f"{batch.idempotency_key[:40]}-{workflow_id}"


def batch_recheck(*, user, fingerprints: dict[int, str], reason_code: str, reason_text: str, selection: dict,
                  idempotency_key: str) -> RepairBatch:
    """Record a batch re-check of each selected workflow (workflow id -> previewed fingerprint)
    and enqueue its run in the qcluster. A double submit returns the first batch."""
    key = frame.submission_key(idempotency_key)
    probe = RepairRequest(RepairAction.RECHECK, 0, reason_code, reason_text)
    try:
        if first := frame.first_result(key, user, model=RepairBatch, owner="created_by_id"):
            return first
        if not permitted(user, RepairAction.RECHECK):
            raise RepairRefused(Refusal.FORBIDDEN, t.RECHECK_FORBIDDEN)
        if not fingerprints:
            raise RepairRefused(Refusal.BAD_REQUEST, t.SELECT_ONE)
        if len(fingerprints) > BATCH_LIMIT:
            raise RepairRefused(Refusal.BAD_REQUEST, message(t.BATCH_TOO_BIG, limit=BATCH_LIMIT))
        # Re-check codes do not depend on the pause reason, so one reason fits the whole batch.
        check_reason_code(probe, None)
        check_text(probe)
        try:
            with transaction.atomic():
                batch = RepairBatch.objects.create(
                    created_by=user, reason_code=reason_code, reason_text=reason_text.strip(),
                    idempotency_key=key, selection=selection, workflow_count=len(fingerprints),
                    previewed={str(wid): fp for wid, fp in sorted(fingerprints.items())})
                async_task(BATCH_TASK, batch.pk, task_name=f"batch-recheck-{batch.pk}", group="repair-batch")
        except IntegrityError:
            return RepairBatch.objects.get(idempotency_key=key)
    except RepairRefused as refused:
        frame.record_refusal(refused, user=user, request=probe, stage=RepairAudit.Stage.APPLY)
        raise
    return batch


# The first key of the batch run's advisory lock ("BTCH" in ASCII).
BATCH_LOCK_NAMESPACE = 0x42544348


@contextlib.contextmanager
def batch_run_lock(batch_id: int):
    """True inside when this process runs the batch; False when another delivery already does."""
    params = {"namespace": BATCH_LOCK_NAMESPACE, "key": batch_id % 2**31}
    with connection.cursor() as cursor:
        cursor.execute(repair_sql.TRY_BATCH_RUN_LOCK, params)
        got = cursor.fetchone()[0]
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cursor:
                cursor.execute(repair_sql.RELEASE_BATCH_RUN_LOCK, params)


def batch_run(*, batch_id: int) -> RepairBatch:
    """Re-check every workflow of the batch not re-checked yet, one transaction each, in workflow
    order; then mark the batch finished. A second delivery while a run goes on leaves at once;
    one after it (or after a run that died) re-checks only what has no outcome yet."""
    with batch_run_lock(batch_id) as mine:
        if mine:
            _run_items(batch_id)
        else:
            log.info("batch re-check %s is already running elsewhere; this delivery leaves it", batch_id)
    return RepairBatch.objects.get(pk=batch_id)


def _run_items(batch_id: int) -> None:
    batch = RepairBatch.objects.select_related("created_by").get(pk=batch_id)
    user = batch.created_by
    done = set(batch.audit.exclude(idempotency_key=None).values_list("idempotency_key", flat=True))
    for workflow_id, fingerprint in sorted((int(w), fp) for w, fp in batch.previewed.items()):
        key = item_key(batch, workflow_id)
        if key in done:
            continue
        request = RepairRequest(RepairAction.RECHECK, workflow_id, batch.reason_code, batch.reason_text)
        with contextlib.suppress(RepairRefused):  # audited, linked to the batch
            repair_apply(user=user, request=request, previewed_fingerprint=fingerprint, idempotency_key=key,
                         batch=batch)
    RepairBatch.objects.filter(pk=batch.pk, finished_at=None).update(finished_at=timezone.now())
    log.info("batch re-check %s finished: %d workflow(s)", batch.pk, batch.workflow_count)
