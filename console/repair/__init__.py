"""Audited operator repair: preconditions, preview, apply once, four eyes, batch re-check.

Modules by job: `registry` (each action declared once: who may take it, its preconditions,
scans, reason codes and mutation; offers, routing, labels and forms derive from it), `rules`
(the refusals, the request and the checks every action shares), `texts` (the message ids of
the stored texts), `frame` (the apply-once frame every write goes through), `actions` (the
direct repairs), `four_eyes` (propose, approve, reject cancel-and-release), `batch` (recorded
in the request, run by the qcluster through `tasks`), `selectors` (the panel, the audit, the
batch selection and progress), `forms`, `views`, `urls`.
The names below are the package's service interface.
"""

from console.repair.actions import Preview, repair_apply, repair_preview
from console.repair.batch import batch_recheck
from console.repair.four_eyes import (
    approval_blocker,
    cancel_approve,
    cancel_preview_for_approval,
    cancel_propose,
    cancel_reject,
)
from console.repair.registry import (
    MUTATIONS,
    OFFERED,
    RECONCILE,
    RepairAction,
    codes_for,
    permitted,
    precondition_failures,
)
from console.repair.rules import (
    PAUSED,
    REASON_MAX_LENGTH,
    REASON_MIN_LENGTH,
    Refusal,
    RepairRefused,
    RepairRequest,
    moving_jobs,
    needs_floor_confirmation,
)
from console.repair.selectors import BATCH_LIMIT, Offer, repair_offers

__all__ = [
    "BATCH_LIMIT", "MUTATIONS", "OFFERED", "PAUSED", "REASON_MAX_LENGTH", "REASON_MIN_LENGTH", "RECONCILE", "Offer",
    "Preview", "Refusal", "RepairAction", "RepairRefused", "RepairRequest", "approval_blocker", "batch_recheck",
    "cancel_approve", "cancel_preview_for_approval", "cancel_propose", "cancel_reject", "codes_for", "moving_jobs",
    "needs_floor_confirmation", "permitted", "precondition_failures",
    "repair_apply", "repair_offers", "repair_preview",
]
