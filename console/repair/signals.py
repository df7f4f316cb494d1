"""One log line per operator repair attempt (applied, proposed, rejected or refused), with the
ids an operator searches by. Every attempt writes exactly one RepairAudit row (append-only), so
the line is logged from that row once its transaction commits: a rolled-back attempt that left
no audit row logs nothing that did not happen."""

import logging

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from console.models import RepairAudit
from recovery.models import tidy_job_id

log = logging.getLogger("console.repair")


def _step_places(evidence) -> dict:
    """The tray, source and target of the step the repair was made on (its journaled evidence)."""
    step = evidence.get("step") if isinstance(evidence, dict) else None
    if not isinstance(step, dict):
        return {}
    return {"tray_code": step.get("tray_code"), "source": step.get("cargo_space_id"),
            "target": step.get("target_cargo_space_id")}


@receiver(post_save, sender=RepairAudit)
def log_repair_attempt(sender, instance: RepairAudit, created: bool, **kwargs):
    if not created:
        return
    fields = {
        "workflow_id": instance.workflow_id,
        "step_id": instance.step_id,
        "job_id": tidy_job_id(instance.workflow_id, instance.step_id)
        if instance.workflow_id and instance.step_id else None,
        "audit_id": instance.pk, "action": instance.action, "stage": instance.stage,
        "outcome": instance.outcome, "reason_code": instance.reason_code, "user": instance.username,
        **_step_places(instance.evidence_before),
    }
    message = (f"repair {instance.action} ({instance.stage}) on workflow {instance.workflow_id} by "
               f"{instance.username}: {instance.outcome}")
    transaction.on_commit(lambda: log.info(message, extra=fields))
