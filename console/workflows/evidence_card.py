"""The evidence card: expected (from the step) beside observed, field by field (pure).

For the first incomplete step, every field the decision table looks at is listed with what
the step expects and what the WMS holds; a field that disagrees is a mismatch and names the
rule that checks it, read from the decision table's specs (recovery.engine.decisions.checking_rule:
the deciding rule when its facts name the field's key, else the first rule in precedence whose
facts name it, while the card expects its state). The rule that decided - the one that
produced the pause reason - is the card's headline, and its mismatching fields are marked
decisive.

A paused workflow is evaluated as if it were ACTIVE: that is the table's verdict on the
evidence (what "re-check" would find), not the "leave paused workflows alone" rule.
"""

from dataclasses import dataclass, replace
from enum import StrEnum

from django.utils.translation import gettext as _

from console.runbook import rule_explanation
from recovery.engine.decisions import Decision, ExpectedState, Rule, checking_rule, decide_as_if_active, expected_state
from recovery.engine.evidence import (
    ACTIVE_JOB_STATUSES,
    FINISHED_JOB_STATUS,
    TIDY_MOVE,
    JobEvidence,
    TidyRecoveryEvidence,
)

NONE = "—"
# Pausing itself sets the step to PAUSED_RECOVERY: not a change worth pointing out.
NOT_COMPARED = frozenset({"step.status"})


class Check(StrEnum):
    OK = "ok"
    MISMATCH = "mismatch"
    INFO = "info"  # shown for context; no rule compares it


@dataclass(frozen=True)
class CardField:
    key: str  # stable across cards, to compare "as journaled" with "now"
    label: str
    expected: str
    observed: str
    check: Check
    rule: Rule | None = None
    decisive: bool = False
    changed: bool = False  # observed differs from the baseline card (the journaled evidence)

    @property
    def mismatch(self) -> bool:
        return self.check is Check.MISMATCH

    @property
    def rule_explanation(self) -> str:
        return rule_explanation(self.rule) if self.rule else ""


@dataclass(frozen=True)
class CardSection:
    title: str
    table: str
    fields: tuple[CardField, ...]

    @property
    def mismatch_count(self) -> int:
        return sum(f.mismatch for f in self.fields)


@dataclass(frozen=True)
class EvidenceCard:
    workflow_id: int
    workflow_status: str
    step_no: int | None
    decision: Decision
    expected_state: ExpectedState | None
    sections: tuple[CardSection, ...]
    fingerprint: str

    @property
    def rule(self) -> Rule:
        return self.decision.rule

    @property
    def rule_explanation(self) -> str:
        return rule_explanation(self.decision.rule)

    @property
    def reason(self) -> str | None:
        return self.decision.reason.value if self.decision.reason else None

    @property
    def mismatches(self) -> list[CardField]:
        return [f for s in self.sections for f in s.fields if f.mismatch]

    @property
    def decisive_fields(self) -> list[CardField]:
        return [f for f in self.mismatches if f.decisive]

    @property
    def changed_fields(self) -> list[CardField]:
        return [f for s in self.sections for f in s.fields if f.changed]

    def field(self, key: str) -> CardField:
        for section in self.sections:
            for f in section.fields:
                if f.key == key:
                    return f
        raise KeyError(key)


def _text(value) -> str:
    return NONE if value is None or value == "" else str(value)


def table_decision(evidence: TidyRecoveryEvidence) -> Decision:
    """The decision table's verdict on the evidence, a paused workflow taken as ACTIVE."""
    return decide_as_if_active(evidence)


def _checked(ok: bool) -> Check:
    return Check.OK if ok else Check.MISMATCH


def _job_fields(ev: TidyRecoveryEvidence, job: JobEvidence | None, *, prefix: str) -> list[CardField]:
    step = ev.step
    if job is None:
        return []
    wrong = set(ev.job_mismatches(job))
    expected = {
        "job_id": ev.expected_job_id,
        "in_or_out": _("%(type)s (tidy move)") % {"type": TIDY_MOVE},
        "tray_code": step.tray_code,
        "cargo_space_id": step.cargo_space_id,
        "target_cargo_space_id": step.target_cargo_space_id,
    }
    labels = {"job_id": _("Job id"), "in_or_out": _("Type (in_or_out)"), "tray_code": _("Tray"),
              "cargo_space_id": _("Source space"), "target_cargo_space_id": _("Target space")}
    out = []
    for name, label in labels.items():
        out.append(CardField(f"{prefix}.{name}", label, _text(expected[name]), _text(getattr(job, name)),
                             _checked(name not in wrong)))
    return out


def _wcs_report_fields(ev: TidyRecoveryEvidence) -> tuple[CardField, ...]:
    """The tray and place the WCS's latest finish report for the active job named, beside the
    step's; one it did not name is shown, not compared (the callback compared the rest)."""
    step = ev.step

    def reported(key, label, expected, observed):
        if observed is None:
            return CardField(key, label, _text(expected), _("not reported"), Check.INFO)
        return CardField(key, label, _text(expected), observed,
                         _checked(observed == expected or not ev.finish_report_mismatch))

    return (reported("wcs_report.tray", _("Reported tray"), step.tray_code, ev.finish_report_tray_code),
            reported("wcs_report.location", _("Reported place"), step.target_cargo_space_id,
                     ev.finish_report_location))


def _stock_and_space_fields(ev: TidyRecoveryEvidence, state: ExpectedState | None) -> tuple[list, list, list]:
    step = ev.step

    def field(key, label, expected, observed, ok):
        return CardField(key, label, expected, observed, Check.INFO if state is None else _checked(ok))

    n = ev.stock_rows
    all_rows = _("all rows")
    at_src_exp = {ExpectedState.PRE_MOVE: all_rows, ExpectedState.TERMINAL: "0"}.get(state, NONE)
    at_tgt_exp = {ExpectedState.PRE_MOVE: "0", ExpectedState.TERMINAL: all_rows}.get(state, NONE)
    at_src_ok = ev.stock_at_source_only if state is ExpectedState.PRE_MOVE else ev.stock_at_source == 0
    at_tgt_ok = ev.stock_at_target_only if state is ExpectedState.TERMINAL else ev.stock_at_target == 0
    def of(part: int) -> str:
        return _("%(part)s of %(whole)s") % {"part": part, "whole": n}

    stock = [
        field("stock.rows", _("Stock rows of the tray"), _("at least 1"), str(n), n > 0),
        field("stock.at_source", _("Rows at source %(space)s") % {"space": step.cargo_space_id}, at_src_exp,
              of(ev.stock_at_source), at_src_ok),
        field("stock.at_target", _("Rows at target %(space)s") % {"space": step.target_cargo_space_id}, at_tgt_exp,
              of(ev.stock_at_target), at_tgt_ok),
        CardField("stock.locations", _("Booked at"), NONE, ", ".join(ev.stock_locations) or _("no stock rows"),
                  Check.INFO),
    ]

    empty = _("empty")

    def holds(exists: bool, tray: str | None) -> str:
        if not exists:
            return _("space not in bas_cargo_space")
        return tray if tray else empty

    tray = step.tray_code
    holds_tray = _("holds %(tray)s") % {"tray": tray}
    src_exp = {ExpectedState.PRE_MOVE: holds_tray, ExpectedState.TERMINAL: empty}.get(state, NONE)
    tgt_exp = {ExpectedState.PRE_MOVE: _("does not hold %(tray)s") % {"tray": tray},
               ExpectedState.TERMINAL: holds_tray}.get(state, NONE)
    src_ok = ev.source_tray_code == tray if state is ExpectedState.PRE_MOVE else ev.source_tray_code is None
    tgt_ok = ev.target_tray_code != tray if state is ExpectedState.PRE_MOVE else ev.target_tray_code == tray
    source = [field("source.tray", _("Source %(space)s") % {"space": step.cargo_space_id}, src_exp,
                    holds(ev.source_exists, ev.source_tray_code), src_ok)]
    target = [field("target.tray", _("Target %(space)s") % {"space": step.target_cargo_space_id}, tgt_exp,
                    holds(ev.target_exists, ev.target_tray_code), tgt_ok)]
    return stock, source, target


def build_evidence_card(evidence: TidyRecoveryEvidence, *,
                        baseline: "TidyRecoveryEvidence | EvidenceCard | None" = None) -> EvidenceCard:
    """The card for `evidence`; with `baseline` (the journaled evidence, or the card already
    built from it), fields whose observed value differs from the baseline's are marked `changed`."""
    ev = evidence
    decision = table_decision(ev)
    state = expected_state(ev)
    sections: list[CardSection] = []

    if ev.step is None:
        def of(part: int) -> str:
            return _("%(part)s of %(whole)s") % {"part": part, "whole": ev.step_count}

        sections.append(CardSection(_("Workflow"), "alg.tidy_workflow", (
            CardField("workflow.steps", _("Steps completed"), of(ev.step_count), of(ev.completed_step_count),
                      Check.INFO),
            CardField("workflow.active_jobs", _("Active TDY jobs of the workflow"), "0", str(ev.active_tidy_job_count),
                      _checked(ev.active_tidy_job_count == 0)),
        )))
    else:
        step = ev.step
        sections.append(CardSection(_("Step %(step)s (first incomplete)") % {"step": step.step_no}, "alg.tidy_step", (
            CardField("step.status", _("Step status"), NONE, _text(step.status), Check.INFO),
            CardField("step.tray", _("Tray"), NONE, step.tray_code, Check.INFO),
            CardField("step.source", _("Source space"), NONE, step.cargo_space_id, Check.INFO),
            CardField("step.target", _("Target space"), NONE, step.target_cargo_space_id, Check.INFO),
            CardField("step.job_id", _("Deterministic job id"), NONE, ev.expected_job_id, Check.INFO),
        )))

        active, finished = ev.active_job, ev.finish_job
        if active is not None and finished is not None:
            expected_active = expected_finish = _("only one of the two")
        elif active is None and finished is None:
            expected_active, expected_finish = _("present (or archived)"), _("present (or active)")
        else:
            expected_active = expected_finish = NONE
        # Exactly one of the two rows is what every consistent step has: shown, not compared.
        presence_check = Check.INFO if (active is None) != (finished is None) else Check.MISMATCH

        present, absent = _("present"), _("none")
        active_fields = [CardField("active.present", _("Row in mydo_job"), expected_active,
                                   present if active else absent, presence_check)]
        if active is not None:
            active_fields += _job_fields(ev, active, prefix="active")
            active_fields.append(CardField(
                "active.status", _("Status"), _("1, 2 or 3 (created, dispatched, executing)"), _text(active.status),
                _checked(active.status in ACTIVE_JOB_STATUSES)))
        sections.append(CardSection(_("Active job"), "mydo_job", tuple(active_fields)))

        if active is not None and (ev.finish_report_mismatch or ev.finish_report_tray_code
                                   or ev.finish_report_location):
            sections.append(CardSection(_("WCS finish report (latest)"), "recovery_callbackreceipt",
                                        _wcs_report_fields(ev)))

        finish_fields = [CardField("finish.present", _("Row in mydo_job_finish"), expected_finish,
                                   present if finished else absent, presence_check)]
        if finished is not None:
            finish_fields += _job_fields(ev, finished, prefix="finish")
            finish_fields.append(CardField(
                "finish.status", _("Status"), _("%(status)s (finished)") % {"status": FINISHED_JOB_STATUS},
                _text(finished.status), _checked(finished.status == FINISHED_JOB_STATUS)))
            finish_fields.append(CardField(
                "finish.count", _("Archive rows with this id"), "1", str(ev.finish_job_count),
                _checked(ev.finish_job_count == 1)))
        sections.append(CardSection(_("Finished job"), "mydo_job_finish", tuple(finish_fields)))

        stock, source, target = _stock_and_space_fields(ev, state)
        sections.append(CardSection(_("Stock"), "bas_stock", tuple(stock)))
        sections.append(CardSection(_("Spaces"), "bas_cargo_space", tuple(source + target)))

    sections.append(CardSection(_("Locks"), "alg.tidy_space_lock", (
        CardField("locks.count", _("Spaces locked by the workflow"), NONE, str(ev.lock_count), Check.INFO),
    )))

    baseline_observed: dict[str, str] | None = None
    if baseline is not None:
        base = baseline if isinstance(baseline, EvidenceCard) else build_evidence_card(baseline)
        baseline_observed = {f.key: f.observed for s in base.sections for f in s.fields}

    def finish(f: CardField) -> CardField:
        # A disagreement names the rule the decision table's specs say checks it (§5).
        rule = checking_rule(f.key, state, decision.rule) if f.mismatch else None
        changed = (baseline_observed is not None and f.key not in NOT_COMPARED
                   and baseline_observed.get(f.key) != f.observed)
        return replace(f, rule=rule, decisive=f.mismatch and rule is decision.rule, changed=changed)

    sections = [replace(s, fields=tuple(finish(f) for f in s.fields)) for s in sections]
    return EvidenceCard(
        workflow_id=ev.workflow_id,
        workflow_status=ev.workflow_status,
        step_no=ev.step.step_no if ev.step else None,
        decision=decision,
        expected_state=state,
        sections=tuple(sections),
        fingerprint=ev.fingerprint,
    )
