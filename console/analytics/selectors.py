"""How long pauses wait for a person (docs/architecture.md §16): time to acknowledge (notification
opened -> acknowledged) and time to resolve (paused -> resumed, completed or cancelled), p50 and p90
with counts, by reason code, aisle (SPACE_CODE_PATTERN) and shift (SHIFT_STARTS), over 7 and 30
days, and per week. The percentiles are computed in PostgreSQL (percentile_cont,
analytics_sql.ANALYTICS_*); this module gives them the aisles and the shifts and shapes the rows.
Three queries, whatever the history's size, run off the request path: the schedule tidy-analytics
(console.analytics.tasks) stores their rows as a snapshot every ANALYTICS_REFRESH_MINUTES, and the
page and its CSV shape the newest one (newest_snapshot).
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext, gettext_lazy

from console.analytics import sql as analytics_sql
from console.models import AnalyticsSnapshot
from console.rack_map.drawing import parse_code
from console.readers import fetch_dicts, fetch_rows
from console.readers.shifts import shift_starts, warehouse_zone
from console.repair.registry import resolving_actions
from console.replica import read_alias

METRICS = {"acknowledge": gettext_lazy("Time to acknowledge"), "resolve": gettext_lazy("Time to resolve")}
METRIC_HELP = {
    "acknowledge": gettext_lazy("From a notification opening to someone acknowledging it."),
    "resolve": gettext_lazy("From recovery pausing a workflow to a repair resuming it, or the workflow completing "
                            "or being cancelled."),
}
DIMENSIONS = {"reason": gettext_lazy("By reason code"), "aisle": gettext_lazy("By aisle"),
              "shift": gettext_lazy("By shift")}
WINDOWS = (7, 30)
TREND_WEEKS = 12


@dataclass(frozen=True)
class Stat:
    done: int  # finished episodes (the percentiles are over these)
    still_open: int
    p50: float | None  # seconds
    p90: float | None


EMPTY = Stat(0, 0, None, None)


@dataclass
class Row:
    key: str  # a reason code, an aisle ('' no workflow, 'other' a code the pattern does not split), a shift start
    label: str
    windows: dict[int, Stat] = field(default_factory=dict)

    def stat(self, days: int) -> Stat:
        return self.windows.get(days, EMPTY)

    @property
    def cells(self) -> list[tuple[int, Stat]]:
        return [(days, self.stat(days)) for days in WINDOWS]


@dataclass
class Breakdown:
    dimension: str
    rows: list[Row]

    @property
    def title(self) -> str:
        return str(DIMENSIONS[self.dimension])


@dataclass(frozen=True)
class Week:
    start: date
    stat: Stat


@dataclass
class MetricReport:
    metric: str
    overall: Row
    breakdowns: list[Breakdown]
    weeks: list[Week]

    @property
    def title(self) -> str:
        return str(METRICS[self.metric])

    @property
    def help(self) -> str:
        return str(METRIC_HELP[self.metric])


@dataclass(frozen=True)
class Analytics:
    now: datetime
    metrics: list[MetricReport]

    def metric(self, name: str) -> MetricReport:
        return next(m for m in self.metrics if m.metric == name)


def _shift_label(key: str) -> str:
    starts = [t.strftime("%H:%M") for t in shift_starts()]
    if key not in starts:
        return key
    return f"{key}–{starts[(starts.index(key) + 1) % len(starts)]}"


def _label(dimension: str, key: str) -> str:
    if dimension == "aisle" and key == "":
        return gettext("(no workflow)")
    if dimension == "aisle" and key == "other":
        return gettext("other (code not split by SPACE_CODE_PATTERN)")
    if dimension == "shift":
        return _shift_label(key)
    return key or "—"


def _params(*, now: datetime, since: datetime, spaces: list[str]) -> dict:
    aisles = [(place.aisle if (place := parse_code(space)) else "other") for space in spaces]
    return {"now": now, "since": since, "spaces": spaces, "aisles": aisles, "tz": settings.TIME_ZONE,
            "resolving_actions": resolving_actions(),
            "shift_starts": [t.strftime("%H:%M") for t in shift_starts()]}


def _stat(row: dict) -> Stat:
    return Stat(row["done"], row["still_open"], row["p50"], row["p90"])


def analytics(*, now: datetime) -> Analytics:
    """Both metrics: over the last 7 and 30 days (by start), overall and by reason, aisle and shift,
    and the last TREND_WEEKS weeks' trend, computed now (the task's work: the page reads a snapshot)."""
    return shaped(now=now, figures=compute_figures(now=now))


def compute_figures(*, now: datetime) -> dict:
    """The rows of the analytics statements for `now`, as JSON (what a snapshot stores). Read in one
    transaction without JIT (ANALYTICS_SETTINGS)."""
    with transaction.atomic(using=read_alias()):
        fetch_rows(analytics_sql.ANALYTICS_SETTINGS, {})
        window_since = now - timedelta(days=max(WINDOWS))
        spaces = [row[0] for row in fetch_rows(analytics_sql.ANALYTICS_SPACES, {"since": window_since})]
        percentiles = fetch_dicts(analytics_sql.ANALYTICS_PERCENTILES,
                                  _params(now=now, since=window_since, spaces=spaces))
        # The trend from the Monday TREND_WEEKS - 1 weeks before this week's (warehouse time).
        local_today = now.astimezone(warehouse_zone()).date()
        first_monday = local_today - timedelta(days=local_today.weekday(), weeks=TREND_WEEKS - 1)
        trend_since = datetime.combine(first_monday, datetime.min.time(), tzinfo=warehouse_zone())
        weekly = fetch_dicts(analytics_sql.ANALYTICS_WEEKLY, _params(now=now, since=trend_since, spaces=[]))
    return {"first_monday": first_monday.isoformat(),
            "percentiles": [{k: _json_value(v) for k, v in r.items()} for r in percentiles],
            "weekly": [{k: _json_value(v) for k, v in r.items()} for r in weekly]}


def _json_value(value):
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


def shaped(*, now: datetime, figures: dict) -> Analytics:
    """The page's figures from a computation's rows (compute_figures), labelled in the reader's language."""
    reports = {m: MetricReport(m, Row("", ""), [Breakdown(d, []) for d in DIMENSIONS], []) for m in METRICS}
    found: dict[tuple[str, str, str], Row] = {}
    for row in figures["percentiles"]:
        report = reports[row["metric"]]
        if row["dimension"] == "all":
            report.overall.windows[row["days"]] = _stat(row)
            continue
        key = (row["metric"], row["dimension"], row["key"])
        if key not in found:
            found[key] = Row(row["key"], _label(row["dimension"], row["key"]))
            next(b for b in report.breakdowns if b.dimension == row["dimension"]).rows.append(found[key])
        found[key].windows[row["days"]] = _stat(row)
    first_monday = date.fromisoformat(figures["first_monday"])
    weekly = {(r["metric"], date.fromisoformat(r["week"])): _stat(r) for r in figures["weekly"]}
    for metric, report in reports.items():
        report.weeks = [Week(first_monday + timedelta(weeks=i), weekly.get((metric, first_monday + timedelta(weeks=i)),
                                                                           EMPTY))
                        for i in range(TREND_WEEKS)]
        for breakdown in report.breakdowns:
            breakdown.rows.sort(key=lambda r: (r.key == "", r.key))
    return Analytics(now=now, metrics=list(reports.values()))


@dataclass(frozen=True)
class Snapshot:
    report: Analytics
    computed_at: datetime


def newest_snapshot() -> Snapshot | None:
    """The newest computation of the figures (None: none yet). One row read by
    analytics_snapshot_newest_idx: the page never reads the pause or notification history."""
    row = AnalyticsSnapshot.objects.order_by("-computed_at", "-id").first()
    if row is None:
        return None
    return Snapshot(report=shaped(now=row.computed_at, figures=row.figures), computed_at=row.computed_at)


def csv_rows(report: Analytics):
    """The page as CSV rows: one per metric, window, grouping and group; then one per metric and week."""
    yield ("metric", "window_days", "group_by", "group", "done", "still_open", "p50_seconds", "p90_seconds")
    for m in report.metrics:
        for days in WINDOWS:
            s = m.overall.stat(days)
            yield (m.metric, days, "all", "", s.done, s.still_open, _seconds(s.p50), _seconds(s.p90))
            for b in m.breakdowns:
                for row in b.rows:
                    s = row.stat(days)
                    yield (m.metric, days, b.dimension, row.key, s.done, s.still_open, _seconds(s.p50),
                           _seconds(s.p90))
    for m in report.metrics:
        for week in m.weeks:
            yield (m.metric, 7, "week", week.start.isoformat(), week.stat.done, week.stat.still_open,
                   _seconds(week.stat.p50), _seconds(week.stat.p90))


def _seconds(value: float | None):
    return "" if value is None else round(value, 1)
