"""The fixed list of operator reason codes: why an operator takes a repair action.

Each code is allowed for some actions and, where it only makes sense for some, only for those
pause reasons (None: any). The form offers exactly `codes_for(action, pause_reason)`; the
service refuses any other code, so a hand-made POST cannot widen the list.
The pause reasons themselves (RECOVERY_*: meaning, what to check on the floor, which
corrections fit) are explained by the runbook (console.runbook.PauseReasonRunbook).
"""

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from console.models import RepairAction as A
from recovery.decisions import Reason as R


@dataclass(frozen=True)
class OperatorReasonCode:
    code: str
    label: str | Promise  # the human description, translated; the code itself never is
    actions: frozenset[str]
    pause_reasons: frozenset[str] | None = None  # None: whatever the pause reason

    def allows(self, action: str, pause_reason: str | None) -> bool:
        return action in self.actions and (self.pause_reasons is None or pause_reason in self.pause_reasons)


def _code(code, label, actions, pause_reasons=None):
    return OperatorReasonCode(code, label, frozenset(actions), frozenset(pause_reasons) if pause_reasons else None)


REASON_CODES: tuple[OperatorReasonCode, ...] = (
    _code("WMS_RECORDS_FIXED", _("The records were corrected in the WMS"), [A.RECHECK]),
    _code("FINISH_RECORDED_LATE", _("The job's finish was recorded after the pause"), [A.RECHECK]),
    _code("JOB_LOST_AT_RESTART", _("The move job was lost at a restart"), [A.REISSUE], [R.JOB_MISSING]),
    _code("JOB_NEVER_CREATED", _("The move job was never created"), [A.REISSUE], [R.JOB_MISSING]),
    _code("JOB_NOT_IN_WMS", _("No job exists for the step; the tray waits at its source"), [A.REISSUE]),
    _code("WRONG_JOB_REMOVED_IN_WMS", _("A wrong job was removed in the WMS; issue the right one"),
          [A.REISSUE], [R.JOB_MISMATCH, R.ACTIVE_EVIDENCE_INVALID]),
    _code("TRAY_FOUND_AT_SOURCE", _("Tray found at the source space on the floor"), [A.RECONCILE_SOURCE]),
    _code("TRAY_FOUND_AT_TARGET", _("Tray found at the target space on the floor"), [A.RECONCILE_TARGET]),
    _code("STOCK_BOOKED_AT_WRONG_SPACE", _("Stock or space records disagree with the floor"),
          [A.RECONCILE_SOURCE, A.RECONCILE_TARGET],
          [R.ACTIVE_EVIDENCE_INVALID, R.FINISH_EVIDENCE_INVALID, R.JOB_MISSING]),
    _code("JOB_STATUS_INVALID", _("The job's status is not a live status; the move has not happened"),
          [A.RECONCILE_SOURCE], [R.ACTIVE_EVIDENCE_INVALID]),
    _code("MOVE_DONE_NOT_RECORDED", _("The move was done but the WMS did not record it"),
          [A.RECONCILE_TARGET],
          [R.JOB_MISSING, R.ACTIVE_EVIDENCE_INVALID, R.FINISH_EVIDENCE_INVALID, R.JOB_MISMATCH]),
    _code("TIDY_NO_LONGER_NEEDED", _("The tidy is no longer needed"), [A.CANCEL_PROPOSE]),
    _code("TRAY_MISSING_OR_DAMAGED", _("The tray is missing or damaged"), [A.CANCEL_PROPOSE]),
    _code("JOB_ID_TAKEN_BY_OTHER_MOVE", _("The job id is taken by a different move; re-plan the tidy"),
          [A.CANCEL_PROPOSE], [R.JOB_MISMATCH, R.FINISH_EVIDENCE_INVALID, R.ACTIVE_EVIDENCE_INVALID]),
    _code("CANCEL_CHECKED_ON_FLOOR", _("Checked on the floor: cancelling is right"), [A.CANCEL_APPROVE]),
    _code("CANCEL_NOT_JUSTIFIED", _("Cancelling is not justified by the evidence"), [A.CANCEL_REJECT]),
    _code("REPAIRABLE_INSTEAD", _("The workflow can be repaired instead"), [A.CANCEL_REJECT]),
)
BY_CODE = {c.code: c for c in REASON_CODES}


def codes_for(action: str, pause_reason: str | None) -> list[OperatorReasonCode]:
    return [c for c in REASON_CODES if c.allows(action, pause_reason)]


def label(code: str) -> str:
    return BY_CODE[code].label if code in BY_CODE else code


# The repair actions' names as the pages show them (console.models.RepairAction's labels, which
# stay as they are for what stores and exports them); templates show a stored action's name with
# `{% translate entry.get_action_display %}`, which finds these in the catalogue.
ACTION_LABELS = {
    A.RECHECK: _("Re-check and resume"),
    A.REISSUE: _("Re-issue job"),
    A.RECONCILE_SOURCE: _("Reconcile: tray is at the source"),
    A.RECONCILE_TARGET: _("Reconcile: tray is at the target"),
    A.CANCEL_PROPOSE: _("Propose cancel and release"),
    A.CANCEL_APPROVE: _("Approve cancel and release"),
    A.CANCEL_REJECT: _("Reject cancel and release"),
}


def action_label(action: str):
    return ACTION_LABELS.get(action, action)
