"""The WCS API's short path through the middleware (docs/architecture.md §8).

A machine client with a bearer token needs none of what a person's browser does: no session,
no CSRF cookie or check, no signed-in user, no flash messages, no language negotiation, no
htmx or sign-in lockout, no Content-Security-Policy for a page. For paths under
`API_PREFIX` this middleware calls the resolved view itself and returns its answer, so the
middleware after it never runs for the API. What runs before it still does: the request id
(echoed, bound to the log lines) and SecurityMiddleware (HTTPS redirect, HSTS, nosniff).
The view keeps its own security: the token check, the body size and content-type limits and
the hardened JSON parsing (console/api/views.py, console/api/parsing.py). The Host header is
validated here against ALLOWED_HOSTS, as CommonMiddleware does on the long path: a request for
another host is answered 400 before the view runs.

A path under the prefix that resolves to nothing falls through to the ordinary chain, which
answers its 404 as for any other path.
"""

from functools import lru_cache

from django.conf import settings
from django.urls import Resolver404, get_urlconf, resolve

API_PREFIX = "/api/wcs/"


@lru_cache(maxsize=64)
def _resolve(path: str, urlconf) -> object:
    """The API's few routes resolved once per process, not through every console pattern on every
    request. Only paths that resolve are kept (Resolver404 is raised, never cached), and the size
    is bounded, so unknown paths cannot grow it."""
    return resolve(path, urlconf)


class ApiShortPathMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        try:
            match = _resolve(request.path_info, get_urlconf() or settings.ROOT_URLCONF)
        except Resolver404:
            return self.get_response(request)
        # DisallowedHost (a SuspiciousOperation) becomes the same 400 as on every other path.
        request.get_host()
        request.resolver_match = match
        response = match.func(request, *match.args, **match.kwargs)
        if not response.streaming and not response.has_header("Content-Length"):
            # CommonMiddleware's job on the long path: gunicorn then answers without chunking.
            response["Content-Length"] = str(len(response.content))
        return response
