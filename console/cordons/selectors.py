"""What the cordons page and the rack map read of the cordons (recovery.models.Cordon, written
only by recovery.engine.cordons): the ones in force (the page shows them PAGE_SIZE at a time, keyset
paged) and the recent ones that ended or were lifted."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import BooleanField, Case, ExpressionWrapper, F, Q, Value, When

from console.input_checks import EARLIEST_TIME, LATEST_TIME
from console.readers import Cursor, keyset_slice
from recovery.models import Cordon

HISTORY_LIMIT = 50


@dataclass(frozen=True)
class CordonRow:
    cordon_id: int
    scope: str
    place: str
    reason: str
    created_by: str
    created_at: datetime
    ends_at: datetime | None
    lifted_by: str | None
    lifted_at: datetime | None
    in_force: bool
    end_unreadable: bool = False  # an end outside the times Python reads back (never loaded)

    @property
    def is_aisle(self) -> bool:
        return self.scope == Cordon.Scope.AISLE


@dataclass(frozen=True)
class CordonsPage:
    in_force: list[CordonRow]  # one page, oldest first
    history: list[CordonRow]  # ended or lifted, newest first, at most HISTORY_LIMIT
    in_force_total: int = 0
    prev_cursor: Cursor | None = None
    next_cursor: Cursor | None = None


def _in_force(now: datetime) -> Q:
    return Q(lift__isnull=True) & (Q(ends_at__isnull=True) | Q(ends_at__gt=now))


# An end the console reads back and shows in every zone (console.input_checks's bounds, which the
# form applies). Another (written by hand: psycopg cannot load a time past 9999-12-31) is compared
# in SQL only: the row is listed with its end unreadable, and the page still answers.
READABLE_END = Q(ends_at__isnull=True) | Q(ends_at__gte=EARLIEST_TIME, ends_at__lt=LATEST_TIME)


def _readable(cordons, now: datetime):
    """`cordons` without loading ends_at: `end` is it when readable (else NULL), `end_unreadable`
    says which, and `in_force_now` is decided in SQL."""
    return cordons.defer("ends_at").annotate(
        end=Case(When(READABLE_END, then=F("ends_at")), default=Value(None)),
        end_unreadable=ExpressionWrapper(~READABLE_END, output_field=BooleanField()),
        in_force_now=ExpressionWrapper(_in_force(now), output_field=BooleanField()))


def _row(c: Cordon, now: datetime) -> CordonRow:
    lift = getattr(c, "lift", None)
    return CordonRow(c.pk, c.scope, c.place, c.reason, c.created_by, c.created_at, c.end,
                     lift.lifted_by if lift else None, lift.lifted_at if lift else None, c.in_force_now,
                     c.end_unreadable)


def cordons_in_force(*, now: datetime) -> list[CordonRow]:
    """Every cordon in force, oldest first (a handful at any time)."""
    found = (_readable(Cordon.objects.filter(_in_force(now)), now).select_related("lift")
             .order_by("created_at", "id"))
    return [_row(c, now) for c in found]


def cordons_page(*, now: datetime, after: Cursor | None = None, before: Cursor | None = None) -> CordonsPage:
    """Three statements, however many cordons there are: one page of those in force (after or
    before a position), how many are in force, and the recent history."""
    in_force = _readable(Cordon.objects.filter(_in_force(now)), now).select_related("lift")
    page = keyset_slice(in_force, time_field="created_at", after=after, before=before)
    history = (_readable(Cordon.objects.exclude(_in_force(now)), now).select_related("lift")
               .order_by("-created_at", "-id")[:HISTORY_LIMIT])
    return CordonsPage(in_force=[_row(c, now) for c in page.rows], history=[_row(c, now) for c in history],
                       in_force_total=in_force.count(), prev_cursor=page.prev_cursor, next_cursor=page.next_cursor)
