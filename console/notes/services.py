"""Workflow notes: what someone on the floor saw, written by any console role, never edited.

The table is append-only in PostgreSQL (migration console 0003); this module only adds rows. One
person adds at most NOTES_PER_USER_PER_HOUR notes in any 60 minutes: notes are never deleted, so
a flood (a stuck scanner, a script) would otherwise fill every handover for good.
"""

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console import roles
from console.models import WorkflowNote
from console.rate_limits import RATE_WINDOW, RateLimited, rate_limit_check
from recovery.errors import Refused

# The first key of the note post's advisory lock ("NOTE" in ASCII; batch re-checks use "BTCH").
NOTE_RATE_LOCK_NAMESPACE = 0x4E4F5445


class NoteNotAllowed(Refused):
    """The user has no console role."""


# The person added `limit` notes within the last hour (console.rate_limits, shared with cordons
# and silences).
NoteRateLimited = RateLimited


def notes_for_workflow(*, workflow_id: int, limit: int = 200) -> list[WorkflowNote]:
    # workflow_note_wf_idx (workflow_id, -at)
    return list(WorkflowNote.objects.filter(workflow_id=workflow_id).order_by("-at", "-id")[:limit])


def note_create(*, workflow_id: int, text: str, user, now: datetime | None = None) -> WorkflowNote:
    """Append a note; the caller has validated `text` (console.notes.forms.NoteForm). Raises
    NoteRateLimited, storing nothing, when the person is at the hourly limit."""
    if not roles.can_view(user):
        raise NoteNotAllowed(user.get_username())
    now = now or timezone.now()
    limit = settings.NOTES_PER_USER_PER_HOUR
    with transaction.atomic():
        # workflow_note_user_at_idx (user_id, at)
        rate_limit_check(namespace=NOTE_RATE_LOCK_NAMESPACE, user=user, limit=limit, now=now,
                         recent_times=WorkflowNote.objects.filter(user=user, at__gt=now - RATE_WINDOW)
                         .order_by("-at").values_list("at", flat=True))
        return WorkflowNote.objects.create(workflow_id=workflow_id, text=text, user=user,
                                           username=user.get_username())
