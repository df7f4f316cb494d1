"""The console's roles (docs/architecture.md §11), as Django groups created by a migration.

supervisor: sees everything, changes nothing; operator: may also re-check, re-issue and
reconcile; shift lead: may also propose and approve cancel-and-release (four eyes).
"""

SUPERVISOR = "supervisor"
OPERATOR = "operator"
SHIFT_LEAD = "shift lead"

ALL_ROLES = (SUPERVISOR, OPERATOR, SHIFT_LEAD)


def user_roles(user) -> set[str]:
    if not user.is_authenticated:
        return set()
    if not hasattr(user, "_console_roles"):
        user._console_roles = set(user.groups.filter(name__in=ALL_ROLES).values_list("name", flat=True))
    return user._console_roles


def can_view(user) -> bool:
    return user.is_authenticated and (user.is_superuser or bool(user_roles(user)))


def can_repair(user) -> bool:
    """Re-check, re-issue, reconcile."""
    return user.is_authenticated and (user.is_superuser or bool(user_roles(user) & {OPERATOR, SHIFT_LEAD}))


def can_cancel(user) -> bool:
    """Propose and approve cancel-and-release."""
    return user.is_authenticated and (user.is_superuser or SHIFT_LEAD in user_roles(user))


def can_read_analytics(user) -> bool:
    """The analytics page (/analytics/): how long pauses wait for a person, for shift leads."""
    return user.is_authenticated and (user.is_superuser or SHIFT_LEAD in user_roles(user))


def can_cordon(user) -> bool:
    """Cordon a place and lift a cordon (/cordons/): shift leads. Every console role reads them."""
    return user.is_authenticated and (user.is_superuser or SHIFT_LEAD in user_roles(user))


def can_see_processes(user) -> bool:
    """The recovery processes page (/recovery/processes/): who runs recovery, for the people who
    operate it (operators and shift leads)."""
    return user.is_authenticated and (user.is_superuser or bool(user_roles(user) & {OPERATOR, SHIFT_LEAD}))


# --- roles from directory groups (design §14) --------------------------------------------------

ROLE_GROUP_SETTINGS = {SUPERVISOR: "ROLE_GROUPS_SUPERVISOR", OPERATOR: "ROLE_GROUPS_OPERATOR",
                       SHIFT_LEAD: "ROLE_GROUPS_SHIFT_LEAD"}


def role_groups() -> dict[str, list[str]]:
    """The mapping in force: each console role and the directory groups that grant it."""
    from django.conf import settings

    return {role: list(getattr(settings, name)) for role, name in ROLE_GROUP_SETTINGS.items()}


def normal_group(group: str, *, source: str) -> str:
    """How two group names are compared: OIDC claim values exactly; LDAP DNs without regard to case
    or to blanks around their separators (`CN=Leads, OU=Groups` is `cn=leads,ou=groups`)."""
    if source != "ldap":
        return group
    return ",".join("=".join(p.strip() for p in rdn.split("=", 1)) for rdn in group.split(",")).lower()


def roles_from_groups(groups, *, source: str, mapping: dict[str, list[str]]) -> set[str]:
    """The console roles a directory user has: those with at least one of their groups."""
    seen = {normal_group(g, source=source) for g in groups}
    return {role for role, mapped in mapping.items() if seen & {normal_group(g, source=source) for g in mapped}}
