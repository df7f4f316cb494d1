"""decide(evidence) -> Decision: the recovery decision table as a pure function.

The table is declared once, as one `RuleSpec` per row in `RULE_SPECS` (precedence order): the
rule, its decision (action and pause reason), its explanation and the evidence facts it checks.
Everything else reads the specs (docs/architecture.md §5, §14 "A pause reason"): the explanations,
the list of pause reasons, the runbook's rules per reason, the evidence card's rule of each field,
the paused list's facet, the thresholds, the metric labels, the demo and the replay.

`decide()` is the precedence, written out as branches that return the spec's shared decision.
"""

from dataclasses import dataclass, field, replace
from enum import StrEnum

from django.utils.translation import gettext_noop

from recovery.engine.evidence import (
    ACTIVE_JOB_STATUSES,
    FINISHED_JOB_STATUS,
    ClassificationEvidence,
    TidyRecoveryEvidence,
)


class Action(StrEnum):
    LEAVE = "LEAVE"  # nothing to do; normal dispatch/callback processing continues
    ADVANCE = "ADVANCE"  # replay step advancement with stage RECOVERY_FINISHED
    COMPLETE = "COMPLETE"  # complete the workflow and release its locks
    PAUSE = "PAUSE"  # PAUSED_RECOVERY with a reason; locks retained


class Reason(StrEnum):
    """The pause reason codes, in the order people read them (the runbook, the paused list's
    facet, the thresholds): that order is PAUSE_REASONS'."""

    JOB_MISSING = "RECOVERY_JOB_MISSING"
    JOB_MISMATCH = "RECOVERY_JOB_MISMATCH"
    ACTIVE_EVIDENCE_INVALID = "RECOVERY_ACTIVE_EVIDENCE_INVALID"
    FINISH_EVIDENCE_INVALID = "RECOVERY_FINISH_EVIDENCE_INVALID"
    WCS_REPORT_MISMATCH = "RECOVERY_WCS_REPORT_MISMATCH"


class Rule(StrEnum):
    """One value per row of the decision table, in precedence order (RULE_SPECS' order)."""

    NOT_ACTIVE = "workflow-not-active"
    COMPLETED_WITH_ACTIVE_JOB = "all-steps-completed-job-still-active"
    ALL_STEPS_COMPLETED = "all-steps-completed"
    ACTIVE_AND_FINISHED = "active-and-finished-job"
    ACTIVE_JOB_MISMATCH = "active-job-mismatch"
    ACTIVE_JOB_BAD_STATUS = "active-job-status-invalid"
    WCS_REPORT_MISMATCH = "active-job-wcs-report-mismatch"
    ACTIVE_JOB_PRE_MOVE = "active-job-pre-move"
    ACTIVE_JOB_NOT_PRE_MOVE = "active-job-not-pre-move"
    FINISH_JOB_MISMATCH = "finish-job-mismatch"
    FINISH_JOB_DUPLICATED = "finish-job-duplicated"
    FINISH_JOB_TERMINAL = "finish-job-terminal"
    FINISH_JOB_NOT_TERMINAL = "finish-job-not-terminal"
    NO_JOB = "no-job"


class ExpectedState(StrEnum):
    """Where the first incomplete step's inventory should be, by the jobs that exist (§4)."""

    PRE_MOVE = "pre-move"  # an active job: the move has not happened yet
    TERMINAL = "terminal"  # only a finish job: the move has happened


def expected_state(evidence: TidyRecoveryEvidence) -> ExpectedState | None:
    """The state the table checks the inventory against (None: no step, or no job to expect one)."""
    if evidence.step is None:
        return None
    if evidence.active_job is not None:
        return ExpectedState.PRE_MOVE
    if evidence.finish_job is not None:
        return ExpectedState.TERMINAL
    return None


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


# The evidence facts, named as the evidence card's fields (console/workflows/evidence_card.py).
_MATCH = ("job_id", "in_or_out", "tray_code", "cargo_space_id", "target_cargo_space_id")  # §4 "match"
ACTIVE_JOB_MATCH = tuple(f"active.{name}" for name in _MATCH)
FINISH_JOB_MATCH = tuple(f"finish.{name}" for name in _MATCH)
JOB_PRESENCE = ("active.present", "finish.present")
INVENTORY = ("stock.rows", "stock.at_source", "stock.at_target", "source.tray", "target.tray")
WCS_REPORT = ("wcs_report.tray", "wcs_report.location")  # the job's latest finish report


@dataclass(frozen=True)
class Facts:
    """The evidence facts (evidence card field keys) whose disagreement with the step gives a
    rule: `always`, and `pre_move` / `terminal` only while the card expects that state."""

    always: tuple[str, ...] = ()
    pre_move: tuple[str, ...] = ()
    terminal: tuple[str, ...] = ()

    def checked(self, state: ExpectedState | None) -> tuple[str, ...]:
        if state is ExpectedState.PRE_MOVE:
            return self.always + self.pre_move
        if state is ExpectedState.TERMINAL:
            return self.always + self.terminal
        return self.always

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.always + self.pre_move + self.terminal)


@dataclass(frozen=True)
class RuleSpec:
    """One row of the decision table. `explanation` is English marked with `gettext_noop`:
    recovery keeps it English (logs, the callbacks' answers), pages show `gettext(explanation)`.
    A pausing rule names the facts a disagreement in which gives it; the others name none."""

    rule: Rule
    action: Action
    reason: Reason | None
    explanation: str
    facts: Facts = Facts()
    decision: Decision = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # The one Decision of this rule: decide() returns it, so deciding allocates nothing.
        object.__setattr__(self, "decision", Decision(self.action, self.rule, self.reason))


# The decision table, in precedence order: first match wins (docs/architecture.md §5).
RULE_SPECS: tuple[RuleSpec, ...] = (
    # 1. Only ACTIVE workflows are reconciled; PAUSED_RECOVERY is left with its locks.
    RuleSpec(Rule.NOT_ACTIVE, Action.LEAVE, None, gettext_noop(
        "The workflow is not ACTIVE (already paused, completed or cancelled): recovery leaves it.")),
    # 2. No incomplete step: complete, unless a deterministic tidy job is still active.
    RuleSpec(Rule.COMPLETED_WITH_ACTIVE_JOB, Action.PAUSE, Reason.ACTIVE_EVIDENCE_INVALID, gettext_noop(
        "Every step is COMPLETED, yet a TDY job of the workflow is still active."),
        Facts(always=("workflow.active_jobs",))),
    RuleSpec(Rule.ALL_STEPS_COMPLETED, Action.COMPLETE, None, gettext_noop(
        "Every step is COMPLETED and no TDY job of the workflow is active.")),
    # 3. The same job id both active and archived contradicts itself (an active job: the card
    # expects the pre-move state).
    RuleSpec(Rule.ACTIVE_AND_FINISHED, Action.PAUSE, Reason.JOB_MISMATCH, gettext_noop(
        "The step's job id is both active (mydo_job) and archived (mydo_job_finish)."),
        Facts(pre_move=JOB_PRESENCE)),
    # 4. An active job: it must match, have a live status and sit in the pre-move state.
    RuleSpec(Rule.ACTIVE_JOB_MISMATCH, Action.PAUSE, Reason.JOB_MISMATCH, gettext_noop(
        "The active job's type, tray, source or target differs from the step."),
        Facts(always=ACTIVE_JOB_MATCH)),
    RuleSpec(Rule.ACTIVE_JOB_BAD_STATUS, Action.PAUSE, Reason.ACTIVE_EVIDENCE_INVALID, gettext_noop(
        "The matching active job's status is not 1, 2 or 3."),
        Facts(always=("active.status",))),
    # The WCS reported the move finished with another tray or at another place: the WMS is
    # consistent, the floor may not be (the callback refused it; only recovery pauses).
    RuleSpec(Rule.WCS_REPORT_MISMATCH, Action.PAUSE, Reason.WCS_REPORT_MISMATCH, gettext_noop(
        "The job is still active, and the WCS's latest finish report for it named another tray or place than "
        "the step."),
        Facts(always=WCS_REPORT)),
    RuleSpec(Rule.ACTIVE_JOB_PRE_MOVE, Action.LEAVE, None, gettext_noop(
        "A matching active job (status 1-3) with stock, source and target in the pre-move state.")),
    RuleSpec(Rule.ACTIVE_JOB_NOT_PRE_MOVE, Action.PAUSE, Reason.ACTIVE_EVIDENCE_INVALID, gettext_noop(
        "A matching active job exists, but stock or spaces are not in the pre-move state."),
        Facts(pre_move=INVENTORY)),
    # 5. Only a finish job: advance when it matches and the inventory is terminal.
    RuleSpec(Rule.FINISH_JOB_MISMATCH, Action.PAUSE, Reason.JOB_MISMATCH, gettext_noop(
        "The finished job's type, tray, source or target differs from the step."),
        Facts(always=FINISH_JOB_MATCH)),
    RuleSpec(Rule.FINISH_JOB_DUPLICATED, Action.PAUSE, Reason.FINISH_EVIDENCE_INVALID, gettext_noop(
        "The finish archive holds the step's job id more than once."),
        Facts(always=("finish.count",))),
    RuleSpec(Rule.FINISH_JOB_TERMINAL, Action.ADVANCE, None, gettext_noop(
        "No active job; a matching finish job (status 4) and stock and spaces are terminal.")),
    RuleSpec(Rule.FINISH_JOB_NOT_TERMINAL, Action.PAUSE, Reason.FINISH_EVIDENCE_INVALID, gettext_noop(
        "A matching finish job exists, but its status or stock and spaces are not terminal."),
        Facts(always=("finish.status",), terminal=INVENTORY)),
    # 6. No job at all.
    RuleSpec(Rule.NO_JOB, Action.PAUSE, Reason.JOB_MISSING, gettext_noop(
        "Neither a matching active job nor a matching finish job exists."),
        Facts(always=JOB_PRESENCE)),
)

# --- derived from the specs ------------------------------------------------------------------

SPEC_BY_RULE: dict[Rule, RuleSpec] = {spec.rule: spec for spec in RULE_SPECS}
RULE_EXPLANATIONS: dict[Rule, str] = {spec.rule: spec.explanation for spec in RULE_SPECS}
_DECISIONS: dict[Rule, Decision] = {spec.rule: spec.decision for spec in RULE_SPECS}

# Every pause reason the table gives, in Reason's (reading) order.
PAUSE_REASONS: tuple[Reason, ...] = tuple(r for r in Reason if any(spec.reason is r for spec in RULE_SPECS))


def rules_giving(reason: Reason) -> tuple[Rule, ...]:
    """The rules that pause with `reason`, in precedence order."""
    return tuple(spec.rule for spec in RULE_SPECS if spec.reason is reason)


_STATES: tuple[ExpectedState | None, ...] = (None, *ExpectedState)
# (rule, state) -> the facts the rule checks while the card expects that state.
_CHECKED: dict[tuple[Rule, ExpectedState | None], frozenset[str]] = {
    (spec.rule, state): frozenset(spec.facts.checked(state)) for spec in RULE_SPECS for state in _STATES}
# (state, fact) -> the first rule in precedence that checks the fact in that state.
_FIRST_CHECKING: dict[tuple[ExpectedState | None, str], Rule] = {}
for _spec in RULE_SPECS:
    for _state in _STATES:
        for _fact in _CHECKED[_spec.rule, _state]:
            _FIRST_CHECKING.setdefault((_state, _fact), _spec.rule)


def checking_rule(fact: str, state: ExpectedState | None, decided: Rule | None = None) -> Rule | None:
    """The rule a disagreement in evidence fact `fact` gives while `state` is expected: the rule
    that `decided` when it checks the fact, else the first in precedence that checks it (None: no
    rule compares it then). Several rules may check one fact (the stock rows in the pre-move state,
    say): the one that decided is the one a reader looks for."""
    if decided is not None and fact in _CHECKED[decided, state]:
        return decided
    return _FIRST_CHECKING.get((state, fact))


# --- the precedence --------------------------------------------------------------------------


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

    # 4. An active job: it must match, have a live status, not have been reported finished with
    # another tray or place, and sit in the pre-move state.
    if active is not None:
        if not evidence.job_matches(active):
            return _DECISIONS[Rule.ACTIVE_JOB_MISMATCH]
        if active.status not in ACTIVE_JOB_STATUSES:
            return _DECISIONS[Rule.ACTIVE_JOB_BAD_STATUS]
        if evidence.finish_report_mismatch:
            return _DECISIONS[Rule.WCS_REPORT_MISMATCH]
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
