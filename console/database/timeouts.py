"""Page and /metrics reads under CONSOLE_STATEMENT_TIMEOUT_MS (design §16).

A read-only request (GET or HEAD) of a page or of /metrics runs its view and its template in one
transaction whose first statement sets `statement_timeout` for that transaction only (SET LOCAL:
PgBouncer in transaction mode never hands it to another client). A statement that runs longer, or
waits longer for a lock, is cancelled by PostgreSQL; the transaction is rolled back and the request
answered 503 naming the timeout: a worker is never held by a slow page.

Not bound: what writes or feeds a write (POSTs, the repair pages with their preview and freshness
guard, the WCS callbacks), the probes (/health/ready has its own budget), static files. Recovery
and the notification evaluator run in the qcluster, outside any request.
"""

from contextlib import ExitStack

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.http import HttpResponse
from django.template.loader import render_to_string

from console.database import sql
from console.replica import read_alias

# SQLSTATE 57014 query_canceled: what PostgreSQL answers when statement_timeout cancels a statement.
QUERY_CANCELED = "57014"
READ_METHODS = ("GET", "HEAD")
# Path prefixes (of request.path_info) of what is never bound.
UNBOUNDED_PREFIXES = ("/repair/", "/api/", "/health/", "/static/")
METRICS_PATH = "/metrics"


def is_bounded(method: str, path: str) -> bool:
    """Whether a request's reads run under the statement timeout (pure: the method and path decide)."""
    return method in READ_METHODS and not path.startswith(UNBOUNDED_PREFIXES)


def is_statement_timeout(exc: BaseException) -> bool:
    """A Django DatabaseError (or the psycopg error itself) that is a cancelled statement."""
    return any(getattr(error, "sqlstate", None) == QUERY_CANCELED for error in (exc, exc.__cause__))


class _TimedOut(Exception):
    """Raised inside the request's transaction to roll it back once a statement timed out."""


class StatementTimeoutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_bounded(request.method, request.path_info):
            return self.get_response(request)
        try:
            with ExitStack() as transactions:
                # The primary's, and the read replica's when this page reads it (console.replica).
                for alias in dict.fromkeys((DEFAULT_DB_ALIAS, read_alias())):
                    # savepoint=False: a request is never inside a transaction already, except a test's.
                    transactions.enter_context(transaction.atomic(using=alias, savepoint=False))
                    with connections[alias].cursor() as cursor:
                        cursor.execute(sql.SET_LOCAL_STATEMENT_TIMEOUT,
                                       {"milliseconds": str(settings.CONSOLE_STATEMENT_TIMEOUT_MS)})
                response = self.get_response(request)
                if getattr(request, "statement_timed_out", False):
                    raise _TimedOut
        except _TimedOut:
            return timeout_response(request)
        return response

    def process_exception(self, request, exception):
        """A view (or its template) whose statement was cancelled: the transaction is rolled
        back in __call__, and the 503 rendered after it, outside it."""
        if is_bounded(request.method, request.path_info) and is_statement_timeout(exception):
            request.statement_timed_out = True
            return HttpResponse(status=503)
        return None


def timeout_response(request) -> HttpResponse:
    """503 naming the timeout: plain text for Prometheus, a page (in the reader's language) for
    people. The page reads nothing from the database, which has just proven slow."""
    milliseconds = settings.CONSOLE_STATEMENT_TIMEOUT_MS
    if request.path_info == METRICS_PATH:
        response = HttpResponse(
            f"a statement of the scrape ran longer than CONSOLE_STATEMENT_TIMEOUT_MS ({milliseconds} ms)\n",
            status=503, content_type="text/plain; charset=utf-8")
    else:
        body = render_to_string("database/statement_timeout.html",
                                {"milliseconds": milliseconds, "path": request.get_full_path()})
        response = HttpResponse(body, status=503)
    response["Retry-After"] = "30"
    response["Cache-Control"] = "no-store"
    return response
