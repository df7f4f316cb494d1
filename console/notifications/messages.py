"""Subjects and bodies of notifications: plain English marked for translation.

A notification keeps the values its texts were made from (`CONTEXT_KEY` in its `details`), so
each reader sees them in their own language and e-mails and webhooks go out in NOTIFY_LANGUAGE;
the stored `subject` and `body` columns are the English record (and what the logs say).
"""

from django.utils.translation import gettext as _

SUBJECTS = {
    "paused": lambda c: _("Workflow %(workflow_id)s paused: %(reason)s") % c,
    "paused_too_long": lambda c: _("Workflow %(workflow_id)s paused for over %(minutes)s min: %(reason)s") % c,
    "stalled": lambda c: _("Workflow %(workflow_id)s stalled: job %(job_id)s unchanged at status %(job_status)s "
                           "for over %(minutes)s min") % c,
    "recovery_stale": lambda c: (_("Recovery is stale: no successful cycle for over %(seconds)s s") % c
                                 if c.get("last_success_at") else _("Recovery is stale: no successful cycle yet")),
    "proposal_waiting": lambda c: _("Cancel proposal for workflow %(workflow_id)s waiting for a second shift lead "
                                    "for over %(minutes)s min") % c,
    "backlog_not_draining": lambda c: _("Tidy job backlog not draining: %(backlog)s jobs, %(arrivals)s arrived and "
                                        "%(completions)s finished in the last %(minutes)s min") % c,
}

EXPLANATIONS = {
    "paused": lambda c: _("Recovery paused workflow %(workflow_id)s with reason %(reason)s. It keeps its locks "
                          "until someone repairs it in the console.") % c,
    "paused_too_long": lambda c: _("Workflow %(workflow_id)s has been paused (%(reason)s) longer than the "
                                   "%(minutes)s min a shift lead set for this reason code.") % c,
    "stalled": lambda c: _("Workflow %(workflow_id)s is active, but the job of its step %(step_no)s "
                           "(tray %(tray_code)s, %(source)s to %(target)s) has not changed for over %(minutes)s "
                           "min. Recovery leaves it alone; check the vehicle and the WCS.") % c,
    "recovery_stale": lambda c: _("The periodic recovery has not finished a cycle successfully within "
                                  "%(stale_after)s s. Check that the qcluster runs and reaches the database.") % c,
    "proposal_waiting": lambda c: _("A shift lead (%(proposed_by)s) proposed to cancel workflow %(workflow_id)s "
                                    "and release its locks; a different shift lead must approve or reject it.") % c,
    "backlog_not_draining": lambda c: _("The tidy job backlog did not shrink over the last %(minutes)s min "
                                        "(oldest job waiting since %(oldest)s).") % c,
}


CONTEXT_KEY = "message_context"


def subject_for(event: str, context: dict) -> str:
    return str(SUBJECTS[event](context))[:300]


def body_for(event: str, context: dict) -> str:
    return str(EXPLANATIONS[event](context))


def _rendered(texts: dict, notification, stored: str) -> str:
    """The text of a notification in the active language, made again from its event and the values
    kept when it opened; a notification kept without them (or with values this version's texts
    cannot use) shows its stored text."""
    context = (notification.details or {}).get(CONTEXT_KEY) if isinstance(notification.details, dict) else None
    if not isinstance(context, dict) or notification.event not in texts:
        return stored
    try:
        return str(texts[notification.event](context))
    except (KeyError, TypeError, ValueError):
        return stored


def notification_subject(notification) -> str:
    return _rendered(SUBJECTS, notification, notification.subject)[:300]


def notification_explanation(notification) -> str:
    return _rendered(EXPLANATIONS, notification, notification.body)


def with_texts(notifications):
    """Each notification with `display_subject` and `display_explanation` in the active language
    (the stored `subject` and `body` are the English record); returns the same list."""
    for n in notifications:
        n.display_subject = notification_subject(n)
        n.display_explanation = notification_explanation(n)
    return notifications


def escalated_subject(subject: str) -> str:
    return str(_("Escalated: %(subject)s") % {"subject": subject})[:300]


def email_body(*, subject: str, body: str, url: str, notifications_url: str, escalated: bool,
               age_seconds: int | None, dedup_key: str) -> str:
    lines = []
    if escalated:
        lines += [str(_("Nobody has acknowledged this notification yet; it is escalated to the shift leads.")), ""]
    lines += [subject, "", body, ""]
    if age_seconds is not None:
        lines.append(str(_("Age: %(seconds)s s") % {"seconds": age_seconds}))
    lines += [str(_("Open: %(url)s") % {"url": url}),
              str(_("Acknowledge: %(url)s") % {"url": notifications_url}),
              str(_("Key: %(key)s") % {"key": dedup_key})]
    return "\n".join(lines) + "\n"
