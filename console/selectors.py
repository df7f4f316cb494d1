"""Reads for the console pages: plain functions with keyword-only arguments, results as
dataclasses. Every list read runs a fixed number of queries whatever the row count."""

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

from django.conf import settings
from django.db import connection
from django.db.models import Count, JSONField, Min, OuterRef, Q, Subquery, Sum
from django.db.models.functions import TruncMinute
from django.utils import timezone

from console import console_sql
from console.input_checks import BIGINT_MAX, is_ascii_int
from console.reason_codes import REASON_ORDER
from recovery.evidence import TidyRecoveryEvidence, evidence_for_workflow, evidence_from_json
from recovery.models import (
    BasCargoSpace,
    CallbackReceipt,
    MydoJob,
    MydoJobFinish,
    RecoveryCycle,
    RecoveryDecision,
    TidyCallbackEvent,
    TidySpaceLock,
    TidyStep,
    TidyWorkflow,
)
from recovery.prepared import run_prepared

PAUSED = TidyWorkflow.Status.PAUSED_RECOVERY
ACTIVE = TidyWorkflow.Status.ACTIVE
TIDY_MOVE = 28

# --- recovery health -------------------------------------------------------------------------


def last_cycle() -> RecoveryCycle | None:
    """The newest finished cycle, whatever its outcome."""
    return RecoveryCycle.objects.exclude(outcome=RecoveryCycle.Outcome.RUNNING).order_by("-started_at").first()


def retained_lock_count() -> int:
    return TidySpaceLock.objects.filter(workflow__status=PAUSED).count()


def stale_after() -> timedelta:
    return timedelta(seconds=settings.RECOVERY_STALE_AFTER_INTERVALS * settings.RECOVERY_INTERVAL_SECONDS)


@dataclass(frozen=True)
class RecoveryHealth:
    last_success: RecoveryCycle | None
    latest: RecoveryCycle | None  # the newest cycle of any outcome (may be RUNNING or FAILED)
    stale_after: timedelta
    now: datetime
    # Workflows needing a decision that the newest successful cycles (one per shard) left to the
    # next cycle by their budget: recovery is draining, not stale, while cycles keep succeeding.
    backlog: int = 0
    # Sharded recovery: shards without a successful cycle within stale_after (a shard nobody
    # recovers is stale even while the other shards' cycles succeed).
    stale_shards: tuple[int, ...] = ()

    @property
    def draining(self) -> bool:
        return self.backlog > 0 and not self.stale

    @property
    def success_age(self) -> timedelta | None:
        if self.last_success is None or self.last_success.finished_at is None:
            return None
        return self.now - self.last_success.finished_at

    @property
    def stale(self) -> bool:
        age = self.success_age
        return age is None or age > self.stale_after or bool(self.stale_shards)

    @property
    def latest_failed(self) -> bool:
        return self.latest is not None and self.latest.outcome == RecoveryCycle.Outcome.FAILED


def recovery_health() -> RecoveryHealth:
    """The last successful cycle and the newest cycle, in one query (every live page asks).

    Named SQL rather than an ORM union: the union's compilation cost more than the query."""
    found = {c.kind: c for c in RecoveryCycle.objects.raw(console_sql.RECOVERY_HEALTH_CYCLES)}
    last_success = found.get("success")
    backlog, stale_shards = _shard_backlog(last_success)
    return RecoveryHealth(last_success=last_success, latest=found.get("latest"), stale_after=stale_after(),
                          now=timezone.now(), backlog=backlog, stale_shards=stale_shards)


def _shard_backlog(last_success: RecoveryCycle | None) -> tuple[int, tuple[int, ...]]:
    """The backlog the newest successful cycle of each shard left, and the shards with no
    successful cycle within stale_after, by the statement /health/ready reads too; one cycle
    covers every workflow when recovery is not sharded (no further query then)."""
    if last_success is None or last_success.shard is None:
        return (last_success.backlog if last_success else 0), ()
    ((_, stale_shards, backlog),) = _fetch_rows(console_sql.READY_RECOVERY_FACTS,
                                                {"stale_after_seconds": stale_after().total_seconds()})
    return backlog, tuple(stale_shards)


def recent_cycles(*, limit: int = 50) -> list[RecoveryCycle]:
    return list(RecoveryCycle.objects.order_by("-started_at")[:limit])


REFUSAL_WINDOW = timedelta(hours=24)
ACCEPTED_OUTCOMES = (CallbackReceipt.Outcome.ACCEPTED, CallbackReceipt.Outcome.DUPLICATE)


@dataclass(frozen=True)
class CallbackRefusals:
    """WCS callbacks refused in the last `window`, per (endpoint, outcome), 401s included."""

    window: timedelta
    counts: list[tuple[str, str, int]]  # (endpoint, outcome, requests), most first
    last_unauthorized: CallbackReceipt | None

    @property
    def total(self) -> int:
        return sum(n for _, _, n in self.counts)

    @property
    def hours(self) -> int:
        return round(self.window.total_seconds() / 3600)


def callback_refusals(*, window: timedelta = REFUSAL_WINDOW) -> CallbackRefusals:
    """Index callback_receipt_time_idx bounds both reads to the window."""
    since = timezone.now() - window
    recent = CallbackReceipt.objects.filter(received_at__gte=since).exclude(outcome__in=ACCEPTED_OUTCOMES)
    counts = [(r["endpoint"], r["outcome"], r["requests"]) for r in
              recent.values("endpoint", "outcome").annotate(requests=Sum("request_count"))
              .order_by("-requests", "endpoint", "outcome")]
    last = recent.filter(outcome=CallbackReceipt.Outcome.UNAUTHORIZED).order_by("-received_at", "-id").first()
    return CallbackRefusals(window=window, counts=counts, last_unauthorized=last)


# --- dashboard -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DashboardCounts:
    active: int
    paused: int
    paused_by_reason: dict[str, int]
    completed_today: int
    oldest_paused_since: datetime | None
    retained_locks: int


def start_of_today() -> datetime:
    """Midnight in the warehouse's time zone (settings.TIME_ZONE)."""
    local = timezone.localtime()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def dashboard_counts() -> DashboardCounts:
    # tidy_workflow_status_idx (status, updated_at) serves every count here.
    by_reason = {}
    oldest = None
    for row in (TidyWorkflow.objects.filter(status=PAUSED).values("pause_reason")
                .annotate(n=Count("pk"), oldest=Min("updated_at")).order_by()):
        by_reason[row["pause_reason"] or "(none)"] = row["n"]
        oldest = row["oldest"] if oldest is None else min(oldest, row["oldest"])
    today = start_of_today()
    counts = TidyWorkflow.objects.filter(
        Q(status=ACTIVE) | Q(status=TidyWorkflow.Status.COMPLETED, updated_at__gte=today)
    ).aggregate(
        active=Count("pk", filter=Q(status=ACTIVE)),
        completed_today=Count("pk", filter=Q(status=TidyWorkflow.Status.COMPLETED, completed_at__gte=today)),
    )
    return DashboardCounts(
        active=counts["active"],
        paused=sum(by_reason.values()),
        paused_by_reason=dict(sorted(by_reason.items())),
        completed_today=counts["completed_today"],
        oldest_paused_since=oldest,
        retained_locks=retained_lock_count(),
    )


# --- paused workflows list (keyset pagination, facets) ---------------------------------------

PAGE_SIZE = 50

# (key, label, lower bound, upper bound) of the time since a workflow paused.
AGE_BUCKETS: tuple[tuple[str, str, timedelta | None, timedelta | None], ...] = (
    ("lt1h", "under 1 hour", None, timedelta(hours=1)),
    ("1h-8h", "1 to 8 hours", timedelta(hours=1), timedelta(hours=8)),
    ("8h-24h", "8 to 24 hours", timedelta(hours=8), timedelta(hours=24)),
    ("gt24h", "over 24 hours", timedelta(hours=24), None),
)
AGE_LABELS = {key: label for key, label, _, _ in AGE_BUCKETS}
SORTS = {"oldest": "oldest first", "newest": "newest first"}
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
class PausedFilters:
    reason: str = ""
    origin: str = ""
    age: str = ""
    q: str = ""
    sort: str = "oldest"
    after: Cursor | None = None
    before: Cursor | None = None

    def params(self, **changes) -> dict[str, str]:
        """Query parameters of these filters (without the position), with `changes` applied."""
        values = {"reason": self.reason, "origin": self.origin, "age": self.age, "q": self.q,
                  "sort": self.sort if self.sort != "oldest" else ""}
        values.update(changes)
        return {k: v for k, v in values.items() if v}

    @property
    def active(self) -> bool:
        return bool(self.reason or self.origin or self.age or self.q)


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


def _fetch_rows(sql: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _fetch_dicts(sql: str, params: dict) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [c.name for c in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _facet_groups(q: str, now: datetime) -> list[dict]:
    """Counts per (reason, origin, age bucket) of the paused workflows matching the search."""
    params = {"h1": now - timedelta(hours=1), "h8": now - timedelta(hours=8), "h24": now - timedelta(hours=24)}
    where = ""
    if q:
        where = console_sql.WHERE_SEARCH
        params.update(_search_params(q))
    groups = []
    for reason, origin, n, after_h1, after_h8, after_h24 in _fetch_rows(console_sql.PAUSED_FACETS.format(where=where),
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
    groups = _facet_groups(filters.q, now)
    selected = {"reason": filters.reason, "origin": filters.origin, "age": filters.age}

    def count(facet: str, value: str) -> int:
        return sum(g["n"] for g in groups if g[facet] == value
                   and all(not sel or g[other] == sel for other, sel in selected.items() if other != facet))

    known = [r.value for r in REASON_ORDER]
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
        where.append(console_sql.WHERE_SEARCH)
        params.update(_search_params(filters.q))
    if filters.reason:
        where.append(console_sql.WHERE_REASON)
        params["reason"] = filters.reason
    if filters.origin:
        where.append(console_sql.WHERE_ORIGIN)
        params["origin"] = filters.origin
    if filters.age:
        after, before = _age_bounds(filters.age, now)
        if after is not None:
            where.append(console_sql.WHERE_PAUSED_AFTER)
            params["paused_after"] = after
        if before is not None:
            where.append(console_sql.WHERE_PAUSED_BEFORE)
            params["paused_before"] = before

    window = keyset_window(page_sql=console_sql.PAUSED_PAGE, where=where, params=params, after=filters.after,
                           before=filters.before, newest=filters.sort == "newest", page_size=page_size,
                           after_sql=console_sql.WHERE_AFTER_CURSOR, before_sql=console_sql.WHERE_BEFORE_CURSOR)
    rows = [PausedRow(r["workflow_id"], r["origin"], r["pause_reason"], r["updated_at"], r["created_at"],
                      r["lock_count"], r["step_no"], r["tray_code"], r["cargo_space_id"], r["target_cargo_space_id"])
            for r in window.rows]
    page = PausedPage(filters=filters, rows=rows, total_matching=total_matching,
                      total_paused=None if filters.q else sum(g["n"] for g in groups), facets=facets)
    page.prev_cursor, page.next_cursor = window.cursors(rows)
    return page


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
    fetched = _fetch_dicts(page_sql.format(where="\n".join(where), direction="DESC" if descending else "ASC"), params)
    more = len(fetched) > page_size
    fetched = fetched[:page_size]
    if backwards:
        fetched.reverse()
    return KeysetWindow(rows=fetched, more=more, backwards=backwards, from_cursor=cursor is not None)


# --- locks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockedStep:
    workflow_id: int
    workflow_status: str
    step_id: int
    step_no: int
    status: str
    tray_code: str
    cargo_space_id: str
    target_cargo_space_id: str

    def role_of(self, space: str) -> str:
        return "source" if self.cargo_space_id == space else "target"


@dataclass(frozen=True)
class LockRow:
    lock_id: int
    cargo_space_id: str
    workflow_id: int
    workflow_status: str
    pause_reason: str | None
    origin: str
    locked_at: datetime
    space_tray_code: str | None
    blocks: tuple[BlockedStep, ...]


def blocked_steps(*, spaces: list[str]) -> dict[str, list[BlockedStep]]:
    """Unfinished steps of ACTIVE or PAUSED workflows that need one of `spaces` (one query).

    The caller drops the steps of the lock holder itself."""
    if not spaces:
        return {}
    wanted = set(spaces)
    with connection.cursor() as cursor:
        cursor.execute(console_sql.OPEN_STEPS_USING_SPACES, {"spaces": list(wanted)})
        return _by_space([BlockedStep(*row) for row in cursor.fetchall()], wanted)


def _by_space(steps: list[BlockedStep], wanted: set[str]) -> dict[str, list[BlockedStep]]:
    out: dict[str, list[BlockedStep]] = defaultdict(list)
    for step in steps:
        for space in {step.cargo_space_id, step.target_cargo_space_id} & wanted:
            out[space].append(step)
    return out


def _lock_rows(locks: list[dict], blocked: dict[str, list[BlockedStep]] | None = None) -> list[LockRow]:
    """LockRows of `locks` (_lock_values rows), with what each locked space blocks (one query,
    unless `blocked` already says)."""
    if blocked is None:
        blocked = blocked_steps(spaces=[lk["cargo_space_id"] for lk in locks])
    return [
        LockRow(lk["lock_id"], lk["cargo_space_id"], lk["workflow_id"], lk["workflow__status"],
                lk["workflow__pause_reason"], lk["workflow__origin"], lk["locked_at"], lk["space_tray_code"],
                tuple(b for b in blocked.get(lk["cargo_space_id"], []) if b.workflow_id != lk["workflow_id"]))
        for lk in locks
    ]


LOCK_FIELDS = ("lock_id", "cargo_space_id", "workflow_id", "workflow__status", "workflow__pause_reason",
               "workflow__origin", "locked_at", "space_tray_code")


def _lock_values(locks):
    """The lock rows with the tray their space holds, read in the same statement (bas_cargo_space_pkey)."""
    holds = BasCargoSpace.objects.filter(cargo_space_id=OuterRef("cargo_space_id")).values("tray_code")[:1]
    return locks.annotate(space_tray_code=Subquery(holds)).values(*LOCK_FIELDS)


@dataclass(frozen=True)
class LockCursor:
    locked_at: datetime
    lock_id: int

    def encode(self) -> str:
        return f"{(self.locked_at - EPOCH) // timedelta(microseconds=1)}-{self.lock_id}"

    @classmethod
    def decode(cls, text: str) -> "LockCursor":
        c = Cursor.decode(text)
        return cls(c.paused_since, c.workflow_id)


@dataclass
class LocksPage:
    rows: list[LockRow]
    total: int
    q: str
    next_cursor: LockCursor | None = None
    has_prev: bool = False


def paused_locks_page(*, q: str = "", after: LockCursor | None = None, page_size: int = 100) -> LocksPage:
    """Every lock held by a paused workflow, oldest first, keyset-paginated; three queries."""
    qs = TidySpaceLock.objects.filter(workflow__status=PAUSED)
    if q:
        cond = Q(cargo_space_id=q)
        if is_ascii_int(q):
            cond |= Q(workflow_id=int(q))
        qs = qs.filter(cond)
    total = qs.count()
    if after is not None:
        qs = qs.filter(Q(locked_at__gt=after.locked_at) | Q(locked_at=after.locked_at, lock_id__gt=after.lock_id))
    locks = list(_lock_values(qs.order_by("locked_at", "lock_id"))[:page_size + 1])
    more = len(locks) > page_size
    locks = locks[:page_size]
    rows = _lock_rows(locks)
    page = LocksPage(rows=rows, total=total, q=q, has_prev=after is not None)
    if more and rows:
        page.next_cursor = LockCursor(rows[-1].locked_at, rows[-1].lock_id)
    return page


# --- workflow detail -------------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineStep:
    step: TidyStep
    job_id: str
    active_job: MydoJob | None
    finished_jobs: tuple[MydoJobFinish, ...]
    events: tuple[TidyCallbackEvent, ...]
    first_incomplete: bool


_LOCKED_AT = TidySpaceLock._meta.get_field("locked_at")


def _json_value(value):
    """A json/jsonb column as the driver hands it over: decoded, or still text."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _json_rows(model, rows: list[dict]) -> list:
    """Model rows from a JSON array of whole table rows (json_agg of the rows): each column
    converted as the ORM would read it (timestamps back to aware datetimes; a JSON column is
    already decoded)."""
    fields = model._meta.concrete_fields
    names = [f.attname for f in fields]
    return [model.from_db(connection.alias, names,
                          [row[f.column] if isinstance(f, JSONField) else f.to_python(row[f.column]) for f in fields])
            for row in rows]


@dataclass
class WorkflowDetail:
    """A workflow page. The live fragment (refreshed every few seconds) shows the status and the
    evidence; the timeline, lock blockers, callbacks and receipts belong to the history fragment
    and are read when a template first uses them, so the live refresh does not pay for them
    (docs/architecture.md, "Console pages")."""

    workflow: TidyWorkflow
    decisions: list[RecoveryDecision]
    pause_decision: RecoveryDecision | None
    evidence_now: TidyRecoveryEvidence | None
    evidence_then: TidyRecoveryEvidence | None

    @property
    def paused(self) -> bool:
        return self.workflow.status == PAUSED

    @cached_property
    def _history(self) -> dict:
        """The history fragment's reads, in one statement (console_sql.WORKFLOW_HISTORY)."""
        # Prepared with a generic plan (recovery.prepared): planning it cost twice its execution.
        names, rows = run_prepared(console_sql.WORKFLOW_HISTORY, {"workflow_id": self.workflow.workflow_id})
        return {name: _json_value(v) for name, v in zip(names, rows[0], strict=True)}

    @cached_property
    def _steps_and_events(self) -> tuple[list[TimelineStep], list[TidyCallbackEvent]]:
        steps = _json_rows(TidyStep, self._history["steps"])
        active = {j.job_id: j for j in _json_rows(MydoJob, self._history["jobs"])}
        finished = defaultdict(list)
        for j in _json_rows(MydoJobFinish, self._history["finishes"]):
            finished[j.job_id].append(j)
        events = _json_rows(TidyCallbackEvent, self._history["events"])
        by_step = defaultdict(list)
        for e in events:
            by_step[e.step_id].append(e)
        first_incomplete = next((s.step_id for s in steps if s.status != TidyStep.Status.COMPLETED), None)
        timeline = [TimelineStep(s, s.job_id, active.get(s.job_id), tuple(finished.get(s.job_id, ())),
                                 tuple(by_step.get(s.step_id, ())), s.step_id == first_incomplete) for s in steps]
        return timeline, events

    @property
    def timeline(self) -> list[TimelineStep]:
        return self._steps_and_events[0]

    @property
    def events(self) -> list[TidyCallbackEvent]:
        return self._steps_and_events[1]

    @property
    def lock_count(self) -> int:
        """Spaces the workflow locks, as the evidence counted them: the live fragment shows the
        count and reads no lock rows."""
        return self.evidence_now.lock_count if self.evidence_now is not None else len(self.locks)

    @cached_property
    def locks(self) -> list[LockRow]:
        w = self.workflow
        locks = [{"lock_id": lk["lock_id"], "cargo_space_id": lk["cargo_space_id"], "workflow_id": w.workflow_id,
                  "workflow__status": w.status, "workflow__pause_reason": w.pause_reason,
                  "workflow__origin": w.origin, "locked_at": _LOCKED_AT.to_python(lk["locked_at"]),
                  "space_tray_code": lk["space_tray_code"]} for lk in self._history["locks"]]
        blocked = _by_space([BlockedStep(**b) for b in self._history["blockers"]],
                            {lk["cargo_space_id"] for lk in locks})
        return _lock_rows(locks, blocked)

    @cached_property
    def receipts(self) -> list[CallbackReceipt]:
        """The newest 100 callbacks received, refused ones included: evidence a supervisor reads beside the steps."""
        return _json_rows(CallbackReceipt, self._history["receipts"])


def workflow_detail(*, workflow_id: int) -> WorkflowDetail | None:
    if not 0 < workflow_id <= BIGINT_MAX:  # not a workflow id (the URL takes any digits)
        return None
    # The workflow and its journal in one statement, prepared (recovery.prepared) like the evidence read.
    _, rows = run_prepared(console_sql.WORKFLOW_AND_JOURNAL, {"workflow_id": workflow_id})
    if not rows:
        return None
    workflow_row, decision_rows = (_json_value(v) for v in rows[0])
    workflow = _json_rows(TidyWorkflow, [workflow_row])[0]
    decisions = _json_rows(RecoveryDecision, decision_rows)
    pause_decision = next((d for d in decisions if d.action == "PAUSE"), None)
    evidence_then = None
    if pause_decision is not None:
        try:
            evidence_then = evidence_from_json(pause_decision.evidence)
        except (KeyError, TypeError, ValueError):
            evidence_then = None  # journaled by an older format; the page says so
    return WorkflowDetail(
        workflow=workflow, decisions=decisions, pause_decision=pause_decision,
        evidence_now=evidence_for_workflow(workflow_id), evidence_then=evidence_then,
    )


# --- flow health: is the tidy queue draining? (backlog, arrivals vs completions) -------------


@dataclass(frozen=True)
class FlowHealth:
    now: datetime
    window: timedelta
    backlog: int
    backlog_by_status: dict[int, int]
    oldest_created_at: datetime | None
    arrivals: int  # tidy jobs created in the window (still active or already finished)
    completions: int  # tidy jobs finished in the window
    per_minute: list[tuple[datetime, int, int]]  # (minute, arrivals, completions)

    @property
    def minutes(self) -> float:
        return self.window.total_seconds() / 60

    @property
    def arrival_rate(self) -> float:
        return self.arrivals / self.minutes

    @property
    def completion_rate(self) -> float:
        return self.completions / self.minutes

    @property
    def net_drain_rate(self) -> float:
        """Jobs per minute the backlog shrinks by (negative: it grows)."""
        return self.completion_rate - self.arrival_rate

    @property
    def oldest_age(self) -> timedelta | None:
        return self.now - self.oldest_created_at if self.oldest_created_at else None

    @property
    def drain_time(self) -> timedelta | None:
        """Projected time to drain the backlog at the current rates; None when it does not drain."""
        if self.backlog == 0:
            return timedelta(0)
        if self.net_drain_rate <= 0:
            return None
        return timedelta(minutes=self.backlog / self.net_drain_rate)


def flow_health(*, window: timedelta = timedelta(hours=1)) -> FlowHealth:
    now = timezone.now()
    since = now - window
    active = MydoJob.objects.filter(in_or_out=TIDY_MOVE)
    by_status = {r["status"]: r["n"] for r in active.values("status").annotate(n=Count("pk")).order_by("status")}
    oldest = active.aggregate(oldest=Min("created_at"))["oldest"]
    # mydo_job_finish_finished_at_idx: a job created in the window also finished in it.
    finished = MydoJobFinish.objects.filter(in_or_out=TIDY_MOVE, finished_at__gte=since)
    minutes: dict[datetime, list[int]] = defaultdict(lambda: [0, 0])
    arrived = (active.filter(created_at__gte=since), finished.filter(created_at__gte=since))
    for qs in arrived:
        for r in qs.annotate(m=TruncMinute("created_at")).values("m").annotate(n=Count("pk")).order_by():
            minutes[r["m"]][0] += r["n"]
    for r in finished.annotate(m=TruncMinute("finished_at")).values("m").annotate(n=Count("pk")).order_by():
        minutes[r["m"]][1] += r["n"]
    arrivals = sum(v[0] for v in minutes.values())
    completions = sum(v[1] for v in minutes.values())
    start = since.replace(second=0, microsecond=0)
    series = []
    for i in range(int(window.total_seconds() // 60) + 1):
        m = start + timedelta(minutes=i)
        a, c = minutes.get(m, (0, 0))
        series.append((m, a, c))
    return FlowHealth(now=now, window=window, backlog=sum(by_status.values()), backlog_by_status=by_status,
                      oldest_created_at=oldest, arrivals=arrivals, completions=completions, per_minute=series)
