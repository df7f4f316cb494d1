"""The product's one exception hierarchy (docs/architecture.md §2).

Every error the code raises on purpose derives from `TidyError`, and the interface layers turn
each branch into one kind of answer:

- `Refused`: a request that was refused and changed nothing (bad input, a role, a precondition,
  a move the WMS refuses); the web layer answers a 4xx naming the field or the reason.
- `StaleWrite` (recovery.engine.transaction): a conditional write matched no row, the state changed
  after it was read; the transaction rolls back (a stale worker changes nothing).
- `Unavailable`: something outside did not answer as it should (the WCS snapshot, a webhook
  receiver, an SMTP server); retried or reported, never taken as evidence.

Nothing catches `TidyError` as a whole: each caller catches the branch it can answer.
"""

import psycopg
from django.db import InterfaceError as DjangoInterfaceError
from django.db import OperationalError as DjangoOperationalError


class TidyError(Exception):
    """The root of every error the product raises on purpose."""


class Refused(TidyError):
    """A request refused: nothing changed."""


class Unavailable(TidyError):
    """A system outside the WMS database did not answer as it should."""


def database_unreachable(exc: BaseException) -> bool:
    """Whether `exc` (or what it was raised from) says the database could not be reached: the
    connection failed, was cut (terminated by an administrator, a crash, a restart), or the
    server is starting or stopping. Nothing else counts: a deadlock, a statement timeout or a
    constraint is an error of the work itself, even though some are OperationalErrors too
    (docs/architecture.md §7, "Losing the database")."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, psycopg.errors.AdminShutdown | psycopg.errors.CrashShutdown
                      | psycopg.errors.CannotConnectNow | psycopg.errors.ConnectionException):
            return True
        if isinstance(exc, psycopg.InterfaceError | DjangoInterfaceError):
            return True  # the connection is closed or broken
        if isinstance(exc, psycopg.OperationalError) and getattr(exc, "sqlstate", None) is None:
            return True  # no answer from a server at all: a failed connect or a dropped socket
        if isinstance(exc, DjangoOperationalError) and exc.__cause__ is None:
            return True
        exc, seen = exc.__cause__, seen + 1
    return False
