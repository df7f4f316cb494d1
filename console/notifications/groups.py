"""Grouping (docs/architecture.md §12): one cause, one message.

The causes of a grouping event (`EventSpec.groups`: paused, paused too long, stalled) are read
per workflow; here they become one cause per event, reason and aisle, whose dedup key is
`<event>:<reason>:<aisle>`. While its notification is unresolved, later members join it: their
ids are added to `details.workflow_ids` (in the order they joined; never removed, so the case
file of every member finds it), its count grows and its stored texts say so, and nothing is sent
again before escalation. Its first delivery waits NOTIFY_GROUP_WAIT_SECONDS after the first
member (the evaluator queues it that late), so a burst goes out as one message.
"""

import hashlib

from console.models import Notification
from console.notifications.events import Cause

MEMBERS = "workflow_ids"
KEY_MAX_LENGTH = Notification._meta.get_field("dedup_key").max_length
URL_MAX_LENGTH = Notification._meta.get_field("url_path").max_length
WEBHOOK_MEMBERS = 50  # at most this many ids in a webhook payload


def group_key(event: str, reason: str, aisle: str) -> str:
    """`<event>:<reason>:<aisle>`; a reason too long for the key is cut and a digest of it added,
    so two long reasons never share a group."""
    key = f"{event}:{reason}:{aisle}"
    if len(key) <= KEY_MAX_LENGTH:
        return key
    digest = hashlib.sha256(reason.encode()).hexdigest()[:16]
    room = KEY_MAX_LENGTH - len(event) - len(aisle) - len(digest) - 3
    return f"{event}:{reason[:room]}~{digest}:{aisle}"


def _group(members: list[Cause]) -> Cause:
    first = members[0]
    spec, ids = first.spec, [m.workflow_id for m in members]
    links = spec.group_links(first.reason, first.aisle) if spec.group_links else {}
    url = links.get("list", first.url_path)
    if len(url) > URL_MAX_LENGTH:  # a very long reason: the list of the aisle alone
        url = url.split("?", 1)[0]
    since = [m.cause_since for m in members if m.cause_since is not None]
    return Cause(first.event, group_key(first.event, first.reason, first.aisle), url,
                 {**first.context, "aisle": first.aisle, "count": len(ids)},
                 workflow_id=ids[0] if len(ids) == 1 else None, reason=first.reason,
                 cause_since=min(since) if since else None, aisle=first.aisle,
                 details={**first.details, "aisle": first.aisle, MEMBERS: ids, "links": links})


def grouped(causes: list[Cause]) -> list[Cause]:
    """The causes with those of grouping events merged per event, reason and aisle, in the order
    each key first appears."""
    keyed: dict[tuple, list[Cause]] = {}
    for cause in causes:
        key = (cause.event, cause.reason, cause.aisle) if cause.spec.groups else ("", cause.dedup_key, "")
        keyed.setdefault(key, []).append(cause)
    return [_group(members) if members[0].spec.groups else members[0] for members in keyed.values()]


def is_group(notification: Notification) -> bool:
    return isinstance(notification.details, dict) and isinstance(notification.details.get(MEMBERS), list)


def members(notification: Notification) -> list[int]:
    return list(notification.details.get(MEMBERS) or []) if is_group(notification) else []


def joined(kept: list[int], cause: Cause) -> list[int]:
    """The members of an open group after this evaluation: those before, then the new ones."""
    seen = set(kept)
    return [*kept, *(i for i in cause.details.get(MEMBERS, []) if i not in seen)]
