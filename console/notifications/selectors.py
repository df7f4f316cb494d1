"""Reads of the notification tables for the pages and the metrics."""

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Count, ExpressionWrapper, Q
from django.utils import timezone
from django.utils.translation import gettext

from console.models import ChannelState, ChannelTestMessage, Notification, NotificationDelivery, Silence
from console.notifications import sql
from console.notifications.channels.config import Channel
from console.notifications.events import (  # noqa: F401 (re-exported)
    SPECS,
    Event,
    default_paused_threshold,
    paused_thresholds,
)
from console.notifications.messages import with_texts
from console.notifications.silences import READABLE
from console.readers import Cursor, keyset_slice
from recovery.engine.decisions import PAUSE_REASONS

PAGE_LIMIT = 200
STATE_COUNT_CAP = 1000  # the list counts each state up to here, and shows "1,000+" beyond


def open_notification_counts() -> dict[str, int]:
    """Notifications in state open (not acknowledged, not resolved) per event, every event
    included (0 when none): the `tidy_notifications_open{event}` gauge."""
    counts = dict.fromkeys(Event.values, 0)
    for row in (Notification.objects.filter(state=Notification.State.OPEN).values("event")
                .annotate(n=Count("pk")).order_by()):
        counts[row["event"]] = row["n"]
    return counts


def state_counts(*, event: str = "") -> dict[str, str]:
    """Notifications per state (open, acknowledged, resolved), of one event or all, as the list
    shows them: each counted up to STATE_COUNT_CAP (reading at most one more entry of an index),
    "1,000+" beyond it."""
    with connection.cursor() as cursor:
        cursor.execute(sql.NOTIFICATION_STATE_COUNTS, {"event": event, "cap": STATE_COUNT_CAP + 1})
        counted = dict(zip([c.name for c in cursor.description], cursor.fetchone(), strict=True))
    return {state: capped_count(counted[state]) for state in Notification.State.values}


def capped_count(n: int) -> str:
    """A count read with a cap, as a page shows it: the number, or "1,000+" beyond the cap."""
    return f"{STATE_COUNT_CAP:,}+" if n > STATE_COUNT_CAP else str(n)


@dataclass
class NotificationsPage:
    rows: list[Notification]
    state_counts: dict[str, str]
    limited: bool


def notifications_page(*, state: str = "", event: str = "", limit: int = PAGE_LIMIT) -> NotificationsPage:
    """The newest notifications matching the filters (acknowledgement and who, in one join)."""
    qs = Notification.objects.select_related("acknowledgement", "silenced_by")
    if event:
        qs = qs.filter(event=event)
    counts = state_counts(event=event)
    if state:
        qs = qs.filter(state=state)
    rows = list(qs.order_by("-opened_at", "-id")[:limit + 1])
    return NotificationsPage(rows=with_texts(rows[:limit]), state_counts=counts, limited=len(rows) > limit)


@dataclass(frozen=True)
class ThresholdRow:
    reason_code: str
    minutes: int
    is_default: bool


@dataclass(frozen=True)
class SettingThreshold:
    event: str
    label: str  # in the active language
    setting: str
    minutes: int


def setting_thresholds() -> list[SettingThreshold]:
    """The thresholds of the events whose spec names a setting (environment, read-only here)."""
    return [SettingThreshold(spec.event, gettext(spec.label), spec.threshold_setting, spec.threshold())
            for spec in SPECS if spec.threshold_setting]


def threshold_rows() -> list[ThresholdRow]:
    """The paused-too-long threshold of every pause reason code, set or default."""
    stored = paused_thresholds()
    default = default_paused_threshold()
    codes = [r.value for r in PAUSE_REASONS] + sorted(set(stored) - {r.value for r in PAUSE_REASONS})
    return [ThresholdRow(code, stored.get(code, default), code not in stored) for code in codes]


# --- silences ------------------------------------------------------------------------------------

PAST_SILENCES = 30


@dataclass(frozen=True)
class UnreadableSilence:
    """A stored silence whose times cannot be read back (silences.READABLE): what is known of it."""

    pk: int
    event: str
    reason: str
    aisle: str
    comment: str
    username: str
    ended: bool


UNREADABLE_FIELDS = ("pk", "event", "reason", "aisle", "comment", "username")


@dataclass
class SilencesPage:
    current: list[Silence]  # one page of those in force now or starting later, soonest end first
    past: list[Silence]  # over (ended or expired), newest first, at most PAST_SILENCES
    held: dict[int, int]  # silence id -> unresolved notifications it holds back now
    unreadable: list[UnreadableSilence] = field(default_factory=list)  # times out of range, never loaded
    current_total: int = 0
    prev_cursor: Cursor | None = None
    next_cursor: Cursor | None = None


def unreadable_silences(*, limit: int = PAST_SILENCES) -> list[UnreadableSilence]:
    """The silences whose times cannot be read back, without reading their times."""
    ended = ExpressionWrapper(Q(ending__isnull=False), output_field=BooleanField())
    rows = (Silence.objects.exclude(READABLE).annotate(ended=ended).order_by("-id")
            .values_list(*UNREADABLE_FIELDS, "ended")[:limit])
    return [UnreadableSilence(*row) for row in rows]


def silences_page(*, now: datetime | None = None, after: Cursor | None = None,
                  before: Cursor | None = None) -> SilencesPage:
    """The silences a shift lead manages, each with who created it and who ended it (one join):
    one page of the current ones (keyset on ends_at, id: silence_ends_idx), how many there are,
    the newest past ones and the unreadable ones; a fixed number of statements."""
    now = now or timezone.now()
    rows = Silence.objects.filter(READABLE).select_related("ending")
    over = Q(ends_at__lte=now) | Q(ending__at__lte=now)
    page = keyset_slice(rows.exclude(over), time_field="ends_at", after=after, before=before)
    current = page.rows
    past = list(rows.filter(over).order_by("-ends_at", "-id")[:PAST_SILENCES])
    held = dict(Notification.objects.filter(resolved_at__isnull=True, silenced_by__in=[s.pk for s in current])
                .values("silenced_by").annotate(n=Count("pk")).order_by().values_list("silenced_by", "n"))
    return SilencesPage(current=current, past=past, held=held, unreadable=unreadable_silences(),
                        current_total=rows.exclude(over).count(), prev_cursor=page.prev_cursor,
                        next_cursor=page.next_cursor)


def silences_in(*, start: datetime, end: datetime) -> list[Silence]:
    """The silences in force at some time in [start, end): the handover's."""
    return list(Silence.objects.select_related("ending").filter(READABLE, starts_at__lt=end, ends_at__gt=start)
                .exclude(ending__at__lte=start).order_by("starts_at", "id"))


# --- chat channels -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChannelRow:
    """One configured chat channel as its page shows it (never its URL or secret: `host` only)."""

    channel: Channel
    state: ChannelState | None  # None: nothing sent to it yet
    waiting: int  # messages due or held back by its rate limit, not yet sent
    last_test: ChannelTestMessage | None


def channel_rows() -> list[ChannelRow]:
    """Every channel of NOTIFY_CHANNELS_FILE in the file's order, with its state, what waits for it
    and its latest test message: three statements whatever the history."""
    configured = list(settings.NOTIFY_CHANNELS)
    names = [c.name for c in configured]
    states = {s.name: s for s in ChannelState.objects.filter(name__in=names)}
    waiting = dict(NotificationDelivery.objects.filter(state=NotificationDelivery.State.PENDING,
                                                       channel=NotificationDelivery.Channel.CHAT,
                                                       channel_name__in=names)
                   .values("channel_name").annotate(n=Count("pk")).order_by().values_list("channel_name", "n"))
    tests = {t.channel: t for t in ChannelTestMessage.objects.filter(channel__in=names)
             .order_by("channel", "-requested_at", "-id").distinct("channel")}  # channel_test_latest_idx
    return [ChannelRow(c, states.get(c.name), waiting.get(c.name, 0), tests.get(c.name)) for c in configured]
