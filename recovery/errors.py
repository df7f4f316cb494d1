"""The product's one exception hierarchy (docs/architecture.md §2).

Every error the code raises on purpose derives from `TidyError`, and the interface layers turn
each branch into one kind of answer:

- `Refused`: a request that was refused and changed nothing (bad input, a role, a precondition,
  a move the WMS refuses); the web layer answers a 4xx naming the field or the reason.
- `StaleWrite` (recovery.transaction): a conditional write matched no row, the state changed
  after it was read; the transaction rolls back (a stale worker changes nothing).
- `Unavailable`: something outside did not answer as it should (the WCS snapshot, a webhook
  receiver, an SMTP server); retried or reported, never taken as evidence.

Nothing catches `TidyError` as a whole: each caller catches the branch it can answer.
"""


class TidyError(Exception):
    """The root of every error the product raises on purpose."""


class Refused(TidyError):
    """A request refused: nothing changed."""


class Unavailable(TidyError):
    """A system outside the WMS database did not answer as it should."""
