"""The fixed list of operator reason codes: why an operator takes a repair action.

Each code is allowed for some actions and, where it only makes sense for some, only for those
pause reasons (None: any). The form offers exactly `codes_for(action, pause_reason)`; the
service refuses any other code, so a hand-made POST cannot widen the list.
The pause reasons themselves (RECOVERY_*: meaning, what to check on the floor, which
corrections fit) are explained by the runbook (console.reason_codes.PauseReasonRunbook).
"""

from dataclasses import dataclass

from console.models import RepairAction as A
from recovery.decisions import Reason as R


@dataclass(frozen=True)
class OperatorReasonCode:
    code: str
    label: str
    actions: frozenset[str]
    pause_reasons: frozenset[str] | None = None  # None: whatever the pause reason

    def allows(self, action: str, pause_reason: str | None) -> bool:
        return action in self.actions and (self.pause_reasons is None or pause_reason in self.pause_reasons)


def _code(code, label, actions, pause_reasons=None):
    return OperatorReasonCode(code, label, frozenset(actions), frozenset(pause_reasons) if pause_reasons else None)


REASON_CODES: tuple[OperatorReasonCode, ...] = (
    _code("WMS_RECORDS_FIXED", "The records were corrected in the WMS", [A.RECHECK]),
    _code("FINISH_RECORDED_LATE", "The job's finish was recorded after the pause", [A.RECHECK]),
    _code("JOB_LOST_AT_RESTART", "The move job was lost at a restart", [A.REISSUE], [R.JOB_MISSING]),
    _code("JOB_NEVER_CREATED", "The move job was never created", [A.REISSUE], [R.JOB_MISSING]),
    _code("JOB_NOT_IN_WMS", "No job exists for the step; the tray waits at its source", [A.REISSUE]),
    _code("WRONG_JOB_REMOVED_IN_WMS", "A wrong job was removed in the WMS; issue the right one",
          [A.REISSUE], [R.JOB_MISMATCH, R.ACTIVE_EVIDENCE_INVALID]),
    _code("TRAY_FOUND_AT_SOURCE", "Tray found at the source space on the floor", [A.RECONCILE_SOURCE]),
    _code("TRAY_FOUND_AT_TARGET", "Tray found at the target space on the floor", [A.RECONCILE_TARGET]),
    _code("STOCK_BOOKED_AT_WRONG_SPACE", "Stock or space records disagree with the floor",
          [A.RECONCILE_SOURCE, A.RECONCILE_TARGET],
          [R.ACTIVE_EVIDENCE_INVALID, R.FINISH_EVIDENCE_INVALID, R.JOB_MISSING]),
    _code("JOB_STATUS_INVALID", "The job's status is not a live status; the move has not happened",
          [A.RECONCILE_SOURCE], [R.ACTIVE_EVIDENCE_INVALID]),
    _code("MOVE_DONE_NOT_RECORDED", "The move was done but the WMS did not record it",
          [A.RECONCILE_TARGET],
          [R.JOB_MISSING, R.ACTIVE_EVIDENCE_INVALID, R.FINISH_EVIDENCE_INVALID, R.JOB_MISMATCH]),
    _code("TIDY_NO_LONGER_NEEDED", "The tidy is no longer needed", [A.CANCEL_PROPOSE]),
    _code("TRAY_MISSING_OR_DAMAGED", "The tray is missing or damaged", [A.CANCEL_PROPOSE]),
    _code("JOB_ID_TAKEN_BY_OTHER_MOVE", "The job id is taken by a different move; re-plan the tidy",
          [A.CANCEL_PROPOSE], [R.JOB_MISMATCH, R.FINISH_EVIDENCE_INVALID, R.ACTIVE_EVIDENCE_INVALID]),
    _code("CANCEL_CHECKED_ON_FLOOR", "Checked on the floor: cancelling is right", [A.CANCEL_APPROVE]),
    _code("CANCEL_NOT_JUSTIFIED", "Cancelling is not justified by the evidence", [A.CANCEL_REJECT]),
    _code("REPAIRABLE_INSTEAD", "The workflow can be repaired instead", [A.CANCEL_REJECT]),
)
BY_CODE = {c.code: c for c in REASON_CODES}


def codes_for(action: str, pause_reason: str | None) -> list[OperatorReasonCode]:
    return [c for c in REASON_CODES if c.allows(action, pause_reason)]


def label(code: str) -> str:
    return BY_CODE[code].label if code in BY_CODE else code
