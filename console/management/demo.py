"""Demo sign-ins, one per role, for the embedded demo database only.

Their passwords are published (README.md), so they are never created on a configured database:
two known shift-lead accounts would defeat four eyes there.
"""

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.exceptions import ImproperlyConfigured

from console.models import WorkflowNote
from console.notes.services import note_create
from console.readers.stalled import stalled_workflows
from console.roles import OPERATOR, SHIFT_LEAD, SUPERVISOR

DEMO_USERS = (
    (SUPERVISOR, "supervisor", "quiet-harbour-lantern"),
    (OPERATOR, "operator", "amber-forklift-route"),
    (SHIFT_LEAD, "shiftlead", "steady-pallet-compass"),
    (SHIFT_LEAD, "shiftlead2", "second-pair-of-eyes"),
)

DEMO_USERS_REFUSED = ("Demo accounts (published passwords) are never created on a configured database "
                      "(DATABASE_URL is set). Create real accounts with `manage.py createsuperuser` and "
                      "give them roles in the admin.")


class DemoUsersRefused(ImproperlyConfigured):
    pass


def ensure_demo_users() -> list[tuple[str, str, str]]:
    """Create (or reset) the demo users; returns (role, username, password) for each."""
    if not settings.EMBEDDED_DATABASE:
        raise DemoUsersRefused(DEMO_USERS_REFUSED)
    for role, username, password in DEMO_USERS:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_active = True
        user.save()
        user.groups.set([Group.objects.get(name=role)])
    return list(DEMO_USERS)


DEMO_NOTE = "Vehicle 3 stopped with a fault in aisle A01; maintenance called, tray still on the vehicle."


def ensure_demo_note() -> WorkflowNote | None:
    """A shift lead's note on the demo's stalled workflow, so the handover has content.
    Written once: notes are append-only, so a second start adds nothing."""
    if WorkflowNote.objects.exists():
        return None
    stalled = stalled_workflows()
    if not stalled:
        return None
    lead = User.objects.get(username="shiftlead")
    return note_create(workflow_id=stalled[0].workflow_id, text=DEMO_NOTE, user=lead)
