"""Shared floor terminals: nothing a signed-in person saw stays behind, and a forgotten session ends.

A terminal on the floor is used by one person after another. So:

- every answer to a signed-in request (pages, live fragments, refusals, CSV exports) carries
  `Cache-Control: no-store, private`: neither the browser's cache nor its back button nor a
  proxy keeps a copy for the next person;
- the session cookie ends with the browser (SESSION_EXPIRE_AT_BROWSER_CLOSE), and the session
  itself ends SESSION_IDLE_MINUTES after the person's last request (SESSION_COOKIE_AGE, which
  Django checks on every request). A page refreshing itself (an htmx element polling its own
  fragment) is not the person: it does not move the end, so a terminal left on the dashboard is
  signed out like any other. The end moves at most once a minute, which keeps a session row from
  being written on every request.

docs/operations.md "Security".
"""

import time

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.utils.cache import patch_vary_headers

NO_STORE = "no-store, private"
# When the session's end was last moved (seconds since the epoch).
ACTIVITY_KEY = "console_activity_at"
ACTIVITY_RESOLUTION_SECONDS = 60


def is_self_refresh(request) -> bool:
    """An htmx element fetching its own fragment on a timer (`hx-trigger="every …"`): the element
    that triggered the request is the one it replaces. A person's htmx request (a filter form, a
    button) comes from another element than the one it updates."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and htmx.trigger is not None and htmx.trigger == htmx.target


def _note_activity(session) -> None:
    now = int(time.time())
    last = session.get(ACTIVITY_KEY)
    if not isinstance(last, int) or now - last >= ACTIVITY_RESOLUTION_SECONDS:
        session[ACTIVITY_KEY] = now  # saved by SessionMiddleware: the end moves on


@receiver(user_logged_in, dispatch_uid="console-terminal-sign-in-activity")
def sign_in_is_activity(sender, request, user, **kwargs):
    """Signing in is a person's request: recorded with the sign-in's own session write, so the
    first page after it writes nothing more."""
    session = getattr(request, "session", None)
    if session is not None:
        _note_activity(session)


class SharedTerminalMiddleware:
    """After AuthenticationMiddleware and django-htmx's middleware (it reads request.user and
    request.htmx)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        signed_in = request.user.is_authenticated
        if signed_in and not is_self_refresh(request):
            _note_activity(request.session)
        response = self.get_response(request)
        if signed_in or request.user.is_authenticated:  # a sign-in's own answer included
            response["Cache-Control"] = NO_STORE
            patch_vary_headers(response, ("Cookie",))
        return response
