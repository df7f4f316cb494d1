"""The message ids of the repair flow's stored texts (docs/architecture.md §15).

A refusal, an audit row's message and its "decision table afterwards" are stored as a
`recovery.messages.Message` (one of these ids with its values) beside their English rendering;
the pages render the message again in the reader's language (`shown`). The mutations'
summaries are declared the same way where they are written, in recovery/engine/transaction/repair.py.
Nothing reads stored English back.
"""

from django.utils import translation
from django.utils.translation import gettext_noop

from console import messages
from recovery.messages import Message


def shown(stored, fallback: str = ""):
    """A repair text as a page shows it: in English exactly as stored (`fallback`, the row's
    English column; escaped by the template, as the repair pages always showed it); in another
    language the message made again (console.messages.shown: HTML, values escaped and marked as
    code), or `fallback` for a row written before messages were stored."""
    if (translation.get_language() or "en").startswith("en"):
        if fallback:
            return fallback
        msg = stored if isinstance(stored, Message) else Message.from_json(stored)
        return msg.english() if msg is not None else ""
    return messages.shown(stored, fallback)


# --- frame -----------------------------------------------------------------------------------------
BUSY = gettext_noop("Workflow %(workflow_id)s is busy: recovery, a callback or another repair held it for over "
                    "%(ms)s ms. Nothing changed; try again.")
NOT_FOUND = gettext_noop("Workflow %(workflow_id)s does not exist.")
NOT_FOUND_ASSESSED = gettext_noop("workflow not found")
STILL_PAUSED = gettext_noop("still %(wf_status)s; if it were active the table would say %(decision)s")
DECIDED = gettext_noop("%(wf_status)s: %(decision)s")
STALE_APPLIED = gettext_noop("The evidence changed since your preview; nothing was applied. Review the current "
                             "evidence and preview again.")
FORBIDDEN = gettext_noop("Your role may not take this action.")
KEY_MISSING = gettext_noop("The form is missing its submission key; open it again.")
KEY_OTHERS = gettext_noop("This form was submitted by someone else; open it again.")
STALE_WRITE_APPLY = gettext_noop("The records changed while applying; nothing applied (%(error)s).")
STALE_WRITE_PREVIEW = gettext_noop("The records changed while previewing: %(error)s")

# --- actions -----------------------------------------------------------------------------------------
MOVING_WARNING = gettext_noop("Active job(s) %(jobs)s are dispatched or executing: make sure the WCS has stopped "
                              "them before approving.")
PROPOSAL_PENDING = gettext_noop("A cancel proposal is already waiting for approval.")

# --- rules -------------------------------------------------------------------------------------------
NOT_PAUSED = gettext_noop("The workflow is %(wf_status)s; repairs are only for PAUSED_RECOVERY workflows.")
STILL_PAUSES = gettext_noop("The decision table still says pause with %(reason)s: %(explanation)s")
NO_STEP_TO_ISSUE = gettext_noop("Every step is COMPLETED: there is no step to issue a job for.")
JOB_NOT_MISSING = gettext_noop("The job %(job_id)s is not missing: it is active (status %(job_status)s).")
JOB_HAS_FINISH = gettext_noop("The job %(job_id)s has a finish row: an archived job id cannot be issued again.")
NOT_PRE_MOVE = gettext_noop("The pre-move state does not hold (stock at source, source holds the tray, target "
                            "does not).")
LEFTOVER_JOBS = gettext_noop("Every step is COMPLETED and %(count)s job(s) are still active: reconcile needs "
                             "exactly one leftover job.")
NO_STEP_TO_RECONCILE = gettext_noop("No step to reconcile.")
NO_STOCK = gettext_noop("The tray %(tray)s has no stock rows: the WMS must book its goods first.")
SOURCE_MISSING = gettext_noop("The source space %(space)s does not exist in bas_cargo_space.")
TARGET_MISSING = gettext_noop("The target space %(space)s does not exist in bas_cargo_space.")
SOURCE_TAKEN = gettext_noop("The source space %(space)s records another tray (%(other)s); resolve that tray first.")
TARGET_TAKEN = gettext_noop("The target space %(space)s records another tray (%(other)s); resolve that tray first.")
NO_RESUME_AT_SOURCE = gettext_noop("Every step is COMPLETED: the move cannot be resumed at the source.")
JOB_ARCHIVED = gettext_noop("The job %(job_id)s is archived (finish row): it cannot be un-archived nor issued "
                            "again. If the tray is at the target, reconcile to the target; otherwise a shift lead "
                            "must cancel the workflow.")
OTHER_MOVE = gettext_noop("The active job %(job_id)s describes a different move (tray %(tray)s, %(source)s -> "
                          "%(target)s): fix it in the WMS and re-check, or cancel.")
REASON_MISSING = gettext_noop("A written reason is required.")
REASON_TOO_SHORT = gettext_noop("Write at least %(min)s characters: what you saw and why this action fits.")
REASON_TOO_LONG = gettext_noop("Keep the reason under %(max)s characters.")
CODE_NOT_ALLOWED = gettext_noop("Reason code %(code)s is not allowed for this action and pause reason "
                                "%(reason)s.")
MOVING_NO_STEP = gettext_noop("Job(s) %(jobs)s may be moving a tray and no single step of the workflow is current: "
                              "stop the jobs in the WCS and re-check before cancelling.")
SCAN_TRAY = gettext_noop("Scan or type the tray code read on the tray.")
SCAN_SPACE = gettext_noop("Scan or type the space where the tray stands now.")
FLOOR_REQUIRED = gettext_noop("Job(s) %(jobs)s are dispatched or executing: a vehicle may be moving tray %(tray)s. "
                              "Cancelling frees its spaces, so first find the tray on the floor and confirm its "
                              "code and the space where it stands; the records are corrected to that space.")
FLOOR_WRONG_TRAY = gettext_noop("Scanned tray %(tray)s is not the step's tray %(expected)s.")
FLOOR_NO_SPACE = gettext_noop("Space %(space)s does not exist in bas_cargo_space.")
FLOOR_SPACE_TAKEN = gettext_noop("Space %(space)s records another tray (%(other)s): the tray cannot stand there; "
                                 "check the code or resolve that tray first.")
FLOOR_MISFIT = gettext_noop("The floor confirmation does not fit the records: %(details)s")
WRONG_TRAY = gettext_noop("Scanned tray %(tray)s is not the step's tray.")
WRONG_SOURCE = gettext_noop("Scanned space %(space)s is not the step's source.")
WRONG_TARGET = gettext_noop("Scanned space %(space)s is not the step's target.")
OTHER_END = gettext_noop("That is the other end of the move: choose the other location.")
CODES_MISMATCH = gettext_noop("The scanned codes do not match the records: %(details)s")
NONE = gettext_noop("(none)")
EMPTY = gettext_noop("(empty)")

# --- four eyes -----------------------------------------------------------------------------------------
STALE_PROPOSED = gettext_noop("The evidence changed since your preview; nothing was proposed. Review the current "
                              "evidence and preview again.")
PROPOSED = gettext_noop("cancel-and-release proposed (proposal %(proposal)s)")
NEEDS_SECOND_LEAD = gettext_noop("a different shift lead must approve it")
FLOOR_CONFIRMED = gettext_noop("floor confirmation: tray %(tray)s stands at %(space)s")
PROPOSAL_CLOSED = gettext_noop("The proposal is %(wf_status)s, not pending.")
PROPOSAL_STALE = gettext_noop("The evidence changed since the proposal; nothing was cancelled and the proposal is "
                              "closed as STALE. Propose again on the current evidence if cancelling is still right.")
APPROVE_FORBIDDEN = gettext_noop("Only a shift lead may approve cancel-and-release.")
SELF_APPROVAL = gettext_noop("Nobody approves their own proposal: a different shift lead must approve it.")
STALE_APPROVAL = gettext_noop("The evidence changed since your preview; nothing was cancelled. Open the proposal "
                              "again and review the current evidence.")
APPROVED = gettext_noop("approved proposal %(proposal)s by %(user)s: %(summary)s")
REJECT_FORBIDDEN = gettext_noop("Only a shift lead may reject cancel-and-release.")
REJECTED = gettext_noop("rejected proposal %(proposal)s by %(user)s")
NOTHING_CHANGED = gettext_noop("nothing changed")

# --- batch and the panel ---------------------------------------------------------------------------------
RECHECK_FORBIDDEN = gettext_noop("Your role may not re-check workflows.")
SELECT_ONE = gettext_noop("Select at least one workflow.")
BATCH_TOO_BIG = gettext_noop("A batch holds at most %(limit)s workflows.")
PENDING_PROPOSAL = gettext_noop("A cancel proposal is already waiting for approval (proposal %(proposal)s).")
NO_CODE_FITS = gettext_noop("No reason code fits this action for pause reason %(reason)s.")
