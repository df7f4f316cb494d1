"""ReplicaMiddleware (settings.MIDDLEWARE, after sign-in): chooses the database a request's reads
use, and remembers a person's own writes (console/replica/__init__.py)."""

import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS

from console.replica import (
    READ_YOUR_WRITES_SECONDS,
    REPLICA,
    WROTE_AT_SESSION_KEY,
    ReplicaState,
    _read_alias,
    replica_configured,
    replica_state,
)

# The read-only pages (URL names) that read from the replica: the lists, the map, search, handover,
# analytics, case files and /metrics. Every other page reads the primary.
REPLICA_PAGES = frozenset({
    "dashboard", "paused-workflows", "active-workflows", "locks", "search", "handover", "rack-map", "analytics",
    "case-file-html", "case-file-json", "metrics",
})
SAFE_METHODS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class ReadChoice:
    alias: str
    # Why a replica page reads the primary, shown in its frame: "lagging", "down" or None.
    notice: str | None = None
    lag_seconds: float = 0.0


def read_choice(*, wrote_at: float | None, now: float, state: ReplicaState | None, max_lag: float) -> ReadChoice:
    """Where a replica page reads (pure): the primary for READ_YOUR_WRITES_SECONDS after the
    person's own write (no notice: it is their own write they see), the primary with a notice while
    the replica does not answer or lags more than `max_lag`, else the replica. `state` None: not
    asked (the person's own write decided)."""
    if wrote_at is not None and 0 <= now - wrote_at < READ_YOUR_WRITES_SECONDS:
        return ReadChoice(DEFAULT_DB_ALIAS)
    if state is None or not state.answering:
        return ReadChoice(DEFAULT_DB_ALIAS, notice="down")
    if state.lag_seconds > max_lag:
        return ReadChoice(DEFAULT_DB_ALIAS, notice="lagging", lag_seconds=state.lag_seconds)
    return ReadChoice(REPLICA, lag_seconds=state.lag_seconds)


def _wrote_at(request) -> float | None:
    session = getattr(request, "session", None)
    value = session.get(WROTE_AT_SESSION_KEY) if session is not None else None
    return value if isinstance(value, int | float) else None


class ReplicaMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            response = self.get_response(request)
        finally:
            token = request.__dict__.pop("_tidy_read_token", None)
            if token is not None:
                _read_alias.reset(token)
        user = getattr(request, "user", None)
        if (replica_configured() and request.method not in SAFE_METHODS and user is not None
                and user.is_authenticated and response.status_code < 400):
            request.session[WROTE_AT_SESSION_KEY] = time.time()
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not replica_configured() or request.method not in SAFE_METHODS:
            return None
        match = request.resolver_match
        if match is None or match.url_name not in REPLICA_PAGES:
            return None
        wrote_at, now = _wrote_at(request), time.time()
        own_write = wrote_at is not None and 0 <= now - wrote_at < READ_YOUR_WRITES_SECONDS
        choice = read_choice(wrote_at=wrote_at, now=now, state=None if own_write else replica_state(),
                             max_lag=settings.REPLICA_MAX_LAG_SECONDS)
        request.tidy_read_choice = choice
        if choice.alias != DEFAULT_DB_ALIAS:
            request._tidy_read_token = _read_alias.set(choice.alias)
        return None
