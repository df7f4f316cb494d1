"""One log line per business event, with the ids an operator searches by (workflow_id, step_id,
job_id): each callback outcome and each recovery decision. Operator repairs are logged from
their audit rows (console/signals.py). The lines say what happened; the journal tables remain
the record (a log line is written once the outcome is known, not instead of a row).
"""

import logging

from django.dispatch import receiver
from django_q.signals import pre_execute

from recovery.logs.logcontext import task_id_var
from recovery.models import tidy_job_id

callbacks = logging.getLogger("recovery.callbacks")
decisions = logging.getLogger("recovery.decisions")


def log_callback_outcome(receipt: dict) -> None:
    """`receipt`: the parameters of the CallbackReceipt row being written."""
    callbacks.info(
        "%s callback for %s: %s %s", receipt["endpoint"], receipt["job_id"] or "(no job id)", receipt["http_status"],
        receipt["outcome"],
        extra={"workflow_id": receipt["workflow_id"], "step_id": receipt["step_id"], "job_id": receipt["job_id"],
               "endpoint": str(receipt["endpoint"]), "outcome": receipt["outcome"],
               "http_status": receipt["http_status"], "duration_ms": receipt["duration_ms"]})


def log_recovery_result(*, cycle_id: int | None, result, classified=None) -> None:
    """`result`: a workflow's ReconcileResult; `classified`: the ClassificationEvidence the cycle
    classified it on, if any (the step is named from the evidence read under the lock first)."""
    evidence = result.evidence or classified
    step = evidence.step if evidence is not None else None
    step_id = step.step_id if step else None
    decision = result.decision
    decisions.info(
        "recovery decision for workflow %s: %s%s (%s)", result.workflow_id,
        decision.action.value if decision else "-", f" {decision.reason.value}" if decision and decision.reason else "",
        result.outcome.value,
        extra={"workflow_id": result.workflow_id, "step_id": step_id,
               "job_id": tidy_job_id(result.workflow_id, step_id) if step_id else None,
               "cycle_id": cycle_id, "outcome": result.outcome.value,
               "decision": decision.action.value if decision else None,
               "reason": decision.reason.value if decision and decision.reason else None,
               "rule": decision.rule.value if decision else None,
               "tray_code": step.tray_code if step else None,
               "source": step.cargo_space_id if step else None,
               "target": step.target_cargo_space_id if step else None})


@receiver(pre_execute)
def bind_task_id(sender, func, task, **kwargs):
    """Every line a qcluster worker logs while running a task carries the task's id."""
    task_id_var.set(task.get("id"))
