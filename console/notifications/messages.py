"""Subjects and bodies of notifications, rendered from their event's spec (events.py).

A notification keeps the values its texts were made from (`CONTEXT_KEY` in its `details`), so
each reader sees them in their own language and e-mails and webhooks go out in NOTIFY_LANGUAGE;
the stored `subject` and `body` columns are the English record (and what the logs say).
"""

from django.utils.translation import gettext as _

from console.notifications import groups
from console.notifications.events import EVENTS, EventSpec
from recovery.logs.line_breaks import escape_line_breaks

CONTEXT_KEY = "message_context"


def subject_for(event: str, context: dict) -> str:
    return EVENTS[event].render_subject(context)


def body_for(event: str, context: dict) -> str:
    return EVENTS[event].render_body(context)


def _rendered(render, notification, stored: str) -> str:
    """The text of a notification in the active language, made again from its event's spec and
    the values kept when it opened; a notification kept without them (or with values this
    version's texts cannot use) shows its stored text."""
    context = (notification.details or {}).get(CONTEXT_KEY) if isinstance(notification.details, dict) else None
    spec = EVENTS.get(notification.event)
    if not isinstance(context, dict) or spec is None:
        return stored
    try:
        return str(render(spec, context))
    except (KeyError, TypeError, ValueError):
        return stored


def notification_subject(notification) -> str:
    return _rendered(EventSpec.render_subject, notification, notification.subject)[:300]


def notification_explanation(notification) -> str:
    return _rendered(EventSpec.render_body, notification, notification.body)


SHOWN_MEMBERS = 20  # a group's row links this many of its workflows


def with_texts(notifications):
    """Each notification with `display_subject` and `display_explanation` in the active language
    (the stored `subject` and `body` are the English record), and a group's first members
    (`shown_members`, `more_members`); returns the same list."""
    for n in notifications:
        n.display_subject = notification_subject(n)
        n.display_explanation = notification_explanation(n)
        members = groups.members(n)
        n.shown_members, n.more_members = members[:SHOWN_MEMBERS], max(0, len(members) - SHOWN_MEMBERS)
    return notifications


def escalated_subject(subject: str) -> str:
    return str(_("Escalated: %(subject)s") % {"subject": subject})[:300]


EMAIL_MEMBERS = 500  # a group's e-mail names at most this many workflows


def email_body(*, subject: str, body: str, url: str, notifications_url: str, escalated: bool,
               age_seconds: int | None, dedup_key: str, workflow_ids: list[int] | None = None,
               links: dict[str, str] | None = None) -> str:
    """The e-mail's text: its lines are ours; the subject, the explanation, the links and the key
    carry WMS text, so their line breaks are shown escaped and never start a line."""
    subject, body, url, notifications_url, dedup_key = (
        escape_line_breaks(text) for text in (subject, body, url, notifications_url, dedup_key))
    links = {name: escape_line_breaks(link) for name, link in (links or {}).items()}
    lines = []
    if escalated:
        lines += [str(_("Nobody has acknowledged this notification yet; it is escalated to the shift leads.")), ""]
    lines += [subject, "", body, ""]
    if workflow_ids is not None:
        shown = ", ".join(str(i) for i in workflow_ids[:EMAIL_MEMBERS])
        lines.append(str(_("Workflows (%(count)s): %(ids)s") % {"count": len(workflow_ids), "ids": shown}))
        if len(workflow_ids) > EMAIL_MEMBERS:
            lines.append(str(_("... and %(more)s more (the list link shows them all)")
                             % {"more": len(workflow_ids) - EMAIL_MEMBERS}))
    if age_seconds is not None:
        lines.append(str(_("Age: %(seconds)s s") % {"seconds": age_seconds}))
    if links.get("batch"):
        lines.append(str(_("Re-check them together: %(url)s") % {"url": links["batch"]}))
    lines += [str(_("Open: %(url)s") % {"url": url}),
              str(_("Acknowledge: %(url)s") % {"url": notifications_url}),
              str(_("Key: %(key)s") % {"key": dedup_key})]
    return "\n".join(lines) + "\n"
