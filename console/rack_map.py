"""The rack map: cargo spaces as a grid per aisle (docs/architecture.md, "The console").

Space codes are split by SPACE_CODE_PATTERN into aisle, level and position; codes that do not
match are kept in `RackMap.unmatched` and listed beside the map, never dropped. The data comes
from two set-based statements (console/rack_map_sql.py); the SVG is built here as one string
per aisle, not by a template loop per space, so 20,000 spaces render in tens of milliseconds.
Every value from the database is escaped before it enters the markup.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings
from django.db import connection
from django.urls import reverse
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_lazy

from console import rack_map_sql

# Filter values, in legend order. "active" includes the stalled ones (they are active too).
STATES = {
    "paused": gettext_lazy("Locked by a paused workflow"),
    "active": gettext_lazy("Locked by an active workflow"),
    "stalled": gettext_lazy("Locked by a stalled workflow"),
    "other": gettext_lazy("Locked by a finished or cancelled workflow"),
    "occupied": gettext_lazy("Holds a tray"),
    "free": gettext_lazy("Free (no tray, no lock)"),
}
# Short CSS classes keep 20,000 rects small (static/console/rack-map.css draws them).
LOCK_CLASS = {"paused": "p", "active": "a", "stalled": "s", "other": "x"}

CELL = 12  # the rect's side, set in rack-map.css (.rk rect)
PITCH = 15  # cell plus gap
TOP = 16  # room for the position labels
CHAR = 7  # width of one label character


# --- parsing -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    aisle: str
    level: str
    position: str


@lru_cache(maxsize=8)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


@lru_cache(maxsize=262_144)
def parse_code(code: str, pattern: str | None = None) -> Place | None:
    """Aisle, level and position of a space code, or None when it does not match the pattern."""
    m = _compiled(pattern or settings.SPACE_CODE_PATTERN).search(code)
    if m is None:
        return None
    return Place(m.group("aisle"), m.group("level"), m.group("position"))


def natural_key(text: str) -> tuple:
    """A02 before A10, level 9 before level 10."""
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text) if p)
    return parts, text


# --- the data ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Space:
    code: str
    tray: str | None
    holder: int | None
    holder_status: str | None
    stalled: bool
    known: bool  # False: only a lock names it, bas_cargo_space does not list it

    @property
    def lock(self) -> str | None:
        if self.holder is None:
            return None
        if self.holder_status == "PAUSED_RECOVERY":
            return "paused"
        if self.holder_status == "ACTIVE":
            return "stalled" if self.stalled else "active"
        return "other"

    def has_state(self, state: str) -> bool:
        if state == "occupied":
            return self.tray is not None
        if state == "free":
            return self.tray is None and self.holder is None
        if state == "active":
            return self.lock in ("active", "stalled")
        return self.lock == state

    @property
    def css(self) -> str:
        lock = LOCK_CLASS.get(self.lock or "")
        if self.tray is not None:
            return f"{lock} o" if lock else "o"
        return lock or ""

    def describe(self) -> str:
        """The text label of the space: code, tray and holder."""
        parts = [self.code]
        parts.append(gettext("tray %(tray)s") % {"tray": self.tray} if self.tray is not None else gettext("no tray"))
        lock = self.lock
        if lock == "paused":
            parts.append(gettext("locked by paused workflow #%(id)s") % {"id": self.holder})
        elif lock == "stalled":
            parts.append(gettext("locked by stalled workflow #%(id)s") % {"id": self.holder})
        elif lock == "active":
            parts.append(gettext("locked by active workflow #%(id)s") % {"id": self.holder})
        elif lock == "other":
            parts.append(gettext("locked by workflow #%(id)s (%(status)s)")
                         % {"id": self.holder, "status": self.holder_status or "?"})
        else:
            parts.append(gettext("not locked"))
        if not self.known:
            parts.append(gettext("not in bas_cargo_space"))
        return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class PausedStep:
    workflow_id: int
    step_no: int
    tray_code: str
    source: str
    target: str

    def describe(self) -> str:
        return gettext("workflow #%(id)s step %(step)s: tray %(tray)s from %(source)s to %(target)s") % {
            "id": self.workflow_id, "step": self.step_no, "tray": self.tray_code,
            "source": self.source, "target": self.target}


@dataclass
class Aisle:
    name: str
    levels: list[str]  # highest first: drawn top to bottom
    positions: list[str]  # lowest first: drawn left to right
    spaces: list[tuple[Place, Space]]
    arrows: list[PausedStep] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    @property
    def slug(self) -> str:
        return "aisle-" + re.sub(r"[^A-Za-z0-9_-]", "_", self.name)


@dataclass
class RackMap:
    aisles: list[Aisle]  # the ones shown (aisle and state filters applied)
    aisle_names: list[str]  # every aisle on the map, for the filter
    unmatched: list[Space]  # codes SPACE_CODE_PATTERN does not split, never dropped
    crossing: list[tuple[PausedStep, str]]  # paused steps not drawn as an arrow, and why
    counts: Counter  # per state, over every space
    total: int
    state: str = ""
    aisle: str = ""

    @property
    def shown_spaces(self) -> int:
        return sum(len(a.spaces) for a in self.aisles)


def _fetch(sql: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _count(counts: Counter, space: Space) -> None:
    counts["total"] += 1
    if space.tray is not None:
        counts["occupied"] += 1
    lock = space.lock
    if lock:
        counts[lock] += 1
        if lock == "stalled":
            counts["active"] += 1
    elif space.tray is None:
        counts["free"] += 1


def _prefix_query(aisles: list[str]) -> tuple[str, dict]:
    """Only the spaces of these aisles when the pattern puts the aisle first (the workflow page's
    small map); otherwise every space (the pattern alone decides what an aisle is)."""
    if aisles and settings.SPACE_CODE_PATTERN.startswith("^(?P<aisle>"):
        likes = [re.sub(r"([\\%_])", r"\\\1", a) + "%" for a in aisles]
        return rack_map_sql.RACK_MAP_SPACES.format(where=rack_map_sql.WHERE_PREFIXES), {"likes": likes}
    return rack_map_sql.RACK_MAP_SPACES.format(where=""), {}


def rack_map(*, aisle: str = "", state: str = "", only_aisles: list[str] | None = None,
             arrows: bool = True) -> RackMap:
    """The map: every space parsed into its aisle, paused steps as arrows within an aisle.

    `aisle` keeps one aisle; `state` keeps the aisles that have a space in that state (the others
    are dimmed when drawn); `only_aisles` reads just those aisles (the workflow page)."""
    pattern = settings.SPACE_CODE_PATTERN
    sql, params = _prefix_query(only_aisles or [])
    params["stalled_after_minutes"] = settings.STALLED_AFTER_MINUTES
    rows = _fetch(sql, params)
    by_aisle: dict[str, list[tuple[Place, Space]]] = {}
    unmatched: list[Space] = []
    counts: Counter = Counter()
    places: dict[str, Place] = {}
    for row in rows:
        space = Space(*row)
        _count(counts, space)
        place = parse_code(space.code, pattern)
        if place is None:
            if only_aisles is None:
                unmatched.append(space)
            continue
        places[space.code] = place
        by_aisle.setdefault(place.aisle, []).append((place, space))
    if only_aisles is not None:
        by_aisle = {name: spaces for name, spaces in by_aisle.items() if name in only_aisles}
    unmatched.sort(key=lambda s: natural_key(s.code))
    names = sorted(by_aisle, key=natural_key)

    wanted = [aisle] if aisle else names
    aisles = []
    for name in wanted:
        spaces = by_aisle.get(name)
        if not spaces:
            continue
        a = Aisle(name=name,
                  levels=sorted({p.level for p, _ in spaces}, key=natural_key, reverse=True),
                  positions=sorted({p.position for p, _ in spaces}, key=natural_key),
                  spaces=spaces)
        for _, space in spaces:
            _count(a.counts, space)
        if state and not a.counts[state]:
            continue
        aisles.append(a)

    crossing = []
    shown = {a.name: a for a in aisles}
    paused_steps = _fetch(rack_map_sql.RACK_MAP_PAUSED_STEPS, {}) if arrows else []
    for step in (PausedStep(*row) for row in paused_steps):
        src, dst = places.get(step.source), places.get(step.target)
        if src is None or dst is None:
            if only_aisles is None or (src or dst) is not None:
                crossing.append((step, gettext("a space code is not on the map")))
        elif src.aisle != dst.aisle:
            if src.aisle in shown or dst.aisle in shown:
                crossing.append((step, gettext("across aisles: %(a)s to %(b)s") % {"a": src.aisle, "b": dst.aisle}))
        elif src.aisle in shown:
            shown[src.aisle].arrows.append(step)
    return RackMap(aisles=aisles, aisle_names=names, unmatched=unmatched, crossing=crossing,
                   counts=counts, total=len(rows), state=state, aisle=aisle)


# --- drawing -----------------------------------------------------------------------------------


def workflow_href(workflow_id: int) -> str:
    return reverse("workflow-detail", args=[workflow_id])


def render_aisle(aisle: Aisle, *, state: str = "", highlight: dict[str, str] | None = None,
                 scale: float = 1.0, links: bool = True) -> SafeString:
    """One aisle as an SVG string: levels as rows (highest on top), positions as columns.

    Spaces without tray or lock are a bare <rect> (their row's <title> names aisle and level);
    the others carry their label, and the locked ones are links to the holding workflow.
    `highlight` maps a space code to an extra class (the workflow page's source and target)."""
    highlight = highlight or {}
    col = {p: i for i, p in enumerate(aisle.positions)}
    row = {lv: i for i, lv in enumerate(aisle.levels)}
    left = 8 + CHAR * max(len(lv) for lv in aisle.levels)
    width = left + PITCH * len(aisle.positions) + 4
    height = TOP + PITCH * len(aisle.levels) + 4
    href = workflow_href(0)[:-2]  # "/workflows/" (the id and slash are appended per space)
    level_word = gettext("level")
    name = escape(aisle.name)

    rows: list[list[str]] = [[] for _ in aisle.levels]
    for place, space in aisle.spaces:
        x = col[place.position] * PITCH
        css = space.css
        if state and not space.has_state(state):
            css = f"{css} d" if css else "d"
        extra = highlight.get(space.code)
        if extra:
            css = f"{css} {extra}" if css else extra
        cls = f' class="{css}"' if css else ""
        out = rows[row[place.level]]
        if space.holder is not None and links:
            label = escape(space.describe())
            out.append(f'<a href="{href}{space.holder}/" aria-label="{label}"><title>{label}</title>'
                       f'<rect x="{x}"{cls}/></a>')
        elif space.tray is not None or space.holder is not None or extra:
            out.append(f'<rect x="{x}"{cls}><title>{escape(space.describe())}</title></rect>')
        else:
            out.append(f'<rect x="{x}"{cls}/>')

    parts = [f'<svg class="rk" viewBox="0 0 {width} {height}" width="{round(width * scale)}" '
             f'height="{round(height * scale)}" aria-label="{name}">', '<g class="ax">']
    step = 1 if max(len(p) for p in aisle.positions) <= 2 else 5
    for i, pos in enumerate(aisle.positions):
        if i % step == 0:
            parts.append(f'<text x="{left + i * PITCH + CELL // 2}" y="11">{escape(pos)}</text>')
    for i, lv in enumerate(aisle.levels):
        parts.append(f'<text class="lv" x="{left - 5}" y="{TOP + i * PITCH + CELL - 2}">{escape(lv)}</text>')
    parts.append(f'</g><g transform="translate({left} {TOP})">')
    for i, lv in enumerate(aisle.levels):
        parts.append(f'<g transform="translate(0 {i * PITCH})"><title>{name} {level_word} {escape(lv)}</title>')
        parts.extend(rows[i])
        parts.append("</g>")
    places = {s.code: p for p, s in aisle.spaces}
    half = CELL / 2
    for step_ in aisle.arrows:
        a, b = places[step_.source], places[step_.target]
        x1, y1 = col[a.position] * PITCH + half, row[a.level] * PITCH + half
        x2, y2 = col[b.position] * PITCH + half, row[b.level] * PITCH + half
        parts.append(f'<path class="ar" d="M{x1:g} {y1:g}L{x2:g} {y2:g}" marker-end="url(#rk-ah)">'
                     f'<title>{escape(step_.describe())}</title></path>')
    parts.append("</g></svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every database value above went through escape()


def render_table(rack: RackMap) -> SafeString:
    """The same spaces as table rows (the accessible text alternative), aisle by aisle."""
    def rows():
        for a in rack.aisles:
            for place, space in sorted(a.spaces, key=lambda ps: (natural_key(ps[0].level),
                                                                 natural_key(ps[0].position))):
                if rack.state and not space.has_state(rack.state):
                    continue
                yield (space.code, place.aisle, place.level, place.position, _state_text(space),
                       space.tray or "", _holder_cell(space))
        if not rack.aisle:  # codes the pattern cannot split belong to no aisle
            for space in rack.unmatched:
                if rack.state and not space.has_state(rack.state):
                    continue
                yield (space.code, "—", "—", "—", _state_text(space), space.tray or "", _holder_cell(space))
    return format_html_join(
        "\n", '<tr><th scope="row"><code>{}</code></th><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
        '<td><code>{}</code></td><td>{}</td></tr>', rows())


def _state_text(space: Space) -> str:
    parts = []
    lock = space.lock
    if lock:
        parts.append(str(STATES[lock]))
    parts.append(str(STATES["occupied"]) if space.tray is not None else gettext("no tray"))
    return "; ".join(parts)


def _holder_cell(space: Space) -> SafeString:
    if space.holder is None:
        return mark_safe("")
    return format_html('<a href="{}">#{}</a>', workflow_href(space.holder), space.holder)


def workflow_map(*, workflow_id: int, steps: list) -> list[tuple[Aisle, SafeString]]:
    """The small map of the workflow page: the aisle(s) of its current step (the first one not
    completed or cancelled, else the last), source and target highlighted, its move as an arrow."""
    if not steps:
        return []
    current = next((s for s in steps if s.status not in ("COMPLETED", "CANCELLED")), steps[-1])
    source, target = current.cargo_space_id, current.target_cargo_space_id
    ends = [parse_code(source, settings.SPACE_CODE_PATTERN), parse_code(target, settings.SPACE_CODE_PATTERN)]
    names = list(dict.fromkeys(p.aisle for p in ends if p is not None))
    if not names:
        return []
    rack = rack_map(only_aisles=names, arrows=False)
    move = PausedStep(workflow_id, current.step_no, current.tray_code, source, target)
    out = []
    for aisle in rack.aisles:
        on_map = {s.code for _, s in aisle.spaces}
        aisle.arrows = [move] if source in on_map and target in on_map and source != target else []
        out.append((aisle, render_aisle(aisle, highlight={source: "hs", target: "ht"}, scale=0.75)))
    return out
