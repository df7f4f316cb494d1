"""Every console page takes only its methods, decided in one place (console.pages.console_page):
a read-only page answers 405 with `Allow: GET, HEAD` to any other method and changes nothing
(a write sent to it is never silently ignored), and a POST endpoint refuses GET. The walk covers
every URL pattern Django resolves; the views that are not console pages are listed below, by name,
with what they answer instead."""

import pytest
from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

from console.pages import PAGE_WITH_FORM, POST_ONLY, READ_ONLY
from recovery.models import Cordon

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

WRITES = ("POST", "PUT", "DELETE", "PATCH")
# Views that are not console pages: each keeps the method rules of its own interface.
NOT_CONSOLE_PAGES = {
    "metrics",  # Prometheus: GET and HEAD, its own 405 (tests/console/operations/test_metrics.py)
    "health-live", "health-ready",  # load balancers
    "login", "logout", "set_language",  # Django's own views (a form posts to each)
    # The OpenID Connect steps (console/identity): before sign-in, GET only (require_GET), the
    # provider's redirects land there (tests/console/identity/test_oidc_sign_in.py).
    "oidc-start", "oidc-callback",
    "wcs-job-finish", "wcs-job-status", "wcs-openapi",  # the WCS machine client (console/api)
}
# Console pages wrapped in Django's require_GET as well (the case file's views): GET only, so
# their 405 allows GET alone.
GET_ONLY = {"case-file-json", "case-file-html"}
SAMPLE = {"int": "1", "bigint": "1", "slug": "cancel", "str": "x", "path": "x"}


def url_patterns(patterns=None, prefix=""):
    """(route, name, view) for every URL pattern, Django's admin site left out (it is Django's)."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(p.pattern)
        if isinstance(p, URLResolver):
            if route != "admin/":
                yield from url_patterns(p.url_patterns, route)
        elif isinstance(p, URLPattern):
            yield route, p.name, p.callback


def sample_path(route: str) -> str:
    import re

    return "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE[m.group(1) or "str"], route)


PATTERNS = sorted(url_patterns())
PAGES = [(route, name, view.console_methods) for route, name, view in PATTERNS if name not in NOT_CONSOLE_PAGES]


def table_counts() -> dict[str, int]:
    return {m._meta.db_table: m.objects.count() for m in apps.get_models() if m._meta.managed}


def test_every_url_is_a_console_page_or_named_as_an_exception():
    names = {name for _, name, _ in PATTERNS}
    assert names >= NOT_CONSOLE_PAGES | GET_ONLY
    missing = [name for _, name, view in PATTERNS
               if name not in NOT_CONSOLE_PAGES and getattr(view, "console_methods", None) is None]
    assert missing == []
    assert {m for _, _, m in PAGES} == {READ_ONLY, POST_ONLY, PAGE_WITH_FORM}
    assert len([p for p in PAGES if p[2] == READ_ONLY]) >= 25


def test_read_only_pages_refuse_every_write_with_405_and_change_nothing(personas, client):
    client.force_login(personas["shiftlead"])
    before = table_counts()
    checked = []
    for route, name, methods in PAGES:
        if methods != READ_ONLY:
            continue
        for method in WRITES:
            response = client.generic(method, sample_path(route), "aisle=A01&reason=x",
                                      content_type="application/x-www-form-urlencoded")
            assert response.status_code == 405, (method, route, response.status_code)
            assert response["Allow"] == ("GET" if name in GET_ONLY else "GET, HEAD"), (method, route)
        checked.append(name)
    assert {"dashboard", "paused-workflows", "flow-health", "rack-map", "cordons", "handover"} <= set(checked)
    assert table_counts() == before


def test_a_post_to_the_cordons_page_is_405_and_cordons_nothing(personas, client):
    client.force_login(personas["shiftlead"])
    response = client.post("/cordons/", {"aisle": "A01", "reason": "rack inspection"})
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert Cordon.objects.count() == 0
    assert client.head("/cordons/").status_code == 200


def test_post_endpoints_refuse_get_and_the_other_methods(personas, client):
    client.force_login(personas["shiftlead"])
    for route, _, methods in PAGES:
        if methods != POST_ONLY:
            continue
        for method in ("GET", "HEAD", "PUT", "DELETE", "PATCH"):
            response = client.generic(method, sample_path(route))
            assert response.status_code == 405, (method, route)
            assert response["Allow"] == "POST", (method, route)


def test_pages_with_their_own_form_take_get_head_and_post_only(personas, client):
    client.force_login(personas["shiftlead"])
    forms = [route for route, _, methods in PAGES if methods == PAGE_WITH_FORM]
    assert forms
    for route in forms:
        assert client.get(sample_path(route)).status_code == 200
        for method in ("PUT", "DELETE", "PATCH"):
            response = client.generic(method, sample_path(route))
            assert response.status_code == 405, (method, route)
            assert response["Allow"] == "GET, HEAD, POST"


@pytest.mark.parametrize("path", ["/cordons/", "/flow/"])
def test_an_anonymous_write_is_sent_to_sign_in_like_any_other_request(client, transactional_db, path):
    response = client.post(path)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
