"""The warehouse builder: WMS data in every state the decision table knows.

The demo (`wms_demo`), the tests, the benchmark and the replay all build their warehouses
here, so "a workflow whose job is missing" means the same rows everywhere. Everything is
written with named SQL (recovery/demo/sql.py, BUILDER_*) and explicit values, as the WMS itself would have left it.

`CASES` names the kinds of workflow it writes and the decision-table rule each one hits; the
demo loads every kind, and tests/console/workflows/test_rule_registry.py checks that every rule has one.
"""

import itertools
from dataclasses import dataclass, field

from django.db import connection

from recovery.demo import sql as demo_sql
from recovery.engine.decisions import SPEC_BY_RULE, Rule
from recovery.models import tidy_job_id

# The kinds of workflow `WarehouseBuilder.build` writes -> the rule one recovery cycle decides it by.
CASES: dict[str, Rule] = {
    "healthy": Rule.ACTIVE_JOB_PRE_MOVE,
    "all_completed": Rule.ALL_STEPS_COMPLETED,
    "completed_job_active": Rule.COMPLETED_WITH_ACTIVE_JOB,
    "active_not_pre_move": Rule.ACTIVE_JOB_NOT_PRE_MOVE,
    "active_bad_status": Rule.ACTIVE_JOB_BAD_STATUS,
    "wcs_report_mismatch": Rule.WCS_REPORT_MISMATCH,
    "finish_terminal": Rule.FINISH_JOB_TERMINAL,
    "finish_terminal_last": Rule.FINISH_JOB_TERMINAL,
    "active_mismatch": Rule.ACTIVE_JOB_MISMATCH,
    "finish_mismatch": Rule.FINISH_JOB_MISMATCH,
    "active_and_finished": Rule.ACTIVE_AND_FINISHED,
    "finish_not_terminal": Rule.FINISH_JOB_NOT_TERMINAL,
    "finish_bad_status": Rule.FINISH_JOB_NOT_TERMINAL,
    "finish_duplicated": Rule.FINISH_JOB_DUPLICATED,
    "job_missing": Rule.NO_JOB,
    "paused": Rule.NOT_ACTIVE,
    "completed": Rule.NOT_ACTIVE,
}

# Each kind -> what one recovery cycle must do with it (action, pause reason): its rule's decision.
EXPECTED: dict[str, tuple[str, str | None]] = {
    kind: (SPEC_BY_RULE[rule].action.value, SPEC_BY_RULE[rule].reason.value if SPEC_BY_RULE[rule].reason else None)
    for kind, rule in CASES.items()
}

SKUS = ("BOLT-M6", "NUT-M6", "WASHER-6", "HINGE-40", "CABLE-2M", "GLOVE-L", "TAPE-50", "LABEL-A6",
        "FUSE-10A", "CLIP-12", "SCREW-4x30", "DOWEL-8")


@dataclass(frozen=True)
class Move:
    tray_code: str
    source: str
    target: str


@dataclass
class Built:
    kind: str
    workflow_id: int
    step_ids: list[int] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)


class WarehouseBuilder:
    """Allocates cargo spaces and trays and writes workflows in a requested state."""

    def __init__(self, *, prefix: str = "", space_prefix: str = "A"):
        self.prefix = prefix
        self.space_prefix = space_prefix
        self._space_no = itertools.count(1)
        self._tray_no = itertools.count(1)
        self._sku = itertools.cycle(SKUS)

    # --- low level --------------------------------------------------------------------------

    def _x(self, sql: str, params: dict | None = None):
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def space_id(self) -> str:
        n = next(self._space_no)
        aisle, rest = divmod(n - 1, 200)
        level, pos = divmod(rest, 20)
        return f"{self.prefix}{self.space_prefix}{aisle + 1:02d}-{level + 1:02d}-{pos + 1:02d}"

    def tray_code(self) -> str:
        return f"{self.prefix}T{next(self._tray_no):05d}"

    def add_space(self, tray_code: str | None = None) -> str:
        space = self.space_id()
        self._x(demo_sql.BUILDER_INSERT_SPACE, {"s": space, "t": tray_code})
        return space

    def add_stock(self, tray_code: str, space: str | None, sku_count: int = 3) -> None:
        for i in range(sku_count):
            self._x(demo_sql.BUILDER_INSERT_STOCK,
                    {"t": tray_code, "s": space, "k": next(self._sku), "q": 5 + 7 * i})

    def stocked_tray(self, sku_count: int = 3) -> tuple[str, str]:
        """A tray with stock in a fresh space that holds it; returns (tray, space)."""
        tray = self.tray_code()
        space = self.add_space(tray)
        self.add_stock(tray, space, sku_count)
        return tray, space

    def move(self, sku_count: int = 3) -> Move:
        tray, source = self.stocked_tray(sku_count)
        return Move(tray, source, self.add_space(None))

    def put_tray_at_target(self, move: Move) -> None:
        """The physical effect of a finished move, as alg.usp_complete_move_job leaves it."""
        self._x(demo_sql.BUILDER_BOOK_TRAY_STOCK, {"t": move.target, "tray": move.tray_code})
        self._x(demo_sql.BUILDER_EMPTY_SPACE, {"s": move.source})
        self._x(demo_sql.BUILDER_PUT_TRAY, {"t": move.target, "tray": move.tray_code})

    def workflow(self, *, moves: list[Move], step_statuses: list[str], status: str = "ACTIVE",
                 origin: str = "AUTOMATIC", pause_reason: str | None = None, lock: bool = True,
                 age_minutes: int = 0) -> Built:
        (wid,), = self._x(
            demo_sql.BUILDER_INSERT_WORKFLOW,
            {"o": origin, "st": status, "r": pause_reason, "age": age_minutes})
        built = Built(kind="", workflow_id=wid, moves=list(moves))
        for no, (mv, st) in enumerate(zip(moves, step_statuses, strict=True), start=1):
            (sid,), = self._x(
                demo_sql.BUILDER_INSERT_STEP,
                {"w": wid, "n": no, "t": mv.tray_code, "s": mv.source, "g": mv.target, "st": st,
                 "r": pause_reason if st == "PAUSED_RECOVERY" else None})
            built.step_ids.append(sid)
        if lock:
            spaces = sorted({s for mv in moves for s in (mv.source, mv.target)})
            for space in spaces:
                self._x(demo_sql.BUILDER_INSERT_SPACE_LOCK, {"w": wid, "s": space})
        return built

    def job(self, built: Built, step_index: int, *, status: int = 2, finished: bool = False,
            in_or_out: int = 28, tray_code: str | None = None, source: str | None = None,
            target: str | None = None) -> str:
        mv = built.moves[step_index]
        job_id = tidy_job_id(built.workflow_id, built.step_ids[step_index])
        params = {"j": job_id, "io": in_or_out, "st": status, "t": tray_code or mv.tray_code,
                  "s": source or mv.source, "g": target or mv.target}
        if finished:
            self._x(demo_sql.BUILDER_INSERT_FINISHED_JOB, params)
        else:
            self._x(demo_sql.BUILDER_INSERT_ACTIVE_JOB, params)
        return job_id

    def event(self, built: Built, step_index: int, stage: str = "MOVE_FINISHED") -> None:
        job_id = tidy_job_id(built.workflow_id, built.step_ids[step_index])
        self._x(demo_sql.BUILDER_INSERT_EVENT,
                {"w": built.workflow_id, "s": built.step_ids[step_index], "j": job_id, "st": stage})

    # --- the cases (CASES) -----------------------------------------------------------------------

    def build(self, kind: str, **kw) -> Built:
        built = getattr(self, f"_build_{kind}")(**kw)
        built.kind = kind
        return built

    def _two_moves(self) -> list[Move]:
        return [self.move(), self.move()]

    def _finished_first_step(self, built: Built) -> None:
        self.job(built, 0, status=4, finished=True)
        self.put_tray_at_target(built.moves[0])
        self.event(built, 0)

    def _build_healthy(self, job_status: int = 2, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=job_status)
        return built

    def _build_all_completed(self, **kw) -> Built:
        moves = self._two_moves()
        built = self.workflow(moves=moves, step_statuses=["COMPLETED", "COMPLETED"], **kw)
        for i, mv in enumerate(moves):
            self.job(built, i, status=4, finished=True)
            self.put_tray_at_target(mv)
            self.event(built, i)
        return built

    def _build_completed_job_active(self, **kw) -> Built:
        built = self._build_all_completed(**kw)
        # A second copy of the last job still sits in the active table.
        self.job(built, 1, status=2)
        return built

    def _build_active_not_pre_move(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=3)
        self.put_tray_at_target(built.moves[0])  # moved, but the job was never archived
        return built

    def _build_active_bad_status(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=9)
        return built

    def _build_wcs_report_mismatch(self, **kw) -> Built:
        """A consistent move whose job the WCS reported finished with another tray (the callback
        answered REPORT_MISMATCH and moved nothing): the receipt is what the callback wrote."""
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=3)
        self.wcs_report_mismatch(built, 0, tray_code=f"{self.prefix}T-ELSEWHERE")
        return built

    def wcs_report_mismatch(self, built: Built, step_index: int, *, tray_code: str) -> None:
        """The receipt of a job-finish that named `tray_code` instead of the step's tray."""
        move = built.moves[step_index]
        self._x(demo_sql.BUILDER_WCS_REPORT_MISMATCH, {
            "w": built.workflow_id, "s": built.step_ids[step_index],
            "j": tidy_job_id(built.workflow_id, built.step_ids[step_index]), "tray": tray_code,
            "location": move.target, "expected_tray": move.tray_code})

    def _build_finish_terminal(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=4, finished=True)
        self.put_tray_at_target(built.moves[0])
        return built

    def _build_finish_terminal_last(self, **kw) -> Built:
        moves = self._two_moves()
        built = self.workflow(moves=moves, step_statuses=["COMPLETED", "DISPATCHED"], **kw)
        self._finished_first_step(built)
        self.job(built, 1, status=4, finished=True)
        self.put_tray_at_target(moves[1])
        return built

    def _build_active_mismatch(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        other_tray, _ = self.stocked_tray()
        self.job(built, 0, status=2, tray_code=other_tray)
        return built

    def _build_finish_mismatch(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=4, finished=True, target=self.add_space(None))
        self.put_tray_at_target(built.moves[0])
        return built

    def _build_active_and_finished(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=2)
        self.job(built, 0, status=4, finished=True)
        return built

    def _build_finish_not_terminal(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=4, finished=True)  # archived, but the stock never moved
        return built

    def _build_finish_bad_status(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=5, finished=True)
        self.put_tray_at_target(built.moves[0])
        return built

    def _build_finish_duplicated(self, **kw) -> Built:
        built = self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)
        self.job(built, 0, status=4, finished=True)
        self.job(built, 0, status=4, finished=True)  # the archive holds the job id twice
        self.put_tray_at_target(built.moves[0])
        return built

    def _build_job_missing(self, **kw) -> Built:
        return self.workflow(moves=self._two_moves(), step_statuses=["DISPATCHED", "PENDING"], **kw)

    def _build_paused(self, reason: str = "RECOVERY_JOB_MISSING", **kw) -> Built:
        return self.workflow(moves=self._two_moves(), step_statuses=["PAUSED_RECOVERY", "PENDING"],
                             status="PAUSED_RECOVERY", pause_reason=reason, **kw)

    def _build_completed(self, **kw) -> Built:
        moves = self._two_moves()
        built = self.workflow(moves=moves, step_statuses=["COMPLETED", "COMPLETED"], status="COMPLETED",
                              lock=False, **kw)
        for i, mv in enumerate(moves):
            self.job(built, i, status=4, finished=True)
            self.put_tray_at_target(mv)
            self.event(built, i)
        return built


class BulkSeeder:
    """Tens of thousands of one-step workflows in a few set-based statements (benchmarks, scale
    tests), with explicit ids from `next_id` on: kinds healthy (leave), missing (pause: job
    missing), finished (advance), completed (complete)."""

    KINDS = ("healthy", "missing", "finished", "completed")

    def __init__(self, next_id: int = 1):
        self.next_id = next_id

    def seed(self, kind: str, count: int) -> range:
        if kind not in self.KINDS:
            raise ValueError(f"unknown bulk kind {kind!r}")
        lo, hi = self.next_id, self.next_id + count - 1
        if count <= 0:
            return range(lo, lo)
        self.next_id = hi + 1
        with connection.cursor() as cursor:
            for statement in demo_sql.bulk_seed_statements():
                cursor.execute(statement, {"lo": lo, "hi": hi, "kind": kind})
        return range(lo, hi + 1)

    def seed_needing_action(self, count: int) -> None:
        """A third each missing their job, with a proven finish, and with every step completed."""
        third = max(1, count // 3)
        self.seed("missing", third)
        self.seed("finished", third)
        self.seed("completed", count - 2 * third)


def truncate_wms_tables() -> None:
    with connection.cursor() as cursor:
        cursor.execute(demo_sql.TRUNCATE_WMS_TABLES)
