"""Demo sign-ins, one per role, for the embedded demo database only."""

from django.contrib.auth.models import Group, User

from console.roles import OPERATOR, SHIFT_LEAD, SUPERVISOR

DEMO_USERS = (
    (SUPERVISOR, "supervisor", "supervisor-demo"),
    (OPERATOR, "operator", "operator-demo"),
    (SHIFT_LEAD, "shiftlead", "shiftlead-demo"),
    (SHIFT_LEAD, "shiftlead2", "shiftlead2-demo"),
)


def ensure_demo_users() -> list[tuple[str, str, str]]:
    """Create (or reset) the demo users; returns (role, username, password) for each."""
    for role, username, password in DEMO_USERS:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_active = True
        user.save()
        user.groups.set([Group.objects.get(name=role)])
    return list(DEMO_USERS)
