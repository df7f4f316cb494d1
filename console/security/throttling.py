"""Sign-in throttling glue (django-axes) and the security log line for each lockout.

django-axes keeps every failed sign-in and each lockout in PostgreSQL (AccessAttempt,
AccessFailureLog), so every web worker and node sees the same count.
"""

import logging

from axes.backends import AxesStandaloneBackend
from axes.signals import user_locked_out
from django.dispatch import receiver

logger = logging.getLogger("console.security")


class SignInThrottleBackend(AxesStandaloneBackend):
    """Axes' check for every sign-in that comes with a request (the console's sign-in page and
    the admin's). Code that authenticates without a request (a shell, a test client's login())
    has no username to throttle from the network and is left to the next backend."""

    def authenticate(self, request=None, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


@receiver(user_locked_out, dispatch_uid="console-log-lockout")
def log_lockout(sender, request=None, username=None, ip_address=None, **kwargs):
    logger.warning("sign-in locked: username=%r after too many failed attempts (from %s)", username, ip_address)
