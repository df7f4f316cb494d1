"""A workflow's case file: the events of every source (console.casefile.sources) merged into one
order and numbered from 1 (docs/architecture.md §16).

Each source is in its journal's own order (ids); the merge takes the earliest head of the sources
by time, so a source's own order is never changed by its timestamps, and events of one moment are
told in the order of SOURCES (a callback's receipt before the step it advanced, a decision before
the pause it made).

Bounded whatever the WCS sends: consecutive duplicates (the same status report again and again, a
finish reported twice) fold into one event with a count and its first and last time, and the file
is read a page at a time. A page reads at most ROWS rows of each source (LIMIT in SQL, after the
positions its cursor names) and holds at most `events` events and about `size` bytes of them; its
`next` cursor carries the last number and each source's position, so the next page goes on from
there with the same few queries. A fixed number of queries, whatever the history's length.
"""

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop, pgettext_lazy

from console.casefile.sources import SOURCES, CaseContext, CaseEvent, Chunk, Placed, Position, from_micros
from console.input_checks import BIGINT_MAX, InputRefused, Sentence
from console.messages import plain, shown
from recovery.models import TidyStep, TidyWorkflow

# The kinds as a reader sees them (the JSON keeps the codes).
KIND_LABELS = {
    "created": pgettext_lazy("case file event", "created"),
    "job_status": pgettext_lazy("case file event", "job status"),
    "callback": pgettext_lazy("case file event", "callback"),
    "step_event": pgettext_lazy("case file event", "step event"),
    "decision": pgettext_lazy("case file event", "decision"),
    "paused": pgettext_lazy("case file event", "paused"),
    "notification": pgettext_lazy("case file event", "notification"),
    "acknowledged": pgettext_lazy("case file event", "acknowledged"),
    "repair": pgettext_lazy("case file event", "repair"),
    "note": pgettext_lazy("case file event", "note"),
    "locks_released": pgettext_lazy("case file event", "locks released"),
    "completed": pgettext_lazy("case file event", "completed"),
    "cancelled": pgettext_lazy("case file event", "cancelled"),
}
ACTOR_LABELS = {"wms": gettext_lazy("WMS"), "wcs": gettext_lazy("WCS"), "recovery": gettext_lazy("recovery"),
                "console": gettext_lazy("console"), "callback": gettext_lazy("callback"),
                "repair": gettext_lazy("repair")}


@dataclass(frozen=True)
class DetailItem:
    key: str
    text: str
    block: bool  # a structure (evidence, payload, changes): shown as indented JSON


# A page of the JSON file: at most this many events, and about this many bytes of them (an event
# is never cut; one event alone may pass it).
PAGE_EVENTS = 500
PAGE_BYTES = 1_000_000
# The printable page: its first and its last events, at most this many and this size each.
HTML_EVENTS = 100
HTML_BYTES = 300_000
# A page reads at most this many rows of each source.
ROWS = 500
# A detail shown on the printable page is cut after this many characters (the JSON has it whole).
HTML_DETAIL_CHARS = 2000

# Details that differ between two receipts of the same report: left out when telling duplicates.
FOLD_IGNORES = {"job_status": frozenset({"receipt_id", "duration_ms"}),
                "callback": frozenset({"receipt_id", "duration_ms"})}


def _fold_key(event: CaseEvent):
    ignored = FOLD_IGNORES.get(event.kind)
    if ignored is None:
        return None  # only receipts fold: every other journal's rows are distinct events
    return (event.kind, event.actor, event.summary,
            {k: v for k, v in event.details.items() if k not in ignored})


@dataclass(frozen=True)
class NumberedEvent:
    seq: int | None  # None: one of the last events of the printable page, numbered on its own page
    event: CaseEvent
    count: int = 1  # consecutive duplicates folded into this event
    last_at: datetime | None = None  # the last duplicate's time (None: `at`)

    @property
    def at(self) -> datetime:
        return self.event.at

    @property
    def kind(self) -> str:
        return self.event.kind

    @property
    def actor(self) -> str:
        return self.event.actor

    @property
    def details(self) -> dict:
        return self.event.details

    @property
    def kind_label(self) -> str:
        return str(KIND_LABELS.get(self.kind, self.kind))

    @property
    def actor_label(self) -> str:
        """A system actor in the reader's language; a person's name as it is."""
        return str(ACTOR_LABELS.get(self.actor, self.actor))

    @property
    def detail_items(self) -> list[DetailItem]:
        items = []
        for key, value in _plain(self.details).items():
            if value is None or value == "" or value == [] or value == {}:
                continue
            if isinstance(value, dict | list):
                items.append(DetailItem(key, _cut(json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)),
                                        True))
            else:
                items.append(DetailItem(key, _cut(str(value).lower() if isinstance(value, bool) else str(value)),
                                        False))
        return items

    @property
    def until(self) -> datetime:
        return self.last_at or self.at

    def folded(self, duplicate: CaseEvent) -> "NumberedEvent":
        return replace(self, count=self.count + 1, last_at=duplicate.at)

    @property
    def summary_html(self):
        """The summary in the reader's language, values as code."""
        return shown(self.event.summary, self.event.summary.english())

    @property
    def summary_text(self) -> str:
        return plain(self.event.summary, self.event.summary.english())

    def as_json(self) -> dict:
        """`count` duplicates folded, from `at` to `last_at`."""
        return {"seq": self.seq, "at": timezone.localtime(self.at).isoformat(), "kind": self.kind,
                "actor": self.actor, "summary": self.summary_text, "details": _plain(self.details),
                "count": self.count, "last_at": timezone.localtime(self.until).isoformat()}


def _cut(text: str) -> str:
    return text if len(text) <= HTML_DETAIL_CHARS else text[:HTML_DETAIL_CHARS] + " …"


def _size(event: CaseEvent) -> int:
    """About the bytes the event takes in the JSON file (its details, and room for the rest)."""
    return len(json.dumps(_plain(event.details), ensure_ascii=False, default=str)) + 300


def _plain(value):
    """Details as JSON values: datetimes as ISO-8601, the rest as it is."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return timezone.localtime(value).isoformat()
    return value


# --- cursors ----------------------------------------------------------------------------------------------

_CURSOR = re.compile(r"([0-9]{1,19})((?:-[a-z][0-9]{1,19}(?:_[0-9]{1,19})*)*)")
_PART = re.compile(r"-([a-z])([0-9_]+)")
CURSOR_MAX_LENGTH = 400
BAD_CURSOR = gettext_noop("'%(name)s' is not a cursor of this case file: pass the 'next' value of a page as it is.")
_ARITY = {source.key: source.arity for source in SOURCES}


@dataclass(frozen=True)
class Cursor:
    """Where a page ended: its last number and each source's last position."""

    seq: int
    positions: dict[str, Position] = field(default_factory=dict)

    def __str__(self) -> str:
        return str(self.seq) + "".join(f"-{key}{'_'.join(str(n) for n in pos)}"
                                       for key, pos in self.positions.items())

    @classmethod
    def parse(cls, text: str, *, name: str = "after") -> "Cursor":
        """The cursor a page gave as `next`, or InputRefused naming the parameter."""
        refused = InputRefused(name, Sentence(BAD_CURSOR, name=name))
        match = _CURSOR.fullmatch(text) if len(text) <= CURSOR_MAX_LENGTH else None
        if match is None:
            raise refused
        positions: dict[str, Position] = {}
        for key, numbers in _PART.findall(match.group(2)):
            pos = tuple(int(n) for n in numbers.split("_"))
            if key not in _ARITY or key in positions or len(pos) != _ARITY[key] or max(pos) > BIGINT_MAX:
                raise refused
            if len(pos) == 3:  # a time in microseconds: a datetime must hold it
                try:
                    from_micros(pos[0])
                except OverflowError:
                    raise refused from None
            positions[key] = pos
        seq = int(match.group(1))
        if seq > BIGINT_MAX:
            raise refused
        return cls(seq, positions)


# --- the merge ----------------------------------------------------------------------------------------------


def _merge(chunks: list[Chunk], *, seq: int | None, positions: dict[str, Position], events: int,
           size: int) -> tuple[list[NumberedEvent], bool]:
    """The chunks' events merged by time (ties in the order of SOURCES), duplicates folded, until
    a source whose chunk is used up has more rows, or the page is full. Moves `positions` to the
    last event taken from each source; True when events remain after the page."""
    heads = [0] * len(chunks)
    out: list[NumberedEvent] = []
    used = 0
    while True:
        best, blocked = None, False
        for i, chunk in enumerate(chunks):
            if heads[i] < len(chunk.events):
                if best is None or chunk.events[heads[i]].event.at < chunks[best].events[heads[best]].event.at:
                    best = i
            elif chunk.more:
                blocked = True
        if blocked or best is None:
            break
        placed: Placed = chunks[best].events[heads[best]]
        key = _fold_key(placed.event)
        if out and key is not None and key == _fold_key(out[-1].event):
            out[-1] = out[-1].folded(placed.event)
        else:
            weight = _size(placed.event)
            if out and (len(out) >= events or used + weight > size):
                break
            if seq is not None:
                seq += 1
            out.append(NumberedEvent(seq, placed.event))
            used += weight
        heads[best] += 1
        positions[SOURCES[best].key] = placed.pos
    more = any(heads[i] < len(c.events) or c.more for i, c in enumerate(chunks))
    return out, more


def _page(ctx: CaseContext, after: Cursor | None, *, events: int, size: int) -> tuple[list[NumberedEvent],
                                                                                       Cursor | None]:
    positions = dict(after.positions) if after else {}
    chunks = [source.read(ctx, positions.get(source.key), ROWS) for source in SOURCES]
    numbered, more = _merge(chunks, seq=after.seq if after else 0, positions=positions, events=events, size=size)
    if not more or not numbered:
        return numbered, None
    return numbered, Cursor(numbered[-1].seq, positions)


def _tail(ctx: CaseContext, shown: Cursor) -> list[NumberedEvent]:
    """The last events, after those of the first page (`shown`), unnumbered: each source's last
    HTML_EVENTS rows merged and folded, the newest HTML_EVENTS events of them kept."""
    chunks = []
    for source in SOURCES:
        chunk = source.tail(ctx, HTML_EVENTS)
        before = shown.positions.get(source.key)
        chunks.append(Chunk([p for p in chunk.events if before is None or p.pos > before], False))
    merged, _ = _merge(chunks, seq=None, positions={}, events=BIGINT_MAX, size=BIGINT_MAX)
    kept, used = [], 0
    for event in reversed(merged):
        used += _size(event.event)
        if len(kept) >= HTML_EVENTS or (kept and used > HTML_BYTES):
            break
        kept.append(event)
    return kept[::-1]


@dataclass(frozen=True)
class CaseFile:
    workflow: TidyWorkflow
    steps: list[TidyStep]
    events: list[NumberedEvent]  # this page's
    generated_at: datetime
    after: Cursor | None = None  # where this page starts (None: the first page)
    next: Cursor | None = None  # where the next page starts (None: this page is the last)
    last_events: list[NumberedEvent] = field(default_factory=list)  # the printable page's last events

    def as_json(self) -> dict:
        return {"workflow_id": self.workflow.workflow_id, "events": [e.as_json() for e in self.events],
                "after": str(self.after) if self.after else None, "next": str(self.next) if self.next else None}

    @property
    def kinds(self) -> list[str]:
        return sorted({e.kind for e in self.events})


def case_file(*, workflow_id: int, after: Cursor | None = None, printable: bool = False) -> CaseFile | None:
    """One page of the workflow's events in order (the first, or the one after the cursor), or
    None when the workflow does not exist. `printable`: a page for people, smaller, and the first
    one also ends with the file's last events."""
    if not 0 < workflow_id <= BIGINT_MAX:
        return None
    workflow = TidyWorkflow.objects.filter(pk=workflow_id).first()  # tidy_workflow_pkey
    if workflow is None:
        return None
    steps = list(TidyStep.objects.filter(workflow_id=workflow_id).order_by("step_no"))  # workflow_step_no_key
    ctx = CaseContext(workflow=workflow, steps=steps)
    events, next_page = _page(ctx, after, events=HTML_EVENTS if printable else PAGE_EVENTS,
                              size=HTML_BYTES if printable else PAGE_BYTES)
    last = _tail(ctx, next_page) if printable and after is None and next_page is not None else []
    return CaseFile(workflow=workflow, steps=steps, events=events, generated_at=timezone.now(), after=after,
                    next=next_page, last_events=last)
