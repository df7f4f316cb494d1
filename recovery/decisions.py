"""decide(evidence) -> Decision: the recovery decision table as a pure function.

Precedence, and the cases settled so every input has one answer: docs/architecture.md §5. Every
input gets exactly one decision; each decision names the rule that produced it so the console
can tie a pause reason to the evidence fields behind it.
"""

from dataclasses import dataclass, replace
from enum import StrEnum

from recovery.evidence import ACTIVE_JOB_STATUSES, FINISHED_JOB_STATUS, ClassificationEvidence, TidyRecoveryEvidence


class Action(StrEnum):
    LEAVE = "LEAVE"  # nothing to do; normal dispatch/callback processing continues
    ADVANCE = "ADVANCE"  # replay step advancement with stage RECOVERY_FINISHED
    COMPLETE = "COMPLETE"  # complete the workflow and release its locks
    PAUSE = "PAUSE"  # PAUSED_RECOVERY with a reason; locks retained


class Reason(StrEnum):
    ACTIVE_EVIDENCE_INVALID = "RECOVERY_ACTIVE_EVIDENCE_INVALID"
    JOB_MISMATCH = "RECOVERY_JOB_MISMATCH"
    FINISH_EVIDENCE_INVALID = "RECOVERY_FINISH_EVIDENCE_INVALID"
    JOB_MISSING = "RECOVERY_JOB_MISSING"


class Rule(StrEnum):
    """One value per row of the decision table (docs/architecture.md §5 lists them in order)."""

    NOT_ACTIVE = "workflow-not-active"
    ALL_STEPS_COMPLETED = "all-steps-completed"
    COMPLETED_WITH_ACTIVE_JOB = "all-steps-completed-job-still-active"
    ACTIVE_AND_FINISHED = "active-and-finished-job"
    ACTIVE_JOB_MISMATCH = "active-job-mismatch"
    ACTIVE_JOB_BAD_STATUS = "active-job-status-invalid"
    ACTIVE_JOB_PRE_MOVE = "active-job-pre-move"
    ACTIVE_JOB_NOT_PRE_MOVE = "active-job-not-pre-move"
    FINISH_JOB_MISMATCH = "finish-job-mismatch"
    FINISH_JOB_DUPLICATED = "finish-job-duplicated"
    FINISH_JOB_TERMINAL = "finish-job-terminal"
    FINISH_JOB_NOT_TERMINAL = "finish-job-not-terminal"
    NO_JOB = "no-job"


RULE_EXPLANATIONS: dict[Rule, str] = {
    Rule.NOT_ACTIVE: "The workflow is not ACTIVE (already paused, completed or cancelled): recovery leaves it.",
    Rule.ALL_STEPS_COMPLETED: "Every step is COMPLETED and no TDY job of the workflow is active.",
    Rule.COMPLETED_WITH_ACTIVE_JOB: "Every step is COMPLETED, yet a TDY job of the workflow is still active.",
    Rule.ACTIVE_AND_FINISHED: "The step's job id is both active (mydo_job) and archived (mydo_job_finish).",
    Rule.ACTIVE_JOB_MISMATCH: "The active job's type, tray, source or target differs from the step.",
    Rule.ACTIVE_JOB_BAD_STATUS: "The matching active job's status is not 1, 2 or 3.",
    Rule.ACTIVE_JOB_PRE_MOVE: "A matching active job (status 1-3) with stock, source and target in the pre-move state.",
    Rule.ACTIVE_JOB_NOT_PRE_MOVE: "A matching active job exists, but stock or spaces are not in the pre-move state.",
    Rule.FINISH_JOB_MISMATCH: "The finished job's type, tray, source or target differs from the step.",
    Rule.FINISH_JOB_DUPLICATED: "The finish archive holds the step's job id more than once.",
    Rule.FINISH_JOB_TERMINAL: "No active job; a matching finish job (status 4) and stock and spaces are terminal.",
    Rule.FINISH_JOB_NOT_TERMINAL: "A matching finish job exists, but its status or stock and spaces are not terminal.",
    Rule.NO_JOB: "Neither a matching active job nor a matching finish job exists.",
}


@dataclass(frozen=True)
class Decision:
    action: Action
    rule: Rule
    reason: Reason | None = None

    @property
    def explanation(self) -> str:
        return RULE_EXPLANATIONS[self.rule]

    @property
    def changes_state(self) -> bool:
        return self.action is not Action.LEAVE


# Every rule gives one fixed decision, so decide() returns shared constants and allocates
# nothing while it classifies thousands of workflows.
_DECISIONS: dict[Rule, Decision] = {
    Rule.NOT_ACTIVE: Decision(Action.LEAVE, Rule.NOT_ACTIVE),
    Rule.ALL_STEPS_COMPLETED: Decision(Action.COMPLETE, Rule.ALL_STEPS_COMPLETED),
    Rule.COMPLETED_WITH_ACTIVE_JOB: Decision(Action.PAUSE, Rule.COMPLETED_WITH_ACTIVE_JOB,
                                             Reason.ACTIVE_EVIDENCE_INVALID),
    Rule.ACTIVE_AND_FINISHED: Decision(Action.PAUSE, Rule.ACTIVE_AND_FINISHED, Reason.JOB_MISMATCH),
    Rule.ACTIVE_JOB_MISMATCH: Decision(Action.PAUSE, Rule.ACTIVE_JOB_MISMATCH, Reason.JOB_MISMATCH),
    Rule.ACTIVE_JOB_BAD_STATUS: Decision(Action.PAUSE, Rule.ACTIVE_JOB_BAD_STATUS, Reason.ACTIVE_EVIDENCE_INVALID),
    Rule.ACTIVE_JOB_PRE_MOVE: Decision(Action.LEAVE, Rule.ACTIVE_JOB_PRE_MOVE),
    Rule.ACTIVE_JOB_NOT_PRE_MOVE: Decision(Action.PAUSE, Rule.ACTIVE_JOB_NOT_PRE_MOVE,
                                           Reason.ACTIVE_EVIDENCE_INVALID),
    Rule.FINISH_JOB_MISMATCH: Decision(Action.PAUSE, Rule.FINISH_JOB_MISMATCH, Reason.JOB_MISMATCH),
    Rule.FINISH_JOB_DUPLICATED: Decision(Action.PAUSE, Rule.FINISH_JOB_DUPLICATED, Reason.FINISH_EVIDENCE_INVALID),
    Rule.FINISH_JOB_TERMINAL: Decision(Action.ADVANCE, Rule.FINISH_JOB_TERMINAL),
    Rule.FINISH_JOB_NOT_TERMINAL: Decision(Action.PAUSE, Rule.FINISH_JOB_NOT_TERMINAL,
                                           Reason.FINISH_EVIDENCE_INVALID),
    Rule.NO_JOB: Decision(Action.PAUSE, Rule.NO_JOB, Reason.JOB_MISSING),
}


def decide(evidence: TidyRecoveryEvidence | ClassificationEvidence) -> Decision:
    """The decision for the evidence; a ClassificationEvidence (the fields read here, no more)
    decides as the full evidence it was read from."""
    # 1. Only ACTIVE workflows are reconciled; PAUSED_RECOVERY is left with its locks.
    if evidence.workflow_status != "ACTIVE":
        return _DECISIONS[Rule.NOT_ACTIVE]

    # 2. No incomplete step: complete, unless a deterministic tidy job is still active.
    if evidence.step is None:
        if evidence.active_tidy_job_count > 0:
            return _DECISIONS[Rule.COMPLETED_WITH_ACTIVE_JOB]
        return _DECISIONS[Rule.ALL_STEPS_COMPLETED]

    active, finished = evidence.active_job, evidence.finish_job

    # 3. The same job id both active and archived contradicts itself.
    if active is not None and finished is not None:
        return _DECISIONS[Rule.ACTIVE_AND_FINISHED]

    # 4. An active job: it must match, have a live status and sit in the pre-move state.
    if active is not None:
        if not evidence.job_matches(active):
            return _DECISIONS[Rule.ACTIVE_JOB_MISMATCH]
        if active.status not in ACTIVE_JOB_STATUSES:
            return _DECISIONS[Rule.ACTIVE_JOB_BAD_STATUS]
        if evidence.pre_move_state:
            return _DECISIONS[Rule.ACTIVE_JOB_PRE_MOVE]
        return _DECISIONS[Rule.ACTIVE_JOB_NOT_PRE_MOVE]

    # 5. Only a finish job: advance when it matches and the inventory is terminal.
    if finished is not None:
        if not evidence.job_matches(finished):
            return _DECISIONS[Rule.FINISH_JOB_MISMATCH]
        if evidence.finish_job_count > 1:
            return _DECISIONS[Rule.FINISH_JOB_DUPLICATED]
        if finished.status == FINISHED_JOB_STATUS and evidence.terminal_state:
            return _DECISIONS[Rule.FINISH_JOB_TERMINAL]
        return _DECISIONS[Rule.FINISH_JOB_NOT_TERMINAL]

    # 6. No job at all.
    return _DECISIONS[Rule.NO_JOB]


def decide_as_if_active(evidence: TidyRecoveryEvidence) -> Decision:
    """The table's verdict on a PAUSED_RECOVERY workflow taken as ACTIVE (what a re-check would
    do, and why it is paused); any other workflow is decided as it is."""
    if evidence.workflow_status == "PAUSED_RECOVERY":
        evidence = replace(evidence, workflow_status="ACTIVE")
    return decide(evidence)
