"""The console's Security page, for shift leads: the sign-in sources and the role mapping in force,
current sign-in lockouts, recent lockouts, break-glass sign-ins, and every change of a user's roles
(RoleChangeAudit: groups, superuser, staff, active; from a directory, the groups it saw)."""

from axes.models import AccessAttempt, AccessFailureLog
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Max, Sum
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from console import roles
from console.models import BreakGlassSignIn, RoleChangeAudit
from console.pages import console_page, render_page

# The console's roles (group names) and where a role change came from, as a page shows them;
# a group the console does not know keeps its name.
ROLE_LABELS = {roles.SUPERVISOR: gettext_lazy("supervisor"), roles.OPERATOR: gettext_lazy("operator"),
               roles.SHIFT_LEAD: gettext_lazy("shift lead")}
VIA_LABELS = {"admin": gettext_lazy("admin"), "application": gettext_lazy("application"),
              "oidc": gettext_lazy("OpenID Connect sign-in"), "ldap": gettext_lazy("LDAP sign-in")}
# The account flags beside the groups: superuser and staff when set, and an account that may not
# sign in (is_active off). A row written before flags were kept has none.
FLAG_LABELS = {"is_superuser": gettext_lazy("superuser"), "is_staff": gettext_lazy("staff")}
INACTIVE_LABEL = gettext_lazy("deactivated")


def role_labels(groups: list[str], flags: dict) -> list[str]:
    labels = [ROLE_LABELS.get(g, g) for g in groups]
    labels += [label for flag, label in FLAG_LABELS.items() if flags.get(flag)]
    if flags and flags.get("is_active") is False:
        labels.append(INACTIVE_LABEL)
    return labels


def role_changes(limit: int = 200) -> list[RoleChangeAudit]:
    """The latest role changes, newest first, each with `before_labels`, `after_labels` (groups and
    flags) and `via_label`."""
    rows = list(RoleChangeAudit.objects.order_by("-id")[:limit])
    for row in rows:
        row.before_labels = role_labels(row.before, row.flags_before or {})
        row.after_labels = role_labels(row.after, row.flags_after or {})
        row.via_label = VIA_LABELS.get(row.via, row.via)
    return rows


def current_lockouts() -> list[dict]:
    """User names locked now. Like django-axes itself, failures of one user name count together
    from every address and browser, as long as each is younger than the cool-off; the lock ends
    at the latest a cool-off after the last failure."""
    now = timezone.now()
    rows = (AccessAttempt.objects
            .filter(attempt_time__gte=now - settings.AXES_COOLOFF_TIME, username__isnull=False)
            .values("username")
            .annotate(failures=Sum("failures_since_start"), last_attempt=Max("attempt_time"),
                      addresses=Count("ip_address", distinct=True))
            .filter(failures__gte=settings.AXES_FAILURE_LIMIT)
            .order_by("-last_attempt")[:200])
    return [{**row, "locked_until": row["last_attempt"] + settings.AXES_COOLOFF_TIME} for row in rows]


def sign_in_sources() -> list[dict]:
    """The sign-in sources and whether each is on (design §14), with where each one asks."""
    local = (gettext("on: every local account") if settings.LOCAL_SIGN_IN
             else gettext("break-glass only: superusers, each sign-in recorded"))
    return [
        {"key": "local", "name": gettext("Local passwords"), "on": True, "detail": local},
        {"key": "ldap", "name": gettext("LDAP / Active Directory"), "on": bool(settings.LDAP_SERVER_URI),
         "detail": settings.LDAP_SERVER_URI.split()[0] if settings.LDAP_SERVER_URI else ""},
        {"key": "oidc", "name": gettext("OpenID Connect"), "on": bool(settings.OIDC_ISSUER),
         "detail": f"{settings.OIDC_ISSUER} ({settings.OIDC_CLIENT_ID})" if settings.OIDC_ISSUER else ""},
    ]


def role_mapping() -> list[dict]:
    """The role mapping in force: each console role and the directory groups that grant it."""
    return [{"role": ROLE_LABELS[role], "groups": groups} for role, groups in roles.role_groups().items()]


@console_page
def security_overview(request):
    if not roles.can_cancel(request.user):  # shift leads (and superusers)
        raise PermissionDenied(gettext("The security page is for shift leads."))
    return render_page(request, "security/security.html", "security-live", {
        "lockouts": current_lockouts(),
        "recent_lockouts": AccessFailureLog.objects.filter(locked_out=True).order_by("-attempt_time")[:50],
        "role_changes": role_changes(),
        "sources": sign_in_sources(),
        "role_mapping": role_mapping(),
        "directory_on": bool(settings.LDAP_SERVER_URI or settings.OIDC_ISSUER),
        "break_glass": BreakGlassSignIn.objects.order_by("-id")[:50],
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff": settings.AXES_COOLOFF_TIME,
    })
