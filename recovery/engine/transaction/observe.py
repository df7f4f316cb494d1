"""Observe mode (RECOVERY_MODE=observe, docs/architecture.md §16): what a cycle would decide,
journaled and applied to nothing.

A site switching recovery on for the first time wants to watch what it would do before it lets it
change WMS records. So an observing cycle reads the full evidence of the workflows its
classification found needing a decision, decides each afresh, and journals every decision that
would change state as a RecoveryDecision marked `observed`, with the evidence it was made on. It
writes no WMS table and takes no row lock: the evidence is read with a plain SELECT (no
`FOR UPDATE`, no SKIP LOCKED), so a workflow held by a callback or an operator is observed as it
was last committed, and nothing waits for anything. The journal is the console's own table.

A workflow left as it is needs the same decision every cycle: it is journaled again only when its
decision or its evidence changed (wms_sql.INSERT_OBSERVED_DECISIONS), so the journal grows with
what happens on the floor, not with the number of cycles.
"""

import json
from dataclasses import dataclass

from django.db import connection

from recovery.engine import wms_sql
from recovery.engine.decisions import decide
from recovery.engine.evidence import evidence_for_workflows
from recovery.engine.transaction import Outcome, ReconcileResult


@dataclass(frozen=True)
class Observed:
    results: list[ReconcileResult]  # one per workflow read: OBSERVED, or LEFT (the table says leave it now)
    journaled: frozenset[int]  # the workflows whose observation is a new journal row


def observe_workflows(workflow_ids: list[int], *, cycle_id: int | None) -> Observed:
    """Decide `workflow_ids` on their evidence as committed now, without locking them, and journal
    the decisions that would change state as observed (one read and one insert)."""
    results = []
    rows = {"workflow_ids": [], "step_ids": [], "actions": [], "reasons": [], "rules": [], "evidence": [],
            "fingerprints": []}
    for evidence in evidence_for_workflows(workflow_ids):
        decision = decide(evidence)
        if not decision.changes_state:
            results.append(ReconcileResult(evidence.workflow_id, Outcome.LEFT, decision, evidence))
            continue
        results.append(ReconcileResult(evidence.workflow_id, Outcome.OBSERVED, decision, evidence))
        rows["workflow_ids"].append(evidence.workflow_id)
        rows["step_ids"].append(evidence.step.step_id if evidence.step else None)
        rows["actions"].append(decision.action.value)
        rows["reasons"].append(decision.reason.value if decision.reason else "")
        rows["rules"].append(decision.rule.value)
        rows["evidence"].append(json.dumps(evidence.as_json()))
        rows["fingerprints"].append(evidence.fingerprint)
    journaled: frozenset[int] = frozenset()
    if rows["workflow_ids"]:
        with connection.cursor() as cursor:
            cursor.execute(wms_sql.INSERT_OBSERVED_DECISIONS, {"cycle_id": cycle_id, **rows})
            journaled = frozenset(row[0] for row in cursor.fetchall())
    return Observed(results, journaled)
