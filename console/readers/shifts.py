"""Shifts (SHIFT_STARTS, warehouse time): which shift a moment falls in, and the shifts around it."""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import dateformat
from django.utils.translation import pgettext

# --- shifts (SHIFT_STARTS, warehouse time) ---------------------------------------------------


def warehouse_zone() -> ZoneInfo:
    return ZoneInfo(settings.TIME_ZONE)


def shift_starts() -> list[time]:
    return [time(h, m) for h, m in settings.SHIFT_STARTS]


@dataclass(frozen=True)
class Shift:
    start: datetime  # aware, warehouse time
    end: datetime

    @property
    def param(self) -> str:
        return self.start.strftime("%Y-%m-%d@%H:%M")

    @property
    def label(self) -> str:
        # A date format per language ("Mon 02 Mar 2026, 06:00" in English), names of days and
        # months from Django's own catalogues.
        start = dateformat.format(self.start, pgettext("shift label, Django date format", "D d M Y, H:i"))
        return f"{start} – {self.end:%H:%M}"

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def _at(day: date, clock: time) -> datetime:
    return datetime.combine(day, clock, tzinfo=warehouse_zone())


def _starts_around(day: date) -> list[datetime]:
    """Every shift start from the day before `day` to the day after, in order."""
    return [_at(day + timedelta(days=d), t) for d in (-1, 0, 1) for t in shift_starts()]


def shift_at(moment: datetime) -> Shift:
    """The shift that contains `moment`."""
    local = moment.astimezone(warehouse_zone())
    starts = _starts_around(local.date())
    i = max(i for i, s in enumerate(starts) if s <= local)
    return Shift(start=starts[i], end=starts[i + 1])


def shift_starting(day: date, clock: time) -> Shift:
    """The shift starting on `day` at `clock`; ValueError when `clock` is not a shift start."""
    if clock not in shift_starts():
        raise ValueError(f"{clock:%H:%M} is not a shift start")
    return shift_at(_at(day, clock))


def shift_before(shift: Shift) -> Shift:
    return shift_at(shift.start - timedelta(seconds=1))


def shift_after(shift: Shift) -> Shift:
    return shift_at(shift.end)
