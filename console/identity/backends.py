"""The console's authentication backends (settings.AUTHENTICATION_BACKENDS; design §14).

Each is listed whatever is configured and decides at each sign-in from the settings, so a source
switched off costs nothing and the directory libraries are imported only when LDAP is on.
"""

import logging

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from console.identity import transaction
from console.identity.config import UNREACHABLE

logger = logging.getLogger("console.security")

LOCAL_BACKEND = "console.identity.backends.LocalPasswordBackend"
OIDC_BACKEND = "console.identity.backends.OpenIDConnectBackend"


class DirectoryPasswordBackend(ModelBackend):
    """The ordinary sign-in form's password, checked by the LDAP / Active Directory server when
    LDAP_SERVER_URI is set (console/identity/ldap_directory.py); otherwise it answers nothing."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not settings.LDAP_SERVER_URI or not username or not password:
            return None
        from console.identity import ldap_directory

        user = ldap_directory.authenticate(request, username=username, password=password)
        # An account an administrator deactivated stays out, whatever the directory says.
        return user if user is not None and self.user_can_authenticate(user) else None


class OpenIDConnectBackend(ModelBackend):
    """The accounts the OpenID Connect callback signs in (console/identity/views.py), after the
    provider's ID token was verified; it checks no password, so it authenticates nothing itself."""

    def authenticate(self, request, **kwargs):
        return None


class LocalPasswordBackend(ModelBackend):
    """Local passwords. With LOCAL_SIGN_IN=false only superusers sign in this way (break-glass),
    and each such sign-in is a BreakGlassSignIn row. A directory account has no usable password."""

    def user_can_authenticate(self, user):
        if not super().user_can_authenticate(user):
            return False
        return settings.LOCAL_SIGN_IN or user.is_superuser


@receiver(user_logged_in, dispatch_uid="console-break-glass-sign-in")
def record_break_glass(sender, request, user, **kwargs):
    if settings.LOCAL_SIGN_IN or getattr(user, "backend", None) != LOCAL_BACKEND:
        return
    address = request.META.get("REMOTE_ADDR", "") if request is not None else ""
    transaction.record_break_glass(user=user, address=address)
    logger.warning("break-glass sign-in: username=%r with a local password (LOCAL_SIGN_IN=false)",
                   user.get_username())


def directory_did_not_answer(request, credentials=None) -> bool:
    """settings.AXES_WHITELIST_CALLABLE: django-axes records no failure for a sign-in that the
    directory did not answer. A wrong password is a guess and counts toward the lockout; an outage
    is not, and must not lock people out once it is over. A lock in force still holds (axes checks
    it before the directory is asked)."""
    return bool(getattr(request, UNREACHABLE, None))
