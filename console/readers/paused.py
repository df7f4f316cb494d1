"""The paused list's read: one keyset page of PAUSED_RECOVERY workflows with its facet counts.
Shared by the paused list page and the batch re-check, which selects exactly what the list shows."""



from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from console.input_checks import is_ascii_int
from console.readers import PAGE_SIZE, Cursor, fetch_dicts, fetch_rows, keyset_window
from console.readers import sql as readers_sql
from console.readers.places import aisle_of
from recovery.engine.decisions import PAUSE_REASONS
from recovery.models import (
    TidyWorkflow,
)

PAUSED = TidyWorkflow.Status.PAUSED_RECOVERY
ACTIVE = TidyWorkflow.Status.ACTIVE
TIDY_MOVE = 28


# --- paused workflows list (keyset pagination, facets) ---------------------------------------

# (key, label, lower bound, upper bound) of the time since a workflow paused.
AGE_BUCKETS: tuple[tuple[str, str, timedelta | None, timedelta | None], ...] = (
    ("lt1h", "under 1 hour", None, timedelta(hours=1)),
    ("1h-8h", "1 to 8 hours", timedelta(hours=1), timedelta(hours=8)),
    ("8h-24h", "8 to 24 hours", timedelta(hours=8), timedelta(hours=24)),
    ("gt24h", "over 24 hours", timedelta(hours=24), None),
)
AGE_LABELS = {key: label for key, label, _, _ in AGE_BUCKETS}
SORTS = {"oldest": "oldest first", "newest": "newest first"}


@dataclass(frozen=True)
class PausedFilters:
    reason: str = ""
    origin: str = ""
    age: str = ""
    q: str = ""
    sort: str = "oldest"
    aisle: str = ""  # of the current step's source, by SPACE_CODE_PATTERN ("other": codes it does not split)
    after: Cursor | None = None
    before: Cursor | None = None

    def params(self, **changes) -> dict[str, str]:
        """Query parameters of these filters (without the position), with `changes` applied."""
        values = {"reason": self.reason, "origin": self.origin, "age": self.age, "q": self.q,
                  "aisle": self.aisle, "sort": self.sort if self.sort != "oldest" else ""}
        values.update(changes)
        return {k: v for k, v in values.items() if v}

    @property
    def active(self) -> bool:
        return bool(self.reason or self.origin or self.age or self.q or self.aisle)


@dataclass(frozen=True)
class PausedRow:
    workflow_id: int
    origin: str
    pause_reason: str | None
    paused_since: datetime
    created_at: datetime
    lock_count: int
    step_no: int | None
    tray_code: str | None
    cargo_space_id: str | None
    target_cargo_space_id: str | None

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.paused_since, self.workflow_id)


@dataclass(frozen=True)
class FacetValue:
    value: str
    label: str
    count: int
    selected: bool


@dataclass
class PausedPage:
    filters: PausedFilters
    rows: list[PausedRow]
    total_matching: int  # workflows matching every filter (all pages)
    total_paused: int | None  # all paused workflows (None while searching)
    facets: dict[str, list[FacetValue]] = field(default_factory=dict)
    next_cursor: Cursor | None = None
    prev_cursor: Cursor | None = None


def _age_bounds(key: str, now: datetime) -> tuple[datetime | None, datetime | None]:
    """(paused after, paused before) for an age bucket: updated_at in (after, before]."""
    for bucket, _, low, high in AGE_BUCKETS:
        if bucket == key:
            return (now - high if high is not None else None, now - low if low is not None else None)
    return None, None


def _search_params(q: str) -> dict:
    return {"q": q, "q_id": int(q) if is_ascii_int(q) else None}


def aisle_spaces(aisle: str) -> list[str]:
    """The current-step sources of paused workflows that are in `aisle` (SPACE_CODE_PATTERN is a
    Python expression, so the codes are split here and handed to SQL as a list)."""
    return [r["source"] for r in fetch_dicts(readers_sql.PAUSED_SOURCES, {})
            if r["source"] is not None and aisle_of(r["source"]) == aisle]


def _facet_groups(q: str, now: datetime, aisle: list[str] | None = None) -> list[dict]:
    """Counts per (reason, origin, age bucket) of the paused workflows matching the search (and
    in the aisle whose sources `aisle` lists)."""
    params = {"h1": now - timedelta(hours=1), "h8": now - timedelta(hours=8), "h24": now - timedelta(hours=24)}
    where = ""
    if q:
        where = readers_sql.WHERE_SEARCH
        params.update(_search_params(q))
    if aisle is not None:
        where += "\n" + readers_sql.WHERE_AISLE
        params["aisle_spaces"] = aisle
    groups = []
    for reason, origin, n, after_h1, after_h8, after_h24 in fetch_rows(readers_sql.PAUSED_FACETS.format(where=where),
                                                                          params):
        per_age = zip((key for key, _, _, _ in AGE_BUCKETS),
                      (after_h1, after_h8 - after_h1, after_h24 - after_h8, n - after_h24), strict=True)
        groups += [{"reason": reason or "", "origin": origin, "age": key, "n": k} for key, k in per_age if k]
    return groups


def paused_workflows_page(*, filters: PausedFilters, page_size: int = PAGE_SIZE) -> PausedPage:
    """One page of paused workflows, the facet counts and the keyset positions: two queries."""
    now = timezone.now()
    # Facet counts: one grouped query for the searched set; each facet's counts honour the
    # other facets' selections (and not its own).
    in_aisle = aisle_spaces(filters.aisle) if filters.aisle else None
    groups = _facet_groups(filters.q, now, in_aisle)
    selected = {"reason": filters.reason, "origin": filters.origin, "age": filters.age}

    def count(facet: str, value: str) -> int:
        return sum(g["n"] for g in groups if g[facet] == value
                   and all(not sel or g[other] == sel for other, sel in selected.items() if other != facet))

    known = [r.value for r in PAUSE_REASONS]
    reasons = known + sorted({g["reason"] for g in groups} - set(known))
    facets = {
        "reason": [FacetValue(r, r, count("reason", r), r == filters.reason) for r in reasons],
        "origin": [FacetValue(o, o.title(), count("origin", o), o == filters.origin)
                   for o in sorted({"AUTOMATIC", "MANUAL"} | {g["origin"] for g in groups})],
        "age": [FacetValue(k, label, count("age", k), k == filters.age) for k, label, _, _ in AGE_BUCKETS],
    }
    total_matching = sum(g["n"] for g in groups if all(not sel or g[f] == sel for f, sel in selected.items()))

    where, params = [], {"limit": page_size + 1}
    if filters.q:
        where.append(readers_sql.WHERE_SEARCH)
        params.update(_search_params(filters.q))
    if in_aisle is not None:
        where.append(readers_sql.WHERE_AISLE)
        params["aisle_spaces"] = in_aisle
    if filters.reason:
        where.append(readers_sql.WHERE_REASON)
        params["reason"] = filters.reason
    if filters.origin:
        where.append(readers_sql.WHERE_ORIGIN)
        params["origin"] = filters.origin
    if filters.age:
        after, before = _age_bounds(filters.age, now)
        if after is not None:
            where.append(readers_sql.WHERE_PAUSED_AFTER)
            params["paused_after"] = after
        if before is not None:
            where.append(readers_sql.WHERE_PAUSED_BEFORE)
            params["paused_before"] = before

    window = keyset_window(page_sql=readers_sql.PAUSED_PAGE, where=where, params=params, after=filters.after,
                           before=filters.before, newest=filters.sort == "newest", page_size=page_size,
                           after_sql=readers_sql.WHERE_AFTER_CURSOR, before_sql=readers_sql.WHERE_BEFORE_CURSOR)
    rows = [PausedRow(r["workflow_id"], r["origin"], r["pause_reason"], r["updated_at"], r["created_at"],
                      r["lock_count"], r["step_no"], r["tray_code"], r["cargo_space_id"], r["target_cargo_space_id"])
            for r in window.rows]
    page = PausedPage(filters=filters, rows=rows, total_matching=total_matching,
                      total_paused=None if filters.q or filters.aisle else sum(g["n"] for g in groups),
                      facets=facets)
    page.prev_cursor, page.next_cursor = window.cursors(rows)
    return page
