"""Reads shared by several console features (docs/architecture.md §11): recovery health, flow
health, stalled workflows, shifts, the paused list; and how they run a named statement and read
one keyset page; their named statements, and those of more than one feature, in readers/sql.py.
Features import them downward; they import only the vocabularies (console.runbook,
console.input_checks), the models and recovery."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q, QuerySet

from console.input_checks import is_ascii_int
from console.replica import read_connection


def fetch_rows(sql: str, params: dict) -> list[tuple]:
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def fetch_dicts(sql: str, params: dict) -> list[dict]:
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        columns = [c.name for c in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


# --- keyset pagination ------------------------------------------------------------------------

PAGE_SIZE = 50

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The latest instant a Python datetime holds: a larger position would overflow, not just miss.
MAX_CURSOR_MICROS = (datetime.max.replace(tzinfo=UTC) - EPOCH) // timedelta(microseconds=1)

@dataclass(frozen=True)
class Cursor:
    """A keyset position: the (paused since, workflow id) of a row."""

    paused_since: datetime
    workflow_id: int

    def encode(self) -> str:
        micros = (self.paused_since - EPOCH) // timedelta(microseconds=1)
        return f"{micros}-{self.workflow_id}"

    @classmethod
    def decode(cls, text: str) -> "Cursor":
        """Raises ValueError for anything that is not a cursor this module wrote."""
        micros, _, wid = text.partition("-")
        if not is_ascii_int(micros, maximum=MAX_CURSOR_MICROS) or not is_ascii_int(wid):
            raise ValueError(f"not a list position: {text!r}")
        return cls(EPOCH + timedelta(microseconds=int(micros)), int(wid))


@dataclass(frozen=True)
class KeysetWindow:
    rows: list[dict]  # in display order
    more: bool  # rows exist beyond the window in the direction it walked
    backwards: bool  # a `before` page
    from_cursor: bool  # the window started at a cursor (not at the list's first row)

    def cursors(self, rows: list) -> tuple:
        """(prev, next) cursors of a page built from this window's rows (each has `.cursor`)."""
        if not rows:
            return None, None
        if self.backwards:
            return (rows[0].cursor if self.more else None), rows[-1].cursor
        return (rows[0].cursor if self.from_cursor else None), (rows[-1].cursor if self.more else None)


def keyset_window(*, page_sql: str, where: list[str], params: dict, after, before, newest: bool, page_size: int,
                  after_sql: str, before_sql: str) -> KeysetWindow:
    """One keyset page over (timestamp, workflow id) shared by the paused and active lists.

    `page_sql` has {where} and {direction} slots and a %(limit)s of page_size + 1 (the extra row
    tells whether there is more). Rows go "forward" in display order; a `before` page walks
    backwards and is reversed."""
    backwards = before is not None and after is None
    cursor = before if backwards else after
    descending = newest != backwards
    if cursor is not None:
        where = [*where, before_sql if descending else after_sql]
        params = {**params, "cursor_at": cursor.paused_since, "cursor_id": cursor.workflow_id}
    fetched = fetch_dicts(page_sql.format(where="\n".join(where), direction="DESC" if descending else "ASC"), params)
    more = len(fetched) > page_size
    fetched = fetched[:page_size]
    if backwards:
        fetched.reverse()
    return KeysetWindow(rows=fetched, more=more, backwards=backwards, from_cursor=cursor is not None)


@dataclass(frozen=True)
class KeysetSlice:
    """One page of a model list in ascending (time, id) order, with the cursors of its neighbours."""

    rows: list
    prev_cursor: Cursor | None
    next_cursor: Cursor | None


def keyset_slice(queryset: QuerySet, *, time_field: str, after: Cursor | None, before: Cursor | None,
                 page_size: int = PAGE_SIZE) -> KeysetSlice:
    """One page of `queryset` in ascending (`time_field`, id) order (the field is never null), after
    or before a position (`Cursor` holds the time and the id of a row): one statement of page_size
    + 1 rows, whatever the list's length (the extra row tells whether there is more)."""
    backwards = before is not None and after is None
    cursor = before if backwards else after
    if cursor is not None:
        op = "lt" if backwards else "gt"
        queryset = queryset.filter(Q(**{f"{time_field}__{op}": cursor.paused_since})
                                   | Q(**{time_field: cursor.paused_since, f"id__{op}": cursor.workflow_id}))
    order = (f"-{time_field}", "-id") if backwards else (time_field, "id")
    rows = list(queryset.order_by(*order)[:page_size + 1])
    more = len(rows) > page_size
    rows = rows[:page_size]
    if backwards:
        rows.reverse()
    if not rows:
        return KeysetSlice([], None, None)

    def key(row) -> Cursor:
        return Cursor(getattr(row, time_field), row.pk)

    if backwards:
        return KeysetSlice(rows, key(rows[0]) if more else None, key(rows[-1]))
    return KeysetSlice(rows, key(rows[0]) if cursor is not None else None, key(rows[-1]) if more else None)
