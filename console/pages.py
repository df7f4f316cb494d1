"""Page plumbing shared by every console feature (docs/architecture.md §11): the one access guard,
rendering a page or its htmx fragment, and the list forms' keyset positions (the keyset reads
themselves are console.readers').

Every console view is wrapped by `console_page` (optionally with the role predicate it needs, and
the methods it takes: GET and HEAD by default, POST only, or both for a page with its own form);
views render through `render_page`, which gives the fragment `template#name` to an
htmx request and the whole page otherwise. Features import this module; it imports nothing of
theirs.
"""

from functools import wraps
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render, resolve_url
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from console import roles
from console.input_checks import SafeInputForm, keyset_position_problem
from console.readers import Cursor

NO_ROLE = gettext_lazy("Your account has no console role (supervisor, operator or shift lead).")


def refresh_seconds() -> int:
    """Live pages poll every CONSOLE_REFRESH_SECONDS (settings.py reads it, 10 s by default)."""
    return settings.CONSOLE_REFRESH_SECONDS


# --- the access guard -------------------------------------------------------------------------


READ_ONLY = ("GET", "HEAD")
POST_ONLY = ("POST",)
PAGE_WITH_FORM = ("GET", "HEAD", "POST")


def console_page(view=None, *, allowed=roles.can_view, refused=NO_ROLE, post: bool = False, form: bool = False):
    """The one guard of every console page: sign-in required; a signed-in user for whom
    `allowed(user)` is false gets 403 with `refused`, and nothing is read or written.

    It is also the one place that decides the methods a page takes; any other method is answered
    405 with an `Allow` header, before the view runs (so a write sent to a read-only page is never
    silently ignored): GET and HEAD by default (a read-only page), POST only with `post=True`,
    and GET, HEAD and POST with `form=True` (a page that posts its own form to itself). The
    wrapped view carries them as `console_methods` (tests walk every URL with them).

    Used bare (`@console_page`: any console role) or with arguments
    (`@console_page(allowed=roles.can_cancel, refused=..., post=True)`).

    A refresh whose session has expired must not swap the sign-in form into a fragment: htmx
    is told to load the sign-in page in the window instead (coming back to the page after)."""
    if view is None:
        return lambda v: console_page(v, allowed=allowed, refused=refused, post=post, form=form)
    methods = POST_ONLY if post else PAGE_WITH_FORM if form else READ_ONLY

    @wraps(view)
    def checked(request, *args, **kwargs):
        if not roles.can_view(request.user):
            raise PermissionDenied(NO_ROLE)
        if not allowed(request.user):
            raise PermissionDenied(refused)
        return view(request, *args, **kwargs)

    protected = login_required(require_http_methods(list(methods))(checked))

    @wraps(view)
    def entry(request, *args, **kwargs):
        if request.htmx and not request.user.is_authenticated:
            back = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': back})}")
        return protected(request, *args, **kwargs)

    entry.console_methods = methods
    return entry


# --- the page frame -----------------------------------------------------------------------------


def recovery_mode(request) -> dict:
    """Template context processor (settings.TEMPLATES): `recovery_observing` puts the observe-mode
    banner on every page while RECOVERY_MODE=observe (docs/architecture.md §16). No query."""
    return {"recovery_observing": settings.RECOVERY_MODE == "observe"}


# --- rendering --------------------------------------------------------------------------------


def wants_fragment(request) -> bool:
    return bool(request.htmx) and not request.htmx.history_restore_request


def render_page(request, template: str, fragment: str | tuple[str, ...], context: dict, *, status: int = 200):
    """The fragment `template#name` for htmx requests, the whole page otherwise (and for a
    history restore). With several fragments, the one named by the request's HX-Target (the id
    of the element being replaced) is rendered, the first one by default."""
    context = {**context, "refresh_seconds": refresh_seconds()}
    if wants_fragment(request):
        names = (fragment,) if isinstance(fragment, str) else fragment
        name = request.htmx.target if request.htmx.target in names else names[0]
        return render(request, f"{template}#{name}", context, status=status)
    return render(request, template, context, status=status)


BAD_POSITION = gettext_lazy("That list position is not valid; showing the first page.")


def cursor_field(text: str | None, cls):
    """A list form's `after`/`before` value decoded by `cls.decode`; a malformed one is a
    validation error (the form falls back to the first page)."""
    if not text:
        return None
    try:
        return cls.decode(text)
    except ValueError:
        raise forms.ValidationError(BAD_POSITION) from None


class PositionForm(SafeInputForm):
    """A paged list's position in its query string (`after` or `before`, as the page wrote them): a
    hostile value is a 400 naming the field; another malformed one shows the first page."""

    extra_checks = {"after": keyset_position_problem, "before": keyset_position_problem}

    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    def clean_after(self):
        return cursor_field(self.cleaned_data.get("after"), Cursor)

    def clean_before(self):
        return cursor_field(self.cleaned_data.get("before"), Cursor)

    def query(self) -> str:
        """The position as a query string (`after=...`), for the live refresh to keep it."""
        return urlencode({name: self.data[name] for name in ("after", "before") if self.data.get(name)})

    def position(self) -> tuple[Cursor | None, Cursor | None]:
        """(after, before) when valid; the first page otherwise."""
        if not self.is_valid():
            return None, None
        return self.cleaned_data["after"], self.cleaned_data["before"]
