"""One person's hourly limit on rows that are never deleted (notes, cordons, silences): a flood (a
stuck scanner, a script, a slip of the hand) would otherwise fill every page and handover for good.

`rate_limit_check` runs inside the caller's transaction, before the row is written: it takes the
person's transaction-level advisory lock for the kind of row (so two posts of one person count one
after the other, on any node), then reads the times of the person's rows of the last hour through
the caller's queryset and refuses with `RateLimited` when the limit is reached.
"""

from datetime import datetime, timedelta

from django.db import connection

from console.readers import sql as readers_sql
from recovery.errors import Refused

RATE_WINDOW = timedelta(hours=1)


class RateLimited(Refused):
    """The person made `limit` rows of one kind within the last hour; the next is possible after
    `retry_after`."""

    def __init__(self, *, limit: int, retry_after: timedelta):
        super().__init__(f"{limit} in the last hour; the next in {retry_after}")
        self.limit = limit
        self.retry_after = retry_after


def rate_limit_check(*, namespace: int, user, recent_times, limit: int, now: datetime) -> None:
    """Refuse (RateLimited) when `recent_times` (a queryset of the person's rows' times after
    `now - RATE_WINDOW`, newest first, one flat column) holds `limit` or more. The caller's
    transaction must be open; `namespace` is the first key of the lock (one per kind of row)."""
    with connection.cursor() as cursor:
        cursor.execute(readers_sql.RATE_LIMIT_LOCK, {"namespace": namespace, "key": user.pk % 2**31})
    recent = list(recent_times[:limit])
    if len(recent) >= limit:
        # The oldest of the last `limit` rows must leave the window first.
        raise RateLimited(limit=limit, retry_after=max(recent[-1] + RATE_WINDOW - now, timedelta(seconds=1)))
