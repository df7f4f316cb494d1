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
