"""The page frame's context (templates/base.html's header): who is signed in and with which roles,
which decides the role badge and the navigation's links (Security for a shift lead). A template
context processor (settings.TEMPLATES), so every page that extends base.html gets the same frame,
whichever view renders it and however (docs/architecture.md §11).

The roles are read once per request (console.roles caches them on the user; the page's own
access guard has usually read them already).
"""

from console import roles


def frame(request) -> dict:
    # A read-only page that reads the primary because the read replica lags or does not answer
    # says so (console.replica.middleware sets the choice).
    choice = getattr(request, "tidy_read_choice", None)
    replica = {"replica_notice": choice.notice, "replica_lag": round(choice.lag_seconds)} if choice else {}
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"user_roles": [], **replica}
    held = sorted(roles.user_roles(user)) or (["admin"] if user.is_superuser else [])
    if held or not hasattr(user, "directory_identity"):
        return {"user_roles": held, **replica}
    # A directory account without a role: the 403 page names the groups that would grant one.
    groups = {role: groups for role, groups in roles.role_groups().items() if groups}
    return {"user_roles": held, "role_groups": groups, **replica}
