"""/recovery/preview/: what a cycle would decide now, in any mode (docs/architecture.md §16).

One classification read (recovery.engine.evidence.stream_classification, the cycle's own), decided by
the same pure decide(): read only, no row lock, nothing journaled. Memory holds the counts and the
first workflows of each group, not the active set (the read is streamed).
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from recovery.engine.decisions import Action, decide
from recovery.engine.evidence import stream_classification

FIRST = 50  # workflows listed per group

# The page lists the groups in this order: what recovery would change first, pauses by reason.
_ACTION_ORDER = {Action.ADVANCE: 0, Action.COMPLETE: 1, Action.PAUSE: 2, Action.LEAVE: 3}


@dataclass(frozen=True)
class PreviewWorkflow:
    workflow_id: int
    step_no: int | None
    rule: str


@dataclass
class PreviewGroup:
    action: str
    reason: str
    count: int = 0
    first: list[PreviewWorkflow] = field(default_factory=list)
    rules: Counter = field(default_factory=Counter)

    @property
    def changes_state(self) -> bool:
        return self.action != Action.LEAVE


@dataclass(frozen=True)
class Preview:
    read_at: datetime
    examined: int
    groups: list[PreviewGroup]  # in _ACTION_ORDER, then by reason

    @property
    def changing(self) -> int:
        return sum(g.count for g in self.groups if g.changes_state)

    def count(self, action: str, reason: str = "") -> int:
        return next((g.count for g in self.groups if (g.action, g.reason) == (action, reason)), 0)


def next_cycle_preview(*, first: int = FIRST) -> Preview:
    """Every ACTIVE workflow classified and decided as the next cycle would, counted by action and
    reason, with the first `first` workflows (oldest first) of each."""
    read_at = timezone.now()
    groups: dict[tuple[str, str], PreviewGroup] = {}
    examined = 0
    for evidence in stream_classification():
        examined += 1
        decision = decide(evidence)
        key = (decision.action.value, decision.reason.value if decision.reason else "")
        group = groups.get(key)
        if group is None:
            group = groups[key] = PreviewGroup(*key)
        group.count += 1
        group.rules[decision.rule.value] += 1
        if len(group.first) < first:
            group.first.append(PreviewWorkflow(evidence.workflow_id, evidence.step.step_no if evidence.step else None,
                                               decision.rule.value))
    ordered = sorted(groups.values(), key=lambda g: (_ACTION_ORDER[Action(g.action)], g.reason))
    return Preview(read_at=read_at, examined=examined, groups=ordered)
