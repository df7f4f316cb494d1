"""Batch re-check: one reason for many paused workflows, each re-checked through the apply-once
frame in its own transaction, one audit row each, all linked to one RepairBatch."""

import contextlib

from django.db import IntegrityError, transaction
from django.utils import timezone

from console.models import RepairAction, RepairAudit, RepairBatch
from console.repair import frame
from console.repair.actions import repair_apply
from console.repair.rules import Refusal, RepairRefused, RepairRequest, check_reason_code, check_text, permitted
from console.repair.selectors import BATCH_LIMIT


def check_batch_permission(user, *, stage: str) -> None:
    """Refuses, audited, a user whose role may not re-check."""
    if not permitted(user, RepairAction.RECHECK):
        refused = RepairRefused(Refusal.FORBIDDEN, "Your role may not re-check workflows.")
        frame.record_refusal(refused, user=user, request=RepairRequest(RepairAction.RECHECK, 0), stage=stage)
        raise refused


def batch_recheck(*, user, fingerprints: dict[int, str], reason_code: str, reason_text: str, selection: dict,
                  idempotency_key: str) -> RepairBatch:
    """Re-check each selected workflow (workflow id -> previewed fingerprint). A double submit
    returns the first batch."""
    key = frame.submission_key(idempotency_key)
    probe = RepairRequest(RepairAction.RECHECK, 0, reason_code, reason_text)
    try:
        if first := frame.first_result(key, user, model=RepairBatch, owner="created_by_id"):
            return first
        if not permitted(user, RepairAction.RECHECK):
            raise RepairRefused(Refusal.FORBIDDEN, "Your role may not re-check workflows.")
        if not fingerprints:
            raise RepairRefused(Refusal.BAD_REQUEST, "Select at least one workflow.")
        if len(fingerprints) > BATCH_LIMIT:
            raise RepairRefused(Refusal.BAD_REQUEST, f"A batch holds at most {BATCH_LIMIT} workflows.")
        # Re-check codes do not depend on the pause reason, so one reason fits the whole batch.
        check_reason_code(probe, None)
        check_text(probe)
        try:
            with transaction.atomic():
                batch = RepairBatch.objects.create(
                    created_by=user, reason_code=reason_code, reason_text=reason_text.strip(),
                    idempotency_key=key, selection=selection, workflow_count=len(fingerprints))
        except IntegrityError:
            return RepairBatch.objects.get(idempotency_key=key)
    except RepairRefused as refused:
        frame.record_refusal(refused, user=user, request=probe, stage=RepairAudit.Stage.APPLY)
        raise
    for workflow_id, fingerprint in sorted(fingerprints.items()):
        request = RepairRequest(RepairAction.RECHECK, workflow_id, reason_code, reason_text)
        with contextlib.suppress(RepairRefused):  # audited, linked to the batch
            repair_apply(user=user, request=request, previewed_fingerprint=fingerprint,
                         idempotency_key=f"{key[:40]}-{workflow_id}", batch=batch)
    RepairBatch.objects.filter(pk=batch.pk).update(finished_at=timezone.now())
    batch.refresh_from_db()
    return batch
