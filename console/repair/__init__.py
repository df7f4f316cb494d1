"""Audited operator repair: preconditions, preview, apply once, four eyes, batch re-check.

Modules by job: `rules` (who may do what, preconditions, reason checks), `frame` (the
apply-once frame every write goes through), `actions` (re-check, re-issue, reconcile),
`four_eyes` (propose, approve, reject cancel-and-release), `batch` (recorded in the request,
run by the qcluster through `tasks`), `selectors` (the panel, the audit, the batch selection
and progress), `codes` (operator reason codes), `forms`, `views`, `urls`.
The names below are the package's service interface.
"""

from console.repair import codes as repair_codes
from console.repair.actions import MUTATIONS, Preview, repair_apply, repair_preview
from console.repair.batch import batch_recheck
from console.repair.four_eyes import (
    approval_blocker,
    cancel_approve,
    cancel_preview_for_approval,
    cancel_propose,
    cancel_reject,
)
from console.repair.rules import (
    OFFERED,
    PAUSED,
    REASON_MAX_LENGTH,
    REASON_MIN_LENGTH,
    RECONCILE,
    Refusal,
    RepairRefused,
    RepairRequest,
    moving_jobs,
    needs_floor_confirmation,
    permitted,
    precondition_failures,
)
from console.repair.selectors import BATCH_LIMIT, Offer, repair_offers

__all__ = [
    "BATCH_LIMIT", "MUTATIONS", "OFFERED", "PAUSED", "REASON_MAX_LENGTH", "REASON_MIN_LENGTH", "RECONCILE", "Offer",
    "Preview", "Refusal", "RepairRefused", "RepairRequest", "approval_blocker", "batch_recheck", "cancel_approve",
    "cancel_preview_for_approval", "cancel_propose", "cancel_reject", "moving_jobs", "needs_floor_confirmation",
    "permitted", "precondition_failures",
    "repair_apply", "repair_codes", "repair_offers", "repair_preview",
]
