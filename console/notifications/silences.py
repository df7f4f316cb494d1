"""Silences (docs/architecture.md §12): which one holds a notification back now.

A silence is active from `starts_at` until the first of `ends_at` and its ending (a shift lead
ending it early). The evaluator asks `holding` for every unresolved notification on each run: a
notification a silence matches is still recorded and listed, but its messages wait and it does
not escalate; when no silence matches it any more and it is still open, its messages go out.
"""

from datetime import datetime

from django.db.models import Q

from console.input_checks import EARLIEST_TIME, LATEST_TIME
from console.models import Notification, Silence

# The silences whose times Python reads back and every zone shows (console.input_checks's bounds,
# which the form applies). A row outside them (stored before the bound, or written by hand: psycopg
# cannot load a time past 9999-12-31) is never loaded; the silences page lists it as unreadable.
READABLE = Q(starts_at__gte=EARLIEST_TIME, starts_at__lt=LATEST_TIME, ends_at__gte=EARLIEST_TIME,
             ends_at__lt=LATEST_TIME)


def active_silences(*, now: datetime) -> list[Silence]:
    """The silences in force at `now`, oldest first (silence_ends_idx: the few not yet over)."""
    return list(Silence.objects.filter(READABLE, starts_at__lte=now, ends_at__gt=now)
                .filter(Q(ending__isnull=True) | Q(ending__at__gt=now)).order_by("starts_at", "id"))


def holding(silences: list[Silence], notification: Notification) -> Silence | None:
    """The first active silence that matches the notification's event, reason and aisle."""
    for silence in silences:
        if silence.matches(event=notification.event, reason=notification.reason, aisle=notification.aisle):
            return silence
    return None
