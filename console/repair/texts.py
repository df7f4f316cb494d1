"""The sentences the repair flow writes, and their display in the reader's language.

A refusal's message, an audit row's message and its "decision table afterwards" are stored in
English (the audit journal keeps facts, read the same way by every tool and export). Each is
built from one of the sentence templates below, `%(name)s` placeholders filled with codes, ids
and numbers; the mutation summaries and the decision table's explanations of `recovery` are
listed too, word for word. `shown(text)` reads a stored text back into its templates (several
sentences joined by " " or "; " are read one by one) and renders it in the active language,
the values as `<code>`: so an audit row written in English reads in Chinese to a Chinese
reader. In English, and for a text it cannot read, it returns the text as it is.
"""

import re
from functools import cache, lru_cache

from django.utils import translation
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, gettext_noop

from recovery.decisions import RULE_EXPLANATIONS

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

# --- recovery.transaction.repair: the mutations' summaries, word for word -----------------------------------
RECOVERY_SENTENCES = (
    gettext_noop("resumed; the finished step %(step_no)s was advanced (%(stage)s)"),
    gettext_noop("resumed; every step was completed, so the workflow was completed and its locks released"),
    gettext_noop("resumed; the workflow is active again and its job continues"),
    gettext_noop("job %(job_id)s created again (status 1)"),
    gettext_noop("step %(step_no)s DISPATCHED"),
    gettext_noop("workflow ACTIVE"),
    gettext_noop("tray %(tray)s recorded at source %(space)s"),
    gettext_noop("job %(job_id)s created (status 1)"),
    gettext_noop("job %(job_id)s kept (status %(job_status)s)"),
    gettext_noop("job %(job_id)s status %(job_status)s reset to 1"),
    gettext_noop("tray %(tray)s recorded at target %(space)s"),
    gettext_noop("job %(job_id)s archived with status %(job_status)s"),
    gettext_noop("workflow COMPLETED, locks released"),
    gettext_noop("step %(step_no)s COMPLETED"),
    gettext_noop("next job %(job_id)s dispatched"),
    gettext_noop("%(count)s step(s) CANCELLED"),
    gettext_noop("%(count)s active job(s) archived with their own status"),
    gettext_noop("workflow CANCELLED"),
    gettext_noop("%(count)s lock(s) released"),
    gettext_noop("tray %(tray)s recorded at %(space)s, where it was found on the floor"),
)

# Placeholders read back with their own pattern; any other name matches any text.
NUMBER = r"\d+"
CODE = r"\S+?"
PATTERNS = {
    "workflow_id": NUMBER, "ms": NUMBER, "count": NUMBER, "min": NUMBER, "max": NUMBER, "limit": NUMBER,
    "proposal": NUMBER, "step_no": NUMBER, "job_status": r"\S+?", "wf_status": r"[A-Z][A-Z_]*",
    "job_id": CODE, "tray": CODE, "space": CODE, "other": CODE, "source": CODE, "target": CODE,
    "expected": CODE, "stage": CODE, "reason": r"\S+?", "user": CODE,
}
# Any other value stops short of "; ", where the next sentence of a summary begins.
ANY = r"(?:(?!; ).)+?"
# Placeholders holding sentences of their own, read back the same way.
NESTED = frozenset({"details", "summary", "explanation"})
SPLIT = re.compile("; | ")
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def english(template: str, **values) -> str:
    """The stored (English) text of a template."""
    return template % values if values else template


def _templates() -> list[str]:
    skip = {"NUMBER", "CODE", "ANY", "NONE", "EMPTY"}
    # The decision rules' explanations are recovery's own English (their translations are marked
    # once, in console/reason_codes.py RULE_TEXTS).
    return [v for k, v in globals().items() if k.isupper() and k not in skip and isinstance(v, str)] + list(
        RECOVERY_SENTENCES) + list(RULE_EXPLANATIONS.values())


@cache
def _compiled() -> list[tuple[str, re.Pattern]]:
    out = []
    for template in _templates():
        pattern, pos = [], 0
        for m in _PLACEHOLDER.finditer(template):
            pattern.append(re.escape(template[pos:m.start()]))
            name = m.group(1)
            pattern.append(f"(?P<{name}>{'.+?' if name in NESTED else PATTERNS.get(name, ANY)})")
            pos = m.end()
        pattern.append(re.escape(template[pos:]))
        out.append((template, re.compile("".join(pattern), re.S)))
    return out


def _value(name: str, value: str) -> str | None:
    if name in NESTED:
        return _read(translation.get_language(), value)
    if value in (NONE, EMPTY):
        return escape(gettext(value))
    if value.isdigit():
        return value
    return f'<code translate="no">{escape(value)}</code>'


def _one(text: str) -> str | None:
    """One sentence: the first template it fits whole (its nested sentences readable too)."""
    for template, pattern in _compiled():
        m = pattern.fullmatch(text)
        if m is None:
            continue
        shown = {k: _value(k, v) for k, v in m.groupdict().items()}
        if any(v is None for v in shown.values()):
            continue
        return escape(gettext(template)) % shown if shown else escape(gettext(template))
    return None


@lru_cache(maxsize=4096)
def _read(language: str, text: str) -> str | None:
    """The text in `language` (active) as HTML, or None when some part fits no template: one
    sentence, or a sentence and then, after "; " or " ", the rest read the same way."""
    whole = _one(text)
    if whole is not None:
        return whole
    for sep in SPLIT.finditer(text):
        head = _one(text[:sep.start()])
        if head is None:
            continue
        rest = _read(language, text[sep.end():])
        if rest is not None:
            return head + ("；" if sep.group() == "; " else "") + rest
    return None


def shown(text):
    """A stored repair text as the reader should see it: as it is in English; in another
    language translated (HTML, values as code) when every part of it is one of the templates."""
    language = translation.get_language() or "en"
    if not text or language.startswith("en"):
        return text
    read = _read(language, str(text))
    return text if read is None else mark_safe(read)  # noqa: S308 (catalogue text, values escaped)
