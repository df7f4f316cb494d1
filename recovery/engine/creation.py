"""Tidy creation: a workflow with its ordered steps, every space lock it needs and the first
step's job TDY-<workflowId>-<stepId> (in_or_out 28, status 1, step DISPATCHED), all in one
transaction; MANUAL creation first checks live vehicle availability with WCS. A refusal
(CreationRefused and its kinds) creates nothing.

A tray is tidied by one workflow at a time and never while anything else moves it: creation
refuses (TrayBusy) a tray with an active mydo_job of any kind or a step in another ACTIVE or
PAUSED_RECOVERY workflow. That check runs under a transaction-level advisory lock per tray
(docs/wcs-integration.md, "Tidy creation and the simulator"), so two creations for one tray cannot both pass it.

A source or target in a cordoned aisle or space (recovery/engine/cordons.py) refuses the creation with
SpaceCordoned, naming the cordon, before anything else is read or asked (docs/architecture.md §18).
"""

import logging
from dataclasses import dataclass

from django.db import connection, transaction

from recovery.engine import transaction as tx
from recovery.engine import wms_sql
from recovery.engine.cordons import CordonInForce, cordons_in_force
from recovery.engine.wcs import WcsSnapshotError, WcsVehicleSnapshotClient
from recovery.errors import Refused
from recovery.models import TidyWorkflow

log = logging.getLogger("recovery.creation")  # the logger's name as log readers know it


# --- refusals ------------------------------------------------------------------------------------


class CreationRefused(Refused):
    """Tidy creation refused: nothing was created."""


class InvalidMoves(CreationRefused):
    pass


class SpaceLocked(CreationRefused):
    def __init__(self, holders: list[tx.SpaceHolder]):
        self.holders = holders
        parts = [f"space {h.cargo_space_id} is locked by workflow {h.workflow_id}" if h.workflow_id
                 else f"space {h.cargo_space_id} was locked by another workflow" for h in holders]
        super().__init__("; ".join(parts) + " — nothing was created")


@dataclass(frozen=True)
class TrayHolder:
    """What holds a tray: an active job (job_id set) or an open tidy workflow (workflow_id set)."""

    tray_code: str
    job_id: str | None
    in_or_out: int | None
    job_status: int | None
    workflow_id: int | None
    workflow_status: str | None

    def __str__(self) -> str:
        if self.job_id is not None:
            return (f"tray {self.tray_code} has active job {self.job_id} "
                    f"(in_or_out {self.in_or_out}, status {self.job_status})")
        return f"tray {self.tray_code} is in tidy workflow {self.workflow_id} ({self.workflow_status})"


class TrayBusy(CreationRefused):
    """A tray to tidy is held by an active job or another open tidy workflow."""

    def __init__(self, holders: list[TrayHolder]):
        self.holders = holders
        self.trays = sorted({h.tray_code for h in holders})
        super().__init__("; ".join(str(h) for h in holders) + " — nothing was created")


class SpaceCordoned(CreationRefused):
    """A move's source or target is in a cordoned aisle or space (recovery/engine/cordons.py)."""

    def __init__(self, cordoned: dict[str, list[CordonInForce]]):
        self.cordoned = cordoned
        self.cordons = sorted({c for found in cordoned.values() for c in found}, key=lambda c: c.cordon_id)
        parts = [f"space {space} is cordoned: " + ", ".join(str(c) for c in found)
                 for space, found in sorted(cordoned.items())]
        super().__init__("; ".join(parts) + " — nothing was created")


class NoVehicleAvailable(CreationRefused):
    pass


class WcsUnavailable(CreationRefused):
    pass


# --- creation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TidyMove:
    tray_code: str
    source: str
    target: str


@dataclass(frozen=True)
class TidyCreation:
    workflow_id: int
    origin: str
    step_ids: tuple[int, ...]
    first_job_id: str
    locked_spaces: tuple[str, ...]
    vehicles_available: int | None = None  # MANUAL only: free vehicles in the snapshot


def _clean_moves(moves) -> list[TidyMove]:
    out = []
    if not moves:
        raise InvalidMoves("a tidy workflow needs at least one move")
    for n, mv in enumerate(moves, start=1):
        mv = mv if isinstance(mv, TidyMove) else TidyMove(*mv)
        for name in ("tray_code", "source", "target"):
            value = getattr(mv, name)
            if not isinstance(value, str) or not value.strip() or value != value.strip():
                raise InvalidMoves(f"move {n}: {name} must be a non-empty code without surrounding spaces")
        if mv.source == mv.target:
            raise InvalidMoves(f"move {n}: source and target are the same space {mv.source}")
        out.append(mv)
    return out


# --- the tray guard ---------------------------------------------------------------------------

# The first key of the two-key advisory locks tidy creation takes per tray ("TIDY" in ASCII).
TRAY_LOCK_NAMESPACE = 0x54494459


def lock_trays(trays) -> None:
    """Take the transaction-level advisory lock of each tray, in key order (no deadlock between
    two creations that share trays); held until the creation commits or rolls back."""
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.TRAY_LOCK_KEYS, {"trays": sorted(set(trays))})
        for (lock_key,) in cursor.fetchall():
            cursor.execute(wms_sql.LOCK_TRAY_KEY, {"namespace": TRAY_LOCK_NAMESPACE, "lock_key": lock_key})


def tray_holders(trays) -> list[TrayHolder]:
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.TRAY_HOLDERS, {"trays": sorted(set(trays))})
        return [TrayHolder(*row) for row in cursor.fetchall()]


def _check_trays_free(moves: list[TidyMove]) -> None:
    """Under the tray locks: refuse a tray that an active job or another open workflow holds.
    Read after the locks are granted, so it sees every creation that committed before."""
    trays = [mv.tray_code for mv in moves]
    lock_trays(trays)
    holders = tray_holders(trays)
    if holders:
        raise TrayBusy(holders)


def _check_against_wms(moves: list[TidyMove]) -> None:
    """Play the moves over the current spaces and stock (read under our space locks): each move's
    source must hold its tray with all its stock there, and its target must exist and be empty."""
    spaces = sorted({s for mv in moves for s in (mv.source, mv.target)})
    trays = sorted({mv.tray_code for mv in moves})
    with connection.cursor() as cursor:
        cursor.execute(wms_sql.CARGO_SPACES, {"spaces": spaces})
        holds = dict(cursor.fetchall())
        cursor.execute(wms_sql.TRAY_STOCK_SUMMARY, {"trays": trays})
        stock = {tray: (rows, locations) for tray, rows, locations in cursor.fetchall()}
    tray_at = {}
    for n, mv in enumerate(moves, start=1):
        for space in (mv.source, mv.target):
            if space not in holds:
                raise InvalidMoves(f"move {n}: unknown cargo space {space}")
        if mv.tray_code not in tray_at:
            rows, locations = stock.get(mv.tray_code, (0, []))
            if rows == 0:
                raise InvalidMoves(f"move {n}: tray {mv.tray_code} has no stock rows")
            if list(locations) != [mv.source]:
                raise InvalidMoves(f"move {n}: tray {mv.tray_code}'s stock is at {', '.join(locations)}, "
                                   f"not all at {mv.source}")
        if holds[mv.source] != mv.tray_code:
            raise InvalidMoves(f"move {n}: space {mv.source} holds {holds[mv.source] or 'no tray'}, "
                               f"not tray {mv.tray_code}")
        if holds[mv.target] is not None:
            raise InvalidMoves(f"move {n}: target space {mv.target} is not empty (holds {holds[mv.target]})")
        holds[mv.source], holds[mv.target] = None, mv.tray_code
        tray_at[mv.tray_code] = mv.target


def _check_not_cordoned(spaces: list[str]) -> None:
    """Refuse a source or target in a cordon in force (an aisle or the space itself)."""
    cordoned = cordons_in_force(spaces=spaces)
    if cordoned:
        raise SpaceCordoned(cordoned)


def create_tidy_workflow(*, origin: str, moves, snapshot_client: WcsVehicleSnapshotClient | None = None
                         ) -> TidyCreation:
    """Create an ACTIVE workflow with one step per move, lock every space it touches and create
    step 1's job, in one transaction; refuse the whole creation (nothing created) when a source or
    target is cordoned, a tray is held by an active job or another open workflow, a space is
    locked by another workflow, a move does not fit the WMS state, or (MANUAL) no vehicle is free."""
    if origin not in TidyWorkflow.Origin.values:
        raise InvalidMoves(f"origin must be one of {', '.join(TidyWorkflow.Origin.values)}, got {origin!r}")
    moves = _clean_moves(moves)
    spaces = sorted({s for mv in moves for s in (mv.source, mv.target)})
    # Before the vehicle snapshot: a cordoned place needs no vehicle to be refused. Every
    # creation (AUTOMATIC, MANUAL, the shell, the simulator) passes here.
    _check_not_cordoned(spaces)
    vehicles_available = None
    if origin == TidyWorkflow.Origin.MANUAL:
        # Outside the database transaction: never hold locks while waiting on WCS.
        client = snapshot_client or WcsVehicleSnapshotClient.from_settings()
        try:
            snapshot = client.fetch()
        except WcsSnapshotError as exc:
            raise WcsUnavailable(f"manual tidy refused: {exc}; nothing was created") from exc
        vehicles_available = len(snapshot.available)
        if not vehicles_available:
            raise NoVehicleAvailable(
                f"manual tidy refused: no vehicle is free ({len(snapshot.vehicles)} in the WCS snapshot, "
                "none available); nothing was created")
    with transaction.atomic():
        # Trays first, then spaces (both in a fixed order): a creation never waits for a tray
        # lock while holding a space lock, so two creations cannot deadlock.
        _check_trays_free(moves)
        workflow_id = tx.insert_workflow(origin=origin)
        holders = tx.lock_spaces(workflow_id=workflow_id, spaces=spaces)
        if holders:
            raise SpaceLocked(holders)
        _check_against_wms(moves)
        step_ids = tuple(
            tx.insert_step(workflow_id=workflow_id, step_no=no, tray_code=mv.tray_code, cargo_space_id=mv.source,
                           target_cargo_space_id=mv.target)
            for no, mv in enumerate(moves, start=1))
        first = moves[0]
        job_id = tx.create_step_job(workflow_id=workflow_id, step_id=step_ids[0], tray_code=first.tray_code,
                                    cargo_space_id=first.source, target_cargo_space_id=first.target)
    log.info("tidy workflow %s (%s) created: %d step(s), job %s", workflow_id, origin, len(step_ids), job_id)
    return TidyCreation(workflow_id, origin, step_ids, job_id, tuple(spaces), vehicles_available)
