"""Workflow notes: what someone on the floor saw, written by any console role, never edited.

The table is append-only in PostgreSQL (migration console 0003); this module only adds rows.
"""

from console import roles
from console.models import WorkflowNote
from recovery.errors import Refused


class NoteNotAllowed(Refused):
    """The user has no console role."""


def notes_for_workflow(*, workflow_id: int, limit: int = 200) -> list[WorkflowNote]:
    # workflow_note_wf_idx (workflow_id, -at)
    return list(WorkflowNote.objects.filter(workflow_id=workflow_id).order_by("-at", "-id")[:limit])


def note_create(*, workflow_id: int, text: str, user) -> WorkflowNote:
    """Append a note; the caller has validated `text` (console.floor.forms.NoteForm)."""
    if not roles.can_view(user):
        raise NoteNotAllowed(user.get_username())
    return WorkflowNote.objects.create(workflow_id=workflow_id, text=text, user=user,
                                       username=user.get_username())
