"""Reads for the floor pages: active and stalled workflows, search in every status, the shift
handover. Plain functions with keyword-only arguments; results as dataclasses.

Stalled is a derived flag (docs/user-guide.md, "Active and stalled workflows"): an ACTIVE workflow whose current
step's job, at status 1, 2 or 3, has not changed for STALLED_AFTER_MINUTES. The decision table
still leaves such a workflow alone; these pages only make it visible.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy

from console.floor import sql as floor_sql
from console.models import (
    CancelProposal,
    Notification,
    NotificationAcknowledgement,
    RepairAudit,
    Silence,
    WorkflowNote,
)
from console.notifications.messages import with_texts
from console.notifications.silences import READABLE
from console.readers import PAGE_SIZE, Cursor, fetch_dicts, keyset_window
from console.readers.shifts import Shift
from console.readers.stalled import (
    ActiveCounts,
    StalledRow,
    active_counts,
    stalled_after,
    stalled_before,
    stalled_workflows,
)
from console.repair.selectors import with_labels
from recovery.models import TIDY_JOB_ID, RecoveryDecision, TidyWorkflow

# --- labels a page shows for stored values (the values themselves stay as they are) ----------

ORIGIN_LABELS = {"AUTOMATIC": gettext_lazy("Automatic"), "MANUAL": gettext_lazy("Manual")}
# How a search matched (floor_sql.SEARCH_WORKFLOWS names it in English).
MATCHED_LABELS = {
    "workflow id": gettext_lazy("workflow id"), "job id": gettext_lazy("job id"), "tray": gettext_lazy("tray"),
    "source space": gettext_lazy("source space"), "target space": gettext_lazy("target space"),
    "locked space": gettext_lazy("locked space"),
}
DECISION_SOURCE_LABELS = {"RECOVERY": gettext_lazy("recovery"), "CALLBACK": gettext_lazy("callback"),
                          "REPAIR": gettext_lazy("repair")}
REPAIR_OUTCOME_LABELS = {"APPLIED": gettext_lazy("applied"), "PROPOSED": gettext_lazy("proposed"),
                         "REJECTED": gettext_lazy("rejected"), "REFUSED": gettext_lazy("refused")}


def origin_label(origin: str) -> str:
    """A workflow's origin for a page; an origin the console does not know is shown as before."""
    return ORIGIN_LABELS.get(origin) or origin.title()


def repair_outcome(outcome: str) -> tuple[str, str]:
    """(label, code) of a RepairAudit outcome: "REFUSED:PRECONDITION" -> ("refused", "PRECONDITION")."""
    head, _, code = outcome.partition(":")
    label = REPAIR_OUTCOME_LABELS.get(head)
    return (label, code) if label is not None else ("", outcome)




# --- the active list (the paused list's keyset cursor over (since, workflow id)) --------------


@dataclass(frozen=True)
class ActiveFilters:
    stalled: bool = False
    origin: str = ""
    after: Cursor | None = None
    before: Cursor | None = None

    def params(self, **changes) -> dict[str, str]:
        """Query parameters of these filters (without the position), with `changes` applied."""
        values = {"stalled": "1" if self.stalled else "", "origin": self.origin}
        values.update(changes)
        return {k: v for k, v in values.items() if v}

    @property
    def active(self) -> bool:
        return bool(self.stalled or self.origin)


@dataclass(frozen=True)
class ActiveRow:
    workflow_id: int
    origin: str
    created_at: datetime
    step_no: int | None
    step_status: str | None
    tray_code: str | None
    cargo_space_id: str | None
    target_cargo_space_id: str | None
    job_id: str | None
    job_status: int | None
    job_created_at: datetime | None
    job_updated_at: datetime | None
    since: datetime
    stalled: bool
    last_callback_at: datetime | None

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.since, self.workflow_id)


@dataclass
class ActivePage:
    filters: ActiveFilters
    rows: list[ActiveRow]
    counts: ActiveCounts
    stalled_after: timedelta
    next_cursor: Cursor | None = None
    prev_cursor: Cursor | None = None


ACTIVE_ROW_FIELDS = tuple(ActiveRow.__dataclass_fields__)


def active_workflows_page(*, filters: ActiveFilters, page_size: int = PAGE_SIZE) -> ActivePage:
    """One page of ACTIVE workflows, longest unchanged first, and the counts: two queries."""
    now = timezone.now()
    params = {"stalled_before": stalled_before(now), "limit": page_size + 1}
    where = []
    if filters.stalled:
        where.append(floor_sql.ACTIVE_WHERE_STALLED)
    if filters.origin:
        where.append(floor_sql.ACTIVE_WHERE_ORIGIN)
        params["origin"] = filters.origin
    window = keyset_window(page_sql=floor_sql.ACTIVE_PAGE, where=where, params=params, after=filters.after,
                           before=filters.before, newest=False, page_size=page_size,
                           after_sql=floor_sql.ACTIVE_WHERE_AFTER_CURSOR,
                           before_sql=floor_sql.ACTIVE_WHERE_BEFORE_CURSOR)
    rows = [ActiveRow(**{k: r[k] for k in ACTIVE_ROW_FIELDS}) for r in window.rows]
    page = ActivePage(filters=filters, rows=rows, counts=active_counts(now=now), stalled_after=stalled_after())
    page.prev_cursor, page.next_cursor = window.cursors(rows)
    return page


# --- search in every status ------------------------------------------------------------------

SEARCH_PAGE = 20  # workflows a search page shows, newest first; "Older results" pages on


@dataclass(frozen=True)
class SearchHit:
    workflow_id: int
    status: str
    origin: str
    pause_reason: str | None
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    matched: tuple[str, ...]

    @property
    def matched_labels(self) -> list[str]:
        return [MATCHED_LABELS.get(m, m) for m in self.matched]

    @property
    def origin_label(self) -> str:
        return origin_label(self.origin)


@dataclass(frozen=True)
class SearchResult:
    q: str
    hits: list[SearchHit]
    before: int | None  # the page shows the workflows below this id (None: the newest)
    older: int | None  # the next page's `before` when older workflows match too, else None

    @property
    def single(self) -> SearchHit | None:
        """The one workflow matching q, when the whole answer is that one."""
        return self.hits[0] if len(self.hits) == 1 and self.before is None and self.older is None else None


def search_workflows(*, q: str, before: int | None = None, limit: int = SEARCH_PAGE) -> SearchResult:
    """Workflows in any status whose id, job id, tray or space (any step, or a lock) is exactly q:
    one page of `limit`, newest first, below workflow id `before` when given."""
    job = TIDY_JOB_ID.fullmatch(q)
    params = {
        "q": q,
        "q_id": int(q) if q.isdigit() and len(q) < 19 else None,
        "job_workflow": int(job.group(1)) if job else None,
        "job_step": int(job.group(2)) if job else None,
        "before": before,
        "limit": limit + 1,
    }
    rows = fetch_dicts(floor_sql.SEARCH_WORKFLOWS, params)
    hits = [SearchHit(**{**r, "matched": tuple(r["matched"])}) for r in rows[:limit]]
    return SearchResult(q=q, hits=hits, before=before, older=hits[-1].workflow_id if len(rows) > limit else None)




# --- the handover ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenPause:
    workflow_id: int
    pause_reason: str | None
    origin: str
    paused_since: datetime

    @property
    def origin_label(self) -> str:
        return origin_label(self.origin)


# The handover's sections, in the page's order. Each shows at most HANDOVER_SECTION_ROWS rows: the
# newest of what happened in the shift (in the order it happened), the first of what holds now
# (longest waiting first), with "and M more" linking to the section's own pages. A flood (20,000
# notes in one shift) therefore never makes the page larger than a few hundred kilobytes; the CSV
# export stays complete and streams (handover_export).
SECTIONS = ("paused", "repairs", "still_open", "stalled", "proposals", "notifications", "acknowledgements",
            "silences", "notes")
# Sections about the shift, whose newest rows the page shows; the others are about now.
SHIFT_SECTIONS = frozenset({"paused", "repairs", "notifications", "acknowledgements", "silences", "notes"})
SECTION_PAGE_ROWS = 200


@dataclass
class Handover:
    shift: Shift
    now: datetime
    paused: list  # RecoveryDecision rows with action PAUSE decided in the shift
    repairs: list  # RepairAudit rows applied or refused in the shift (stage APPLY)
    still_open: list[OpenPause]  # paused now, oldest first
    stalled: list[StalledRow]  # stalled now
    proposals: list  # CancelProposal rows pending now
    notes: list  # WorkflowNote rows written in the shift
    notifications: list  # Notification rows opened in the shift
    acknowledgements: list  # NotificationAcknowledgement rows recorded in the shift
    silences: list  # Silence rows in force at some time in the shift
    unreadable_silences: int = 0  # silences whose times cannot be read (not in `silences`)
    totals: dict[str, int] = field(default_factory=dict)  # rows of each section in all, shown or not
    section: str | None = None  # one section, page by page; None: every section, its first rows
    page: int = 1
    pages: int = 1
    stalled_after: timedelta = field(default_factory=stalled_after)

    @property
    def current(self) -> bool:
        return self.shift.contains(self.now)

    @property
    def more(self) -> dict[str, int]:
        """Rows of each section that the overview leaves out (a section shown alone has its pager)."""
        if self.section is not None:
            return dict.fromkeys(SECTIONS, 0)
        return {name: self.totals.get(name, 0) - len(getattr(self, name)) for name in SECTIONS}


def _section_querysets(shift: Shift) -> dict:
    """Every section but `stalled` (a computed list), in its display order."""
    window = {"gte": shift.start, "lt": shift.end}
    return {
        "paused": RecoveryDecision.objects.filter(action="PAUSE", observed=False, decided_at__gte=window["gte"],
                                                  decided_at__lt=window["lt"]).order_by("decided_at", "pk"),
        "repairs": RepairAudit.objects.filter(stage=RepairAudit.Stage.APPLY, at__gte=window["gte"],
                                              at__lt=window["lt"]).order_by("at", "pk"),
        "still_open": TidyWorkflow.objects.filter(status=TidyWorkflow.Status.PAUSED_RECOVERY)
        .order_by("updated_at", "workflow_id"),  # tidy_workflow_status_idx
        "proposals": CancelProposal.objects.filter(status=CancelProposal.Status.PENDING)
        .select_related("proposed_by").order_by("proposed_at", "pk"),
        "notes": WorkflowNote.objects.filter(at__gte=window["gte"], at__lt=window["lt"])
        .order_by("at", "pk"),  # the index on at
        "notifications": Notification.objects.filter(opened_at__gte=window["gte"], opened_at__lt=window["lt"])
        .order_by("opened_at", "pk"),
        "acknowledgements": NotificationAcknowledgement.objects.filter(at__gte=window["gte"], at__lt=window["lt"])
        .select_related("notification").order_by("at", "pk"),
        # In force at some time in the shift: started before its end, over after its start.
        # Only silences whose times can be read (the others are counted as unreadable).
        "silences": Silence.objects.filter(READABLE, starts_at__lt=window["lt"], ends_at__gt=window["gte"])
        .exclude(ending__at__lte=window["gte"]).select_related("ending").order_by("starts_at", "pk"),
    }


def _open_pause(w) -> OpenPause:
    return OpenPause(w.workflow_id, w.pause_reason, w.origin, w.updated_at)


def _shown(name: str, rows, total: int, *, section: str | None, page: int, limit: int) -> list:
    """The rows a page shows of one section: the overview's first (or newest) `limit`, or one page
    of a section shown alone. `rows` is a queryset or, for `stalled`, a list."""
    if section is not None:
        start = (page - 1) * SECTION_PAGE_ROWS
        return list(rows[start:start + SECTION_PAGE_ROWS])
    if name in SHIFT_SECTIONS and total > limit:
        return list(rows.reverse()[:limit])[::-1]  # the newest, in the order they happened
    return list(rows[:limit])


def handover(*, shift: Shift, section: str | None = None, page: int = 1, limit: int | None = None) -> Handover:
    """The handover of `shift`: every section's first rows (at most `limit`, HANDOVER_SECTION_ROWS)
    and its total, or with `section` that section alone, SECTION_PAGE_ROWS a page (a page past
    the last shows the last)."""
    limit = settings.HANDOVER_SECTION_ROWS if limit is None else limit
    now = timezone.now()
    sources = _section_querysets(shift)
    shown, totals = {}, {}
    pages = 1
    for name in SECTIONS:
        if section is not None and name != section:
            shown[name] = []
            continue
        rows = stalled_workflows(now=now) if name == "stalled" else sources[name]
        totals[name] = len(rows) if name == "stalled" else rows.count()
        if section is not None:
            pages = max(1, -(-totals[name] // SECTION_PAGE_ROWS))
            page = min(max(page, 1), pages)
        shown[name] = _shown(name, rows, totals[name], section=section, page=page, limit=limit)
    shown["still_open"] = [_open_pause(w) for w in shown["still_open"]]
    # What the page shows for stored values, in the reader's language.
    for decision in shown["paused"]:
        decision.source_label = DECISION_SOURCE_LABELS.get(decision.source) or decision.source.lower()
    for audit in shown["repairs"]:
        audit.outcome_label, audit.outcome_code = repair_outcome(audit.outcome)
    with_labels(shown["repairs"])
    with_texts(shown["notifications"])
    with_texts([a.notification for a in shown["acknowledgements"]])
    unreadable = Silence.objects.exclude(READABLE).count() if section in (None, "silences") else 0
    return Handover(shift=shift, now=now, totals=totals, section=section, page=page if section else 1, pages=pages,
                    unreadable_silences=unreadable, **shown)


# The CSV's order of sections (the page's, with the notes before the notifications as before).
CSV_SECTIONS = ("paused", "repairs", "still_open", "stalled", "proposals", "notes", "notifications", "acknowledgements",
                "silences")


def handover_export(*, shift: Shift, now: datetime):
    """(section, row) for every row of every section, whatever its size, read in chunks while the
    CSV streams: one chunk in memory at a time, never the whole shift (`/handover/?format=csv`)."""
    sources = _section_querysets(shift)
    for name in CSV_SECTIONS:
        rows = stalled_workflows(now=now) if name == "stalled" else sources[name].iterator(chunk_size=1000)
        for row in rows:
            yield name, _open_pause(row) if name == "still_open" else row
