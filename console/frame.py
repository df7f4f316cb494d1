"""The page frame's context (templates/base.html's header): who is signed in and with which roles,
which decides the role badge and the navigation's links (Security for a shift lead). A template
context processor (settings.TEMPLATES), so every page that extends base.html gets the same frame,
whichever view renders it and however (docs/architecture.md §11).

The roles are read once per request (console.roles caches them on the user; the page's own
access guard has usually read them already).
"""

from console import roles


def frame(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"user_roles": []}
    held = sorted(roles.user_roles(user)) or (["admin"] if user.is_superuser else [])
    if held or not hasattr(user, "directory_identity"):
        return {"user_roles": held}
    # A directory account without a role: the 403 page names the groups that would grant one.
    return {"user_roles": held, "role_groups": {role: groups for role, groups in roles.role_groups().items() if groups}}
