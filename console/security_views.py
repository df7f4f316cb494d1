"""The console's Security page, for shift leads: current sign-in lockouts, recent lockouts, and
every change of a user's roles (RoleChangeAudit)."""

from axes.models import AccessAttempt, AccessFailureLog
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console import roles
from console.models import RoleChangeAudit
from console.views import console_page, render_page


def current_lockouts() -> list[dict]:
    """User names locked now: as many failures as the limit, the last one within the cool-off."""
    now = timezone.now()
    attempts = (AccessAttempt.objects
                .filter(failures_since_start__gte=settings.AXES_FAILURE_LIMIT,
                        attempt_time__gt=now - settings.AXES_COOLOFF_TIME)
                .order_by("-attempt_time")[:200])
    return [{"username": a.username, "failures": a.failures_since_start, "last_attempt": a.attempt_time,
             "locked_until": a.attempt_time + settings.AXES_COOLOFF_TIME, "ip_address": a.ip_address,
             "path": a.path_info} for a in attempts]


@console_page
def security_overview(request):
    if not roles.can_cancel(request.user):  # shift leads (and superusers)
        raise PermissionDenied("The security page is for shift leads.")
    return render_page(request, "console/security.html", "security-live", {
        "lockouts": current_lockouts(),
        "recent_lockouts": AccessFailureLog.objects.filter(locked_out=True).order_by("-attempt_time")[:50],
        "role_changes": RoleChangeAudit.objects.order_by("-id")[:200],
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff": settings.AXES_COOLOFF_TIME,
    })
