"""/recovery/observe/: the decisions recovery observed (RECOVERY_MODE=observe), what happened to
each workflow afterwards, and whether that agrees with the observation (docs/architecture.md §16).

It is what a site reads before it lets recovery act: an observed PAUSE that a WCS finish later
overtook would have stopped a workflow the floor finished; an observed ADVANCE that a callback
later confirmed is one recovery would have made safely. `agreement` is the one rule, pure, used by
the list and by the agreement rate per action over the last 24 hours.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils.translation import gettext_lazy, pgettext_lazy

from console.operations import sql as operations_sql
from console.readers import Cursor, fetch_dicts
from console.repair.registry import resolving_actions
from recovery.engine.decisions import Action

PAGE_SIZE = 100
RATE_WINDOW = timedelta(hours=24)

# What happened afterwards (operations_sql._OBSERVED_FROM names them).
OUTCOMES = {
    "advanced_by_callback": gettext_lazy("advanced by a callback"),
    "completed_by_callback": gettext_lazy("completed by a callback"),
    "repaired": gettext_lazy("repaired by an operator"),
    "cancelled": pgettext_lazy("what happened to a workflow", "cancelled"),
    "recovery": gettext_lazy("decided by recovery (apply mode)"),
    "unchanged": pgettext_lazy("what happened to a workflow", "unchanged"),
}

AGREES, DISAGREES, PENDING = "agrees", "disagrees", "pending"
AGREEMENT_LABELS = {
    AGREES: pgettext_lazy("an observed decision", "agrees"),
    DISAGREES: pgettext_lazy("an observed decision", "disagrees"),
    PENDING: pgettext_lazy("an observed decision", "not known yet"),
}
_FORWARD = {"advanced_by_callback", "completed_by_callback"}
_PERSON = {"repaired", "cancelled"}


def agreement(*, action: str, reason: str, outcome: str, later_action: str | None = None,
              later_reason: str = "") -> str:
    """Whether what happened after an observed decision agrees with it:
    - nothing happened yet (unchanged): not known yet;
    - recovery itself decided later (after the switch to apply): agrees when it made the same
      decision;
    - PAUSE says "a person must look": agrees when a person repaired or cancelled the workflow,
      disagrees when the WCS advanced or completed it (applied, the pause would have stopped a
      workflow that went on by itself, and the finish would have been refused);
    - ADVANCE and COMPLETE say "the finish is proven": agree when a callback then advanced or
      completed the workflow, disagree when it needed a repair or was cancelled."""
    if outcome == "unchanged":
        return PENDING
    if outcome == "recovery":
        return AGREES if (later_action, later_reason or "") == (action, reason or "") else DISAGREES
    if action == Action.PAUSE:
        return AGREES if outcome in _PERSON else DISAGREES
    return AGREES if outcome in _FORWARD else DISAGREES


@dataclass(frozen=True)
class ObservedRow:
    id: int
    decided_at: datetime
    cycle_id: int | None
    workflow_id: int
    step_id: int | None
    action: str
    reason: str
    rule: str
    fingerprint: str
    workflow_status: str | None
    outcome: str
    later_action: str | None
    later_reason: str

    @property
    def agreement(self) -> str:
        return agreement(action=self.action, reason=self.reason, outcome=self.outcome,
                         later_action=self.later_action, later_reason=self.later_reason)

    @property
    def agreement_label(self) -> str:
        return AGREEMENT_LABELS[self.agreement]

    @property
    def outcome_label(self) -> str:
        return OUTCOMES.get(self.outcome, self.outcome)

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.decided_at, self.id)


@dataclass(frozen=True)
class ActionRate:
    action: str
    agrees: int
    disagrees: int
    pending: int

    @property
    def total(self) -> int:
        return self.agrees + self.disagrees + self.pending

    @property
    def settled(self) -> int:
        return self.agrees + self.disagrees

    @property
    def rate(self) -> float | None:
        """Agreeing share of the observations whose outcome is known (None: none is known yet)."""
        return self.agrees / self.settled if self.settled else None

    @property
    def percent(self) -> int | None:
        return None if self.rate is None else round(self.rate * 100)


@dataclass(frozen=True)
class ObservedPage:
    rows: list[ObservedRow]
    next_cursor: Cursor | None
    rates: list[ActionRate]
    since: datetime


def agreement_rates(*, now: datetime) -> list[ActionRate]:
    """Per action (ADVANCE, COMPLETE, PAUSE), how the observations of the last 24 hours fared. One query."""
    tally = {a.value: {AGREES: 0, DISAGREES: 0, PENDING: 0} for a in Action if a is not Action.LEAVE}
    for row in fetch_dicts(operations_sql.OBSERVED_OUTCOME_COUNTS, {"since": now - RATE_WINDOW,
                                                                   "resolving_actions": resolving_actions()}):
        counts = tally.setdefault(row["action"], {AGREES: 0, DISAGREES: 0, PENDING: 0})
        counts[agreement(action=row["action"], reason=row["reason"], outcome=row["outcome"],
                         later_action=row["later_action"], later_reason=row["later_reason"])] += row["n"]
    return [ActionRate(action, c[AGREES], c[DISAGREES], c[PENDING]) for action, c in sorted(tally.items())]


def observed_page(*, now: datetime, action: str = "", reason: str = "", before: Cursor | None = None,
                  page_size: int = PAGE_SIZE) -> ObservedPage:
    """One page of observed decisions, newest first, filtered by action and reason, each with what
    happened afterwards; and the 24-hour agreement rates. Two queries, whatever the row count."""
    where, params = "", {"limit": page_size + 1, "resolving_actions": resolving_actions()}
    if action:
        where += operations_sql.OBSERVED_WHERE_ACTION
        params["action"] = action
    if reason:
        where += operations_sql.OBSERVED_WHERE_REASON
        params["reason"] = reason
    if before is not None:
        where += operations_sql.OBSERVED_WHERE_BEFORE
        params.update(before_at=before.paused_since, before_id=before.workflow_id)
    fetched = [ObservedRow(**row) for row in fetch_dicts(operations_sql.OBSERVED_DECISIONS.format(where=where), params)]
    rows = fetched[:page_size]
    next_cursor = rows[-1].cursor if len(fetched) > page_size else None
    return ObservedPage(rows=rows, next_cursor=next_cursor, rates=agreement_rates(now=now), since=now - RATE_WINDOW)
