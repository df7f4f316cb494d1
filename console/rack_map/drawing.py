"""The rack map: cargo spaces as a grid per aisle (docs/user-guide.md, "Rack map").

Space codes are split by SPACE_CODE_PATTERN into aisle, level and position; codes that do not
match are kept in `RackMap.unmatched` and listed beside the map, never dropped. The whole map
comes from two set-based statements (console/rack_map/sql.py); one aisle reads only its own
spaces, found through a code index that is read again only when the set of codes changes. The
SVG is built here as one string per aisle, not by a template loop per space, so 20,000 spaces
render in tens of milliseconds. Every value from the database is escaped before it enters the
markup.
"""

import html
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple

from django.conf import settings
from django.urls import get_script_prefix, reverse
from django.utils import timezone, translation
from django.utils.formats import number_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_lazy

from console.cordons.selectors import cordons_in_force
from console.rack_map import sql as map_sql
from console.readers.stalled import stalled_before
from console.replica import read_connection

# Filter values, in legend order. "active" includes the stalled ones (they are active too).
STATES = {
    "paused": gettext_lazy("Locked by a paused workflow"),
    "active": gettext_lazy("Locked by an active workflow"),
    "stalled": gettext_lazy("Locked by a stalled workflow"),
    "other": gettext_lazy("Locked by a finished or cancelled workflow"),
    "occupied": gettext_lazy("Holds a tray"),
    "free": gettext_lazy("Free (no tray, no lock)"),
}

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


# Parsed codes per pattern: codes change rarely, so most requests only look them up.
_PARSED: dict[str, dict[str, Place | None]] = {}
_PARSED_LIMIT = 500_000


def parse_code(code: str, pattern: str | None = None) -> Place | None:
    """Aisle, level and position of a space code, or None when it does not match the pattern."""
    pattern = pattern or settings.SPACE_CODE_PATTERN
    cache = _PARSED.setdefault(pattern, {})
    try:
        return cache[code]
    except KeyError:
        pass
    if len(cache) > _PARSED_LIMIT:
        cache.clear()
    m = _compiled(pattern).search(code)
    place = None if m is None else Place(m.group("aisle"), m.group("level"), m.group("position"))
    cache[code] = place
    return place


@lru_cache(maxsize=65536)
def natural_key(text: str) -> tuple:
    """A02 before A10, level 9 before level 10."""
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text) if p)
    return parts, text


# --- the data ----------------------------------------------------------------------------------


class Space(NamedTuple):
    """One row of RACK_MAP_SPACES. Kept a plain tuple: 20,000 of them are read per request."""

    code: str
    tray: str | None
    holder: int | None
    css: str  # its classes on the map: a LOCK_CLASS value if locked, then "o" if it holds a tray
    holder_status: str | None
    known: bool  # False: only a lock names it, bas_cargo_space does not list it

    @property
    def lock(self) -> str:
        return _lock(self.css)

    def has_state(self, state: str) -> bool:
        return _HAS_STATE[state](self.css)

    def describe(self) -> str:
        """The text label of the space: code, tray and holder (unescaped)."""
        return Labels(escaped=False).of(self)


# Short CSS classes keep 20,000 rects small (static/console/rack-map.css draws them).
LOCK_CLASS = {"paused": "p", "active": "a", "stalled": "s", "other": "x"}
LOCK_STATE = {v: k for k, v in LOCK_CLASS.items()}
_HAS_STATE = {  # by the space's css
    "paused": lambda css: css[:1] == "p",
    "active": lambda css: css[:1] in ("a", "s") and css != "",
    "stalled": lambda css: css[:1] == "s",
    "other": lambda css: css[:1] == "x",
    "occupied": lambda css: css[-1:] == "o",
    "free": lambda css: css == "",
}


def _lock(css: str) -> str:
    return css[:1] if css[:1] in LOCK_STATE else ""


class Labels:
    """The translated pieces of a space's label, looked up once per page, not once per space.
    With `escaped`, every piece and value is HTML-escaped (html.escape, which Django's escape()
    wraps; called directly here because it runs for thousands of spaces)."""

    def __init__(self, *, escaped: bool = True):
        e = html.escape if escaped else str
        self.e = e
        self.tray = e(gettext("tray %(tray)s"))
        self.no_tray = e(gettext("no tray"))
        self.unknown = e(gettext("not in bas_cargo_space"))
        self.cordoned = e(gettext("cordoned (#%(id)s): no new tidy work"))
        self.lock = {
            "": e(gettext("not locked")),
            "p": e(gettext("locked by paused workflow #%(id)s")),
            "a": e(gettext("locked by active workflow #%(id)s")),
            "s": e(gettext("locked by stalled workflow #%(id)s")),
            "x": e(gettext("locked by workflow #%(id)s (%(status)s)")),
        }

    def of(self, space: tuple, code: str | None = None, tray: str | None = None) -> str:
        """The label of a RACK_MAP_SPACES row; `code` and `tray` may come already escaped."""
        e = self.e
        code = code if code is not None else e(space[0])
        tray = (tray if tray is not None else e(space[1])) if space[1] is not None else None
        lock = _lock(space[3])
        holder = self.lock[lock] % ({"id": space[2], "status": e(space[4] or "?")} if lock == "x" else {"id": space[2]})
        label = f"{code} · {self.tray % {'tray': tray} if tray is not None else self.no_tray} · {holder}"
        return label if space[5] else f"{label} · {self.unknown}"


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
    spaces: list[tuple[Place, tuple]]  # (place, a RACK_MAP_SPACES row)
    arrows: list[PausedStep] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    # The cordon in force on each cordoned space (its own or its aisle's), and the aisle's own.
    cordoned: dict[str, int] = field(default_factory=dict)
    aisle_cordon: int | None = None

    @property
    def slug(self) -> str:
        return "aisle-" + re.sub(r"[^A-Za-z0-9_-]", "_", self.name)

    # The heading and its counts are made here rather than with {% blocktranslate %}: a whole map
    # has 50 aisles, and the template tag with five localized numbers cost more than drawing one.
    @property
    def heading(self) -> str:
        return gettext("Aisle %(name)s") % {"name": self.name}

    @property
    def cordon_note(self) -> str:
        if self.aisle_cordon is None:
            return ""
        return gettext("Aisle cordoned (#%(id)s): no new tidy work") % {"id": self.aisle_cordon}

    @property
    def summary(self) -> str:
        c = self.counts
        return gettext("%(n)s spaces · %(o)s with a tray · %(p)s paused · %(a)s active · %(s)s stalled") % {
            "n": _number(c["total"]), "o": _number(c["occupied"]), "p": _number(c["paused"]),
            "a": _number(c["active"]), "s": _number(c["stalled"])}


def _number(n: int) -> str:
    """n in the language's grouped number format; below 1,000 that is its digits in every
    language the console speaks, without the format lookup."""
    return str(n) if -1000 < n < 1000 else number_format(n, use_l10n=True, force_grouping=True)


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
    cordons: list = field(default_factory=list)  # console.cordons.selectors.CordonRow, in force


def _fetch(sql: str, params: dict) -> list[tuple]:
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _counts(per_css: dict[str, int]) -> Counter:
    """Counts per state from counts per css (at most ten distinct values)."""
    counts = Counter()
    for css, n in per_css.items():
        counts["total"] += n
        for state, test in _HAS_STATE.items():
            if test(css):
                counts[state] += n
    return counts


def _escape_all(values: list[str]) -> list[str]:
    """html.escape of each value in one call: PostgreSQL text never holds NUL, so it separates."""
    return html.escape("\0".join(values)).split("\0") if values else []


@dataclass(frozen=True)
class CodeIndex:
    """Which codes each aisle has, read again only when the set of codes changes."""

    fingerprint: tuple
    names: list[str]  # naturally sorted
    codes: dict[str, list[str]]  # per aisle
    unmatched: list[str]
    on_map: frozenset[str]  # every code an aisle takes


_INDEX: dict[str, CodeIndex] = {}


def code_index(pattern: str) -> CodeIndex:
    """The aisles of every code on the map. One small aggregate per call; the codes themselves are
    read and parsed only after a code was added, removed or renamed."""
    (fingerprint,) = _fetch(map_sql.RACK_MAP_CODES_FINGERPRINT, {})
    index = _INDEX.get(pattern)
    if index is not None and index.fingerprint == fingerprint:
        return index
    codes: dict[str, list[str]] = {}
    unmatched = []
    for (code,) in _fetch(map_sql.RACK_MAP_CODES, {}):
        place = parse_code(code, pattern)
        if place is None:
            unmatched.append(code)
        else:
            codes.setdefault(place.aisle, []).append(code)
    index = CodeIndex(fingerprint, sorted(codes, key=natural_key), codes, unmatched,
                      frozenset(c for aisle_codes in codes.values() for c in aisle_codes))
    _INDEX[pattern] = index
    return index


def _spaces_query(*, aisle: str, only_aisles: list[str] | None, pattern: str) -> tuple[str, dict, CodeIndex | None]:
    """The statement reading the spaces needed: every one for the whole map; one aisle's (and the
    unmatched codes) through the code index; for the workflow page, its aisles by prefix when the
    pattern puts the aisle first (no index needed), else through the code index too."""
    sql = map_sql.RACK_MAP_SPACES
    if aisle:
        index = code_index(pattern)
        codes = index.codes.get(aisle, []) + index.unmatched
        return (sql.format(spaces=map_sql.RACK_MAP_OF_CODES_SPACES, locks=map_sql.RACK_MAP_OF_CODES_LOCKS),
                {"codes": codes}, index)
    if only_aisles and pattern.startswith("^(?P<aisle>"):
        likes = [re.sub(r"([\\%_])", r"\\\1", a) + "%" for a in only_aisles]
        return (sql.format(spaces=map_sql.RACK_MAP_OF_PREFIXES_SPACES,
                           locks=map_sql.RACK_MAP_OF_PREFIXES_LOCKS),
                {"likes": likes}, None)
    if only_aisles:
        index = code_index(pattern)
        codes = [c for a in only_aisles for c in index.codes.get(a, [])]
        return (sql.format(spaces=map_sql.RACK_MAP_OF_CODES_SPACES, locks=map_sql.RACK_MAP_OF_CODES_LOCKS),
                {"codes": codes}, index)
    return sql.format(spaces=map_sql.RACK_MAP_ALL_SPACES, locks=map_sql.RACK_MAP_ALL_LOCKS), {}, None


def rack_map(*, aisle: str = "", state: str = "", only_aisles: list[str] | None = None,
             arrows: bool = True) -> RackMap:
    """The map: every space parsed into its aisle, paused steps as arrows within an aisle.

    `aisle` keeps one aisle; `state` keeps the aisles that have a space in that state (the others
    are dimmed when drawn); `only_aisles` reads just those aisles (the workflow page)."""
    pattern = settings.SPACE_CODE_PATTERN
    sql, params, index = _spaces_query(aisle=aisle, only_aisles=only_aisles, pattern=pattern)
    params["stalled_before"] = stalled_before()  # the floor pages' cut-off, to the instant
    rows = _fetch(sql, params)
    by_aisle: dict[str, list[tuple[Place, tuple]]] = {}
    per_css: dict[str, dict[str, int]] = {}
    unmatched: list[Space] = []
    places: dict[str, Place] = {}
    cache = _PARSED.setdefault(pattern, {})
    for row in rows:
        code = row[0]
        place = cache.get(code, False)
        if place is False:
            place = parse_code(code, pattern)
        if place is None:
            if only_aisles is None:
                unmatched.append(Space._make(row))
            continue
        places[code] = place
        spaces = by_aisle.get(place.aisle)
        if spaces is None:
            spaces = by_aisle[place.aisle] = []
            per_css[place.aisle] = {}
        spaces.append((place, row))
        css_counts = per_css[place.aisle]
        css_counts[row[3]] = css_counts.get(row[3], 0) + 1
    if only_aisles is not None:
        by_aisle = {name: spaces for name, spaces in by_aisle.items() if name in only_aisles}
    unmatched.sort(key=lambda s: natural_key(s.code))
    names = index.names if index is not None else sorted(by_aisle, key=natural_key)
    counts = _counts(Counter(map(itemgetter(3), rows)))  # of the spaces read

    cordons = cordons_in_force(now=timezone.now())
    aisle_cordons = {c.place: c.cordon_id for c in cordons if c.is_aisle}
    space_cordons = {c.place: c.cordon_id for c in cordons if not c.is_aisle}
    aisles = []
    for name in [aisle] if aisle else names:
        spaces = by_aisle.get(name)
        if not spaces:
            continue
        a = Aisle(name=name,
                  levels=sorted({p.level for p, _ in spaces}, key=natural_key, reverse=True),
                  positions=sorted({p.position for p, _ in spaces}, key=natural_key),
                  spaces=spaces,
                  counts=_counts(per_css[name]))
        if state and not a.counts[state]:
            continue
        a.aisle_cordon = aisle_cordons.get(name)
        if a.aisle_cordon is not None or space_cordons:
            a.cordoned = {s[0]: space_cordons.get(s[0], a.aisle_cordon) for _, s in spaces
                          if a.aisle_cordon is not None or s[0] in space_cordons}
        aisles.append(a)

    crossing = []
    shown = {a.name: a for a in aisles}
    paused_steps = _fetch(map_sql.RACK_MAP_PAUSED_STEPS, {}) if arrows else []
    if index is not None:  # one aisle read: the others' codes are known from the index
        places = {c: parse_code(c, pattern) for s in paused_steps for c in (s[3], s[4]) if c in index.on_map}
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
                   counts=counts, total=len(rows), state=state, aisle=aisle, cordons=cordons)


# --- drawing -----------------------------------------------------------------------------------


def workflow_href(workflow_id: int) -> str:
    return reverse("workflow-detail", args=[workflow_id])


# Drawn aisles, by everything the drawing depends on (see render_aisle). A whole map draws 50
# aisles of 400 spaces, and between two refreshes most aisles have not changed: their rows are
# equal, so their SVG is too. Bounded: every aisle in each state filter and language fits.
_DRAWN_LIMIT = 1024
_drawn: OrderedDict[tuple, SafeString] = OrderedDict()
_drawn_lock = threading.Lock()


def render_aisle(aisle: Aisle, *, state: str = "", highlight: dict[str, str] | None = None,
                 scale: float = 1.0, links: bool = True) -> SafeString:
    """One aisle as an SVG string (see draw_aisle), from the drawn-aisle cache when the same rows
    were drawn the same way before. The key holds the rows themselves (tuples of the space's
    code, tray, holder, classes, holder status, known), the arrows, the options, the language,
    the URL prefix of the links and the code pattern (which places each code), so a changed
    space is a different key."""
    key = (settings.SPACE_CODE_PATTERN, translation.get_language(), get_script_prefix(), aisle.name, state, scale,
           links,
           tuple(sorted(highlight.items())) if highlight else (),
           tuple(map(itemgetter(1), aisle.spaces)), tuple(aisle.arrows), tuple(sorted(aisle.cordoned.items())))
    with _drawn_lock:
        svg = _drawn.get(key)
        if svg is not None:
            _drawn.move_to_end(key)
            return svg
    svg = draw_aisle(aisle, state=state, highlight=highlight, scale=scale, links=links)
    with _drawn_lock:
        _drawn[key] = svg
        while len(_drawn) > _DRAWN_LIMIT:
            _drawn.popitem(last=False)
    return svg


def draw_aisle(aisle: Aisle, *, state: str = "", highlight: dict[str, str] | None = None,
               scale: float = 1.0, links: bool = True) -> SafeString:
    """One aisle as an SVG string: levels as rows (highest on top), positions as columns.

    Spaces without tray or lock are a bare <rect> (their row's <title> names aisle and level);
    the others carry their label, and the locked ones are links to the holding workflow.
    `highlight` maps a space code to an extra class (the workflow page's source and target)."""
    highlight = highlight or {}
    esc = html.escape
    labels = Labels()
    col = {p: i for i, p in enumerate(aisle.positions)}
    row_of = {lv: i for i, lv in enumerate(aisle.levels)}
    xs = {p: str(i * PITCH) for p, i in col.items()}
    left = 8 + CHAR * max(len(lv) for lv in aisle.levels)
    width = left + PITCH * len(aisle.positions) + 4
    height = TOP + PITCH * len(aisle.levels) + 4
    href = workflow_href(0)[:-2]  # "/workflows/" (the id and slash are appended per space)
    dim = _HAS_STATE[state] if state else None
    name = esc(aisle.name)

    cordoned = aisle.cordoned
    labelled = [space for _, space in aisle.spaces if space[3] or space[0] in highlight or space[0] in cordoned]
    codes = dict(zip((s[0] for s in labelled), _escape_all([s[0] for s in labelled]), strict=True))
    trays = [s[1] for s in labelled if s[1] is not None]
    trays = dict(zip(trays, _escape_all(trays), strict=True))
    before, _, after = labels.tray.partition("%(tray)s")
    tray_head, tray_tail = f" · {before}", f"{after} · {labels.lock['']}"
    rows: list[list[str]] = [[] for _ in aisle.levels]
    for place, space in aisle.spaces:
        code, tray, holder, css, _status, known = space
        if dim is not None and not dim(css):
            css = f"{css} d" if css else "d"
        extra = highlight.get(code) if highlight else None
        if extra:
            css = f"{css} {extra}" if css else extra
        cordon = cordoned.get(code) if cordoned else None
        if cordon is not None:
            css = f"{css} cd" if css else "cd"
        x = xs[place.position]
        out = rows[row_of[place.level]]
        if cordon is not None:
            label = f"{labels.of(space, codes[code], trays.get(tray))} · {labels.cordoned % {'id': cordon}}"
            if holder is not None and links:
                out.append(f'<a href="{href}{holder}/" aria-label="{label}"><title>{label}</title>'
                           f'<rect x="{x}" class="{css}"/></a>')
            else:
                out.append(f'<rect x="{x}" class="{css}" role="img" aria-label="{label}"><title>{label}</title></rect>')
        elif holder is not None and links:
            label = labels.of(space, codes[code], trays.get(tray))
            out.append(f'<a href="{href}{holder}/" aria-label="{label}"><title>{label}</title>'
                       f'<rect x="{x}" class="{css}"/></a>')
        elif tray is not None and holder is None and known:  # most spaces with a label: a tray, no lock
            out.append(f'<rect x="{x}" class="{css}"><title>{codes[code]}{tray_head}{trays[tray]}{tray_tail}'
                       '</title></rect>')
        elif tray is not None or holder is not None or extra:
            out.append(f'<rect x="{x}" class="{css}"><title>{labels.of(space, codes[code], trays.get(tray))}'
                       '</title></rect>')
        elif css:
            out.append(f'<rect x="{x}" class="{css}"/>')
        else:
            out.append(f'<rect x="{x}"/>')

    parts = [f'<svg class="rk" viewBox="0 0 {width} {height}" width="{round(width * scale)}" '
             f'height="{round(height * scale)}" role="group" aria-label="{name}">', '<g class="ax" aria-hidden="true">']
    step = 1 if max(len(p) for p in aisle.positions) <= 2 else 5
    for i, pos in enumerate(aisle.positions):
        if i % step == 0:
            parts.append(f'<text x="{left + i * PITCH + CELL // 2}" y="11">{esc(pos)}</text>')
    for i, lv in enumerate(aisle.levels):
        parts.append(f'<text class="lv" x="{left - 5}" y="{TOP + i * PITCH + CELL - 2}">{esc(lv)}</text>')
    parts.append(f'</g><g transform="translate({left} {TOP})">')
    level_word = esc(gettext("level"))
    for i, lv in enumerate(aisle.levels):
        parts.append(f'<g transform="translate(0 {i * PITCH})"><title>{name} {level_word} {esc(lv)}</title>')
        parts.extend(rows[i])
        parts.append("</g>")
    places = {s[0]: p for p, s in aisle.spaces}
    half = CELL / 2
    for move in aisle.arrows:
        a, b = places[move.source], places[move.target]
        x1, y1 = col[a.position] * PITCH + half, row_of[a.level] * PITCH + half
        x2, y2 = col[b.position] * PITCH + half, row_of[b.level] * PITCH + half
        parts.append(f'<path class="ar" d="M{x1:g} {y1:g}L{x2:g} {y2:g}" marker-end="url(#rk-ah)">'
                     f'<title>{esc(move.describe())}</title></path>')
    parts.append("</g></svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every database value above went through html.escape


def render_table(rack: RackMap) -> SafeString:
    """The same spaces as table rows (the accessible text alternative), aisle by aisle."""
    test = _HAS_STATE[rack.state] if rack.state else None

    def rows():
        for a in rack.aisles:
            level_rank = {lv: i for i, lv in enumerate(a.levels)}
            pos_rank = {p: i for i, p in enumerate(a.positions)}
            for place, space in sorted(a.spaces, key=lambda ps: (level_rank[ps[0].level], pos_rank[ps[0].position])):
                if test is None or test(space[3]):
                    yield (space[0], place.aisle, place.level, place.position,
                           _state_text(space, a.cordoned.get(space[0])),
                           space[1] or "", _holder_cell(space))
        if not rack.aisle:  # codes the pattern cannot split belong to no aisle
            for space in rack.unmatched:
                if test is None or test(space.css):
                    yield (space.code, "—", "—", "—", _state_text(space), space.tray or "", _holder_cell(space))
    return format_html_join(
        "\n", '<tr><th scope="row"><code>{}</code></th><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
        '<td><code>{}</code></td><td>{}</td></tr>', rows())


def _state_text(space: tuple, cordon: int | None = None) -> str:
    parts = []
    if _lock(space[3]):
        parts.append(str(STATES[LOCK_STATE[_lock(space[3])]]))
    parts.append(str(STATES["occupied"]) if space[1] is not None else gettext("no tray"))
    if cordon is not None:
        parts.append(gettext("cordoned (#%(id)s): no new tidy work") % {"id": cordon})
    return "; ".join(parts)


def _holder_cell(space: tuple) -> SafeString:
    if space[2] is None:
        return mark_safe("")
    return format_html('<a href="{}">#{}</a>', workflow_href(space[2]), space[2])


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
        on_map = {s[0] for _, s in aisle.spaces}
        aisle.arrows = [move] if source in on_map and target in on_map and source != target else []
        out.append((aisle, render_aisle(aisle, highlight={source: "hs", target: "ht"})))
    return out
