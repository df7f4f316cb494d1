"""Server-rendered SVG charts (pure): scale a series into the viewBox of a small line or bar chart."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    points: str  # "x,y x,y ..." for a <polyline>
    bars: tuple[tuple[float, float, float, float], ...]  # (x, y, w, h) for <rect>s
    y_max: float
    first: datetime | None
    last: datetime | None
    count: int

    @property
    def empty(self) -> bool:
        return self.count == 0


PAD_TOP = 6
PAD_BOTTOM = 4


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000):
        if value <= step:
            return step
    return value


def line_chart(series: list[tuple[datetime, float | None]], *, width: int = 600, height: int = 120) -> Chart:
    """Points of `series` (oldest first), x by time, y from 0 to a rounded maximum."""
    values = [(t, v) for t, v in series if v is not None]
    if not values:
        return Chart(width, height, "", (), 0, None, None, 0)
    first, last = values[0][0], values[-1][0]
    span = (last - first).total_seconds() or 1
    y_max = _nice_max(max(v for _, v in values))
    usable = height - PAD_TOP - PAD_BOTTOM
    pts = []
    for t, v in values:
        x = 0 if len(values) == 1 else (t - first).total_seconds() / span * width
        y = PAD_TOP + usable - (v / y_max) * usable
        pts.append(f"{x:.1f},{y:.1f}")
    return Chart(width, height, " ".join(pts), (), y_max, first, last, len(values))


def bar_chart(series: list[tuple[datetime, float]], *, width: int = 600, height: int = 80) -> Chart:
    """One bar per item of `series` (oldest first), heights from 0 to a rounded maximum."""
    if not series:
        return Chart(width, height, "", (), 0, None, None, 0)
    y_max = _nice_max(max(v for _, v in series))
    usable = height - PAD_TOP - PAD_BOTTOM
    slot = width / len(series)
    bars = []
    for i, (_, v) in enumerate(series):
        h = (v / y_max) * usable
        bars.append((round(i * slot + slot * 0.1, 1), round(PAD_TOP + usable - h, 1), round(slot * 0.8, 1),
                     round(h, 1)))
    return Chart(width, height, "", tuple(bars), y_max, series[0][0], series[-1][0], len(series))


@dataclass(frozen=True)
class Line:
    name: str  # a CSS class suffix: series-<name>
    points: str  # "x,y x,y ..." for a <polyline>
    dots: tuple[tuple[float, float], ...]  # each value's (x, y), for a <circle>


@dataclass(frozen=True)
class LinesChart:
    width: int
    height: int
    lines: tuple[Line, ...]
    y_max: float
    count: int  # values drawn, all lines together

    @property
    def empty(self) -> bool:
        return self.count == 0


def lines_chart(series: dict[str, list[float | None]], *, width: int = 600, height: int = 160) -> LinesChart:
    """Several lines over the same evenly spaced slots (e.g. weeks), one scale from 0 to a rounded
    maximum; a missing value (None) is skipped, its neighbours joined."""
    slots = max((len(values) for values in series.values()), default=0)
    present = [v for values in series.values() for v in values if v is not None]
    if not present:
        return LinesChart(width, height, (), 0, 0)
    y_max = _nice_max(max(present))
    usable = height - PAD_TOP - PAD_BOTTOM
    step = width / (slots - 1) if slots > 1 else 0
    lines = []
    for name, values in series.items():
        dots = tuple((round(i * step if slots > 1 else width / 2, 1), round(PAD_TOP + usable - (v / y_max) * usable, 1))
                     for i, v in enumerate(values) if v is not None)
        lines.append(Line(name, " ".join(f"{x},{y}" for x, y in dots), dots))
    return LinesChart(width, height, tuple(lines), y_max, len(present))
