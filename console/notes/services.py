"""Workflow notes: what someone on the floor saw, written by any console role, never edited.

The table is append-only in PostgreSQL (migration console 0003); this module only adds rows. One
person adds at most NOTES_PER_USER_PER_HOUR notes in any 60 minutes: notes are never deleted, so
a flood (a stuck scanner, a script) would otherwise fill every handover for good.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from console import console_sql, roles
from console.models import WorkflowNote
from recovery.errors import Refused

RATE_WINDOW = timedelta(hours=1)
# The first key of the note post's advisory lock ("NOTE" in ASCII; batch re-checks use "BTCH").
NOTE_RATE_LOCK_NAMESPACE = 0x4E4F5445


class NoteNotAllowed(Refused):
    """The user has no console role."""


class NoteRateLimited(Refused):
    """The person added `limit` notes within the last hour; the next is possible after `retry_after`."""

    def __init__(self, *, limit: int, retry_after: timedelta):
        super().__init__(f"{limit} notes in the last hour; the next in {retry_after}")
        self.limit = limit
        self.retry_after = retry_after


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
        with connection.cursor() as cursor:
            cursor.execute(console_sql.NOTE_RATE_LOCK, {"namespace": NOTE_RATE_LOCK_NAMESPACE, "key": user.pk % 2**31})
        # workflow_note_user_at_idx (user_id, at)
        recent = list(WorkflowNote.objects.filter(user=user, at__gt=now - RATE_WINDOW).order_by("-at")
                      .values_list("at", flat=True)[:limit])
        if len(recent) >= limit:
            # The oldest of the last `limit` notes must leave the window first.
            raise NoteRateLimited(limit=limit, retry_after=max(recent[-1] + RATE_WINDOW - now, timedelta(seconds=1)))
        return WorkflowNote.objects.create(workflow_id=workflow_id, text=text, user=user,
                                           username=user.get_username())
