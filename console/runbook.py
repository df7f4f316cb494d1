"""The pause-reason runbook: what each pause reason means, what to check on the
floor, and which corrections are allowed for it: only what a person reads and does. Which rules
give a reason, what they check and in which order the reasons are listed come from the decision
table's specs (recovery.engine.decisions.RULE_SPECS, docs/architecture.md §5).

One module read by the catalog page, the paused list, the workflow page and the repair flow,
so the runbook a supervisor reads and the actions an operator is offered never disagree.
The allowed corrections are an upper bound per reason: the repair flow still checks each
action's preconditions on the current evidence (console.repair.registry) before it offers it.
"""

from dataclasses import dataclass
from enum import StrEnum

from django.utils.functional import Promise
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from recovery.engine.decisions import SPEC_BY_RULE, Reason, Rule, rules_giving


class Correction(StrEnum):
    """The runbook's corrections, by value: the families of the repair actions (both reconciles
    are one correction, the three cancel steps another). Each one's label, effect and role are
    declared with the actions, in console.repair.registry (a higher layer than the runbook), and
    tests/console/repair/test_repair_registry.py checks the two agree."""

    RECHECK = "recheck"
    REISSUE = "reissue"
    RECONCILE = "reconcile"
    CANCEL = "cancel"


Text = str | Promise  # a translatable text: shown in the reader's language when rendered


def rule_explanation(rule: Rule) -> str:
    """What a decision-table rule checks, in the reader's language: its spec's explanation
    (recovery/engine/decisions.py marks it with gettext_noop, so the catalogue holds it)."""
    return gettext(SPEC_BY_RULE[rule].explanation)


@dataclass(frozen=True)
class AllowedCorrection:
    """A correction allowed (or refused) for a pause reason, and why; the page that shows it
    looks its label, effect and role up in console.repair.registry.FAMILIES."""

    correction: Correction
    why: Text


@dataclass(frozen=True)
class PauseReasonRunbook:
    """The runbook entry of one pause reason (recovery.engine.decisions.Reason): what a person reads and
    does. The rules that give the reason and their explanations come from the decision table's
    specs (recovery.engine.decisions.RULE_SPECS)."""

    code: Reason
    title: Text
    meaning: Text
    floor_checks: tuple[Text, ...]
    allowed: tuple[AllowedCorrection, ...]
    not_allowed: tuple[AllowedCorrection, ...] = ()  # corrections refused, with the reason why

    @property
    def anchor(self) -> str:
        return self.code.value

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The decision-table rules that give this reason, in precedence order."""
        return rules_giving(self.code)

    @property
    def rule_explanations(self) -> list[tuple[Rule, Text]]:
        return [(rule, rule_explanation(rule)) for rule in self.rules]

    @property
    def corrections(self) -> tuple[Correction, ...]:
        return tuple(a.correction for a in self.allowed)


_RECHECK_WHY = _("Always offered: it only re-runs the decision table on the current evidence, so it can never "
                 "do more than recovery itself would.")


def _recheck_why(when: Text) -> Text:
    return format_lazy("{} {}", _RECHECK_WHY, when)


_CANCEL_WHY = _("Always possible for an abandoned tidy; it releases the spaces, so it needs a shift lead and a "
                "second shift lead's approval.")

CATALOG: dict[Reason, PauseReasonRunbook] = {
    Reason.JOB_MISSING: PauseReasonRunbook(
        code=Reason.JOB_MISSING,
        title=_("Move job missing"),
        meaning=_("The step's move job TDY-<workflow>-<step> is in neither mydo_job (active) nor mydo_job_finish "
                  "(archive). The WMS has no record that the move was ever sent or finished, so recovery cannot "
                  "tell whether the tray moved."),
        floor_checks=(
            _("Find the tray (its code is on the step) and note the space it physically stands in."),
            _("Compare with the step's source and target spaces."),
            _("Ask WCS / the vehicle operator whether a move for this tray is still running; wait until none is."),
        ),
        allowed=(
            AllowedCorrection(Correction.RECHECK, _recheck_why(_("Use it after the job row was restored in the WMS."))),
            AllowedCorrection(Correction.REISSUE,
                              _("The only reason whose preconditions can hold: no active and no finished job "
                                "exists. Offered only while the pre-move state holds (stock and tray still at "
                                "the source, target free), so the re-issued move starts from where it should. "
                                "Applied only with the tray code and the space it stands in scanned on the floor, "
                                "matching the step's tray and source: a move that ran but whose acknowledgement "
                                "was lost looks the same in the records.")),
            AllowedCorrection(Correction.RECONCILE,
                              _("When the tray is found at the target (it moved, but the job row was lost), the "
                                "records are corrected to the target and the step advances; found at the source, "
                                "the job is re-issued.")),
            AllowedCorrection(Correction.CANCEL, _CANCEL_WHY),
        ),
    ),
    Reason.JOB_MISMATCH: PauseReasonRunbook(
        code=Reason.JOB_MISMATCH,
        title=_("Move job does not match the step"),
        meaning=_("A job with the step's id exists, but its type (in_or_out), tray, source or target differs "
                  "from the step, or the same job id is both active and archived. The WMS holds two "
                  "contradicting versions of the move."),
        floor_checks=(
            _("Read the highlighted fields: which tray and which spaces does the job name, and which does the step?"),
            _("Find the step's tray and the job's tray on the floor; note where each physically is."),
            _("Check whether the job's source or target space holds an unexpected tray."),
        ),
        allowed=(
            AllowedCorrection(Correction.RECHECK,
                              _recheck_why(_("Use it after the job row was corrected in the WMS."))),
            AllowedCorrection(Correction.RECONCILE,
                              _("The operator states where the step's tray physically is; records are set to that "
                                "location and the contradicting job is archived (kept, never deleted).")),
            AllowedCorrection(Correction.CANCEL, _CANCEL_WHY),
        ),
        not_allowed=(
            AllowedCorrection(Correction.REISSUE,
                              _("A job with the deterministic id already exists (active or archived); re-issuing "
                                "would create a second, competing move for the same step.")),
        ),
    ),
    Reason.ACTIVE_EVIDENCE_INVALID: PauseReasonRunbook(
        code=Reason.ACTIVE_EVIDENCE_INVALID,
        title=_("Active job, but inventory is not in the pre-move state"),
        meaning=_("A matching active job exists, but the stock rows or the source/target spaces are not where a "
                  "move that has not finished would leave them (stock at source, source holds the tray, target "
                  "does not) - or the job's status is not 1, 2 or 3, or every step is complete while a tidy job "
                  "is still active. Typically the tray moved but the job was never archived."),
        floor_checks=(
            _("Find the tray: is it at the step's source or at its target?"),
            _("Check the job's status on the WCS screen: is the vehicle still executing it?"),
            _("Compare the stock rows' spaces with where the tray physically is."),
        ),
        allowed=(
            AllowedCorrection(Correction.RECHECK, _recheck_why(_("Use it once the WCS finished the job normally."))),
            AllowedCorrection(Correction.RECONCILE,
                              _("The operator states where the tray is; at the target the active job is archived "
                                "and the step advances, at the source the records are reset to the pre-move state.")),
            AllowedCorrection(Correction.CANCEL, _CANCEL_WHY),
        ),
        not_allowed=(
            AllowedCorrection(Correction.REISSUE,
                              _("The job still exists in mydo_job; a second job with the same id cannot be created.")),
        ),
    ),
    Reason.FINISH_EVIDENCE_INVALID: PauseReasonRunbook(
        code=Reason.FINISH_EVIDENCE_INVALID,
        title=_("Finished job, but inventory is not in the terminal state"),
        meaning=_("A matching job is archived in mydo_job_finish, but its status is not 4, it is archived more "
                  "than once, or the stock rows and spaces are not where a finished move leaves them (stock at "
                  "target, source empty, target holds the tray). The WMS says the move finished; the inventory "
                  "records disagree."),
        floor_checks=(
            _("Find the tray: is it at the step's target (the move happened) or still at the source?"),
            _("Check the stock rows: are some of the tray's SKUs booked at a third space?"),
            _("Check the source space: does it hold another tray?"),
        ),
        allowed=(
            AllowedCorrection(Correction.RECHECK, _recheck_why(_("Use it after the stock or space rows were fixed."))),
            AllowedCorrection(Correction.RECONCILE,
                              _("The operator states where the tray is; records are corrected to that location "
                                "and the step advances (target) or is resumed (source) with an operator stage.")),
            AllowedCorrection(Correction.CANCEL, _CANCEL_WHY),
        ),
        not_allowed=(
            AllowedCorrection(Correction.REISSUE,
                              _("The job id is already archived; the deterministic id cannot be issued twice.")),
        ),
    ),
    Reason.WCS_REPORT_MISMATCH: PauseReasonRunbook(
        code=Reason.WCS_REPORT_MISMATCH,
        title=_("WCS reported another tray or place"),
        meaning=_("The WCS reported the step's move finished, but named another tray than the step's, or another "
                  "space than its target. The callback moved nothing, so the WMS still shows the move as not "
                  "done, while the floor may hold the wrong tray at the target or the right tray somewhere else."),
        floor_checks=(
            _("Find the step's tray on the floor and note the space it physically stands in."),
            _("Go to the step's target space: which tray stands there? Compare with the reported tray."),
            _("Ask WCS / the vehicle operator which load the vehicle actually delivered, and where."),
        ),
        allowed=(
            AllowedCorrection(Correction.RECONCILE,
                              _("Scanned on the floor: the operator scans the step's tray and the space it stands "
                                "in; at the target the job is archived and the step advances, at the source the "
                                "move stays open for the WCS to run again.")),
            AllowedCorrection(Correction.CANCEL, _CANCEL_WHY),
        ),
        not_allowed=(
            AllowedCorrection(Correction.RECHECK,
                              _("The WMS records are consistent; re-running the decision table would find the "
                                "same report again. Only someone on the floor can say where the tray is.")),
            AllowedCorrection(Correction.REISSUE,
                              _("The job still exists in mydo_job; a second job with the same id cannot be created.")),
        ),
    ),
}


def reason_code(code: str | None) -> PauseReasonRunbook | None:
    """The catalog entry for a pause reason, or None for a code the catalog does not know."""
    try:
        return CATALOG[Reason(code)]
    except ValueError:
        return None


def allowed_corrections(code: str | None) -> tuple[Correction, ...]:
    entry = reason_code(code)
    return entry.corrections if entry else (Correction.RECHECK, Correction.CANCEL)
