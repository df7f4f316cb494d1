"""Cordons: an aisle or one cargo space closed to new tidy work (docs/architecture.md §18).

A shift lead cordons a place (an aisle as SPACE_CODE_PATTERN names it, or one space code) with a
reason and an optional end; tidy creation (recovery.engine.creation) refuses a move whose source or
target is in a cordon in force, naming the cordon. Workflows already running are not touched:
a cordon keeps new work out, it is not a decision about old work.

The record is append-only in the database (migration recovery 0008_cordons): a cordon row is
never edited or deleted, and lifting it early is a row of its own (CordonLift, one per cordon),
so the history of who closed and reopened a place is the table itself. A cordon is in force
from its creation until it is lifted or its end passes.

The console's page writes only through `cordon_create` and `cordon_lift` here.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from recovery.engine import wms_sql
from recovery.engine.places import aisle_of
from recovery.errors import Refused
from recovery.messages import Message, gettext_noop, message
from recovery.models import Cordon, CordonLift

REASON_MAX = 500
PLACE_MAX = 100
# The longest a cordon may be set for ahead; an open-ended one is lifted by hand.
MAX_DURATION = timedelta(days=90)
BIGINT_MAX = 2**63 - 1


class CordonRefused(Refused):
    """A cordon was not created or lifted: nothing changed. `field` names the input at fault;
    `message` says why (a message id with values, shown in the reader's language)."""

    def __init__(self, field: str, why: Message):
        self.field = field
        self.message = why
        super().__init__(why.english())


# The refusals' texts (docs/architecture.md §15).
BAD_SCOPE = gettext_noop("The scope must be AISLE or SPACE.")
BAD_PLACE = gettext_noop("Give the aisle or the space code (1 to %(max)s characters).")
NO_SUCH_SPACE = gettext_noop("There is no cargo space %(place)s.")
NO_SUCH_AISLE = gettext_noop("There is no aisle %(place)s: no cargo space code is in it.")
BAD_REASON = gettext_noop("Give a reason of 1 to %(max)s characters.")
END_NOT_FUTURE = gettext_noop("The end must be in the future.")
END_TOO_FAR = gettext_noop("The end must be at most %(days)s days ahead.")
NO_SUCH_CORDON = gettext_noop("There is no cordon #%(id)s.")
CORDON_ENDED = gettext_noop("Cordon #%(id)s has already ended.")


@dataclass(frozen=True)
class CordonInForce:
    """A cordon that refuses new tidy work in `place` (an aisle or a space)."""

    cordon_id: int
    scope: str
    place: str
    reason: str
    created_by: str
    created_at: datetime
    ends_at: datetime | None

    def __str__(self) -> str:
        where = f"aisle {self.place}" if self.scope == Cordon.Scope.AISLE else f"space {self.place}"
        until = f" until {self.ends_at.isoformat(timespec='minutes')}" if self.ends_at else ""
        return f"cordon #{self.cordon_id} on {where}{until} ({self.reason})"


def cordons_in_force(*, spaces) -> dict[str, list[CordonInForce]]:
    """For each of `spaces`, the cordons in force on it or on its aisle (spaces without one are
    left out). One statement (CORDONS_IN_FORCE); `now()` is the caller's transaction time."""
    spaces = sorted(set(spaces))
    aisles = {code: aisle_of(code) for code in spaces}
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.CORDONS_IN_FORCE, {
            "spaces": spaces, "aisles": sorted({a for a in aisles.values() if a is not None})})
        cordons = [CordonInForce(*row) for row in cursor.fetchall()]
    found: dict[str, list[CordonInForce]] = {}
    for code in spaces:
        hits = [c for c in cordons if (c.scope == Cordon.Scope.SPACE and c.place == code)
                or (c.scope == Cordon.Scope.AISLE and c.place == aisles[code])]
        if hits:
            found[code] = hits
    return found


def _space_exists(code: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.CARGO_SPACES, {"spaces": [code]})
        return cursor.fetchone() is not None


def _aisle_exists(aisle: str) -> bool:
    """Some cargo space of bas_cargo_space is in `aisle` (as SPACE_CODE_PATTERN splits its code)."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.ALL_CARGO_SPACE_CODES)
        return any(aisle_of(code) == aisle for (code,) in cursor.fetchall())


def cordon_create(*, scope: str, place: str, reason: str, ends_at: datetime | None, username: str,
                  now: datetime | None = None) -> Cordon:
    """Cordon an aisle or a space. Refused (CordonRefused naming the field) for an unknown scope, a
    space that bas_cargo_space does not list, an aisle no listed space is in, an empty or too long
    reason, or an end that is not in the future or too far ahead."""
    now = now or timezone.now()
    place = (place or "").strip()
    reason = (reason or "").strip()
    if scope not in Cordon.Scope.values:
        raise CordonRefused("scope", Message(BAD_SCOPE))
    if not place or len(place) > PLACE_MAX:
        raise CordonRefused("place", message(BAD_PLACE, max=PLACE_MAX))
    if scope == Cordon.Scope.SPACE and not _space_exists(place):
        raise CordonRefused("place", message(NO_SUCH_SPACE, place=place))
    if scope == Cordon.Scope.AISLE and not _aisle_exists(place):
        raise CordonRefused("place", message(NO_SUCH_AISLE, place=place))
    if not reason or len(reason) > REASON_MAX:
        raise CordonRefused("reason", message(BAD_REASON, max=REASON_MAX))
    if ends_at is not None and ends_at <= now:
        raise CordonRefused("ends_at", Message(END_NOT_FUTURE))
    if ends_at is not None and ends_at > now + MAX_DURATION:
        raise CordonRefused("ends_at", message(END_TOO_FAR, days=MAX_DURATION.days))
    return Cordon.objects.create(scope=scope, place=place, reason=reason, ends_at=ends_at,
                                 created_by=(username or "")[:150])


def cordon_lift(*, cordon_id: int, username: str, now: datetime | None = None) -> CordonLift:
    """Lift a cordon in force: a CordonLift row (the cordon itself is never changed). Refused for an
    unknown cordon or one whose end has passed; lifting a lifted cordon again (a double submit, two
    shift leads at once) changes nothing and answers the first lift."""
    now = now or timezone.now()
    cordon = Cordon.objects.filter(pk=cordon_id).first() if 0 < cordon_id <= BIGINT_MAX else None
    if cordon is None:
        raise CordonRefused("cordon", message(NO_SUCH_CORDON, id=cordon_id))
    earlier = CordonLift.objects.filter(cordon=cordon).first()
    if earlier is not None:
        return earlier
    if cordon.ends_at is not None and cordon.ends_at <= now:
        raise CordonRefused("cordon", message(CORDON_ENDED, id=cordon_id))
    try:
        # The lift's primary key is the cordon's: the database lets only the first one in.
        with transaction.atomic():
            return CordonLift.objects.create(cordon=cordon, lifted_by=(username or "")[:150])
    except IntegrityError:
        return CordonLift.objects.get(cordon=cordon)
