"""TidyRecoveryEvidence: the immutable recovery projection of one workflow (docs/architecture.md §4).

It carries data only, plus the evidence terms (docs/architecture.md §4) as derived properties; the decision
logic lives in `recovery.engine.decisions`.
"""

import hashlib
import json
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from functools import cached_property
from operator import itemgetter

from django.db import connection, transaction

from recovery.engine import wms_sql
from recovery.engine.gc_pause import cyclic_gc_paused
from recovery.engine.prepared import run_prepared
from recovery.models import tidy_job_id

TIDY_MOVE = 28
ACTIVE_JOB_STATUSES = (1, 2, 3)
FINISHED_JOB_STATUS = 4


@dataclass(frozen=True)
class JobEvidence:
    """A row of mydo_job or mydo_job_finish with the deterministic id of the step."""

    job_id: str
    in_or_out: int | None
    status: int | None
    tray_code: str | None
    cargo_space_id: str | None
    target_cargo_space_id: str | None


@dataclass(frozen=True)
class StepEvidence:
    """One step of a workflow; in TidyRecoveryEvidence, the first incomplete step (lowest step_no
    not COMPLETED)."""

    step_id: int
    step_no: int
    status: str | None
    tray_code: str
    cargo_space_id: str
    target_cargo_space_id: str

    def matches(self, workflow_id: int, job: JobEvidence | None) -> bool:
        """Whether `job` is this step's deterministic tidy move, field for field."""
        return job is not None and (job.job_id, job.in_or_out, job.tray_code, job.cargo_space_id,
                                    job.target_cargo_space_id) == (
            tidy_job_id(workflow_id, self.step_id), TIDY_MOVE, self.tray_code, self.cargo_space_id,
            self.target_cargo_space_id)


class EvidenceTerms:
    """The evidence terms (docs/architecture.md §4), derived from the fields decide() reads; shared
    by the full evidence and the classification's slice of it."""

    __slots__ = ()

    @property
    def expected_job_id(self) -> str | None:
        return tidy_job_id(self.workflow_id, self.step.step_id) if self.step else None

    @property
    def stock_at_source_only(self) -> bool:
        """stock at X: the tray has at least one bas_stock row and every one is at X."""
        return self.stock_rows > 0 and self.stock_at_source == self.stock_rows

    @property
    def stock_at_target_only(self) -> bool:
        return self.stock_rows > 0 and self.stock_at_target == self.stock_rows

    @property
    def pre_move_state(self) -> bool:
        """Stock at source, source holds the tray, target does not hold it."""
        if self.step is None:
            return False
        return (
            self.stock_at_source_only
            and self.source_tray_code == self.step.tray_code
            and self.target_tray_code != self.step.tray_code
        )

    @property
    def terminal_state(self) -> bool:
        """Stock at target, source holds no tray, target holds the tray."""
        if self.step is None:
            return False
        return (
            self.stock_at_target_only
            and self.source_tray_code is None
            and self.target_tray_code == self.step.tray_code
        )

    def job_matches(self, job: JobEvidence) -> bool:
        """match (docs/architecture.md §4): job_id, in_or_out = 28, tray, source and target equal the step's."""
        step = self.step
        return (
            step is not None
            and job.in_or_out == TIDY_MOVE
            and job.tray_code == step.tray_code
            and job.cargo_space_id == step.cargo_space_id
            and job.target_cargo_space_id == step.target_cargo_space_id
            and job.job_id == tidy_job_id(self.workflow_id, step.step_id)
        )


@dataclass(frozen=True)
class TidyRecoveryEvidence(EvidenceTerms):
    workflow_id: int
    workflow_status: str
    origin: str
    lock_count: int
    step_count: int
    completed_step_count: int
    # active TDY-<workflowId>-* jobs; counted only when every step is COMPLETED (else 0)
    active_tidy_job_count: int
    step: StepEvidence | None
    active_job: JobEvidence | None
    finish_job: JobEvidence | None  # the newest, when several rows share the id
    finish_job_count: int
    stock_rows: int
    stock_at_source: int
    stock_at_target: int
    stock_locations: tuple[str, ...]
    source_exists: bool
    source_tray_code: str | None
    target_exists: bool
    target_tray_code: str | None
    # The active job's latest finish report from the WCS (none since an operator answered the step
    # on the floor): whether it named another tray or place than the step's, and what it named.
    finish_report_mismatch: bool = False
    finish_report_tray_code: str | None = None
    finish_report_location: str | None = None

    def job_mismatches(self, job: JobEvidence | None) -> list[str]:
        """Fields of `job` that differ from the step (empty when the job is a match)."""
        if job is None or self.step is None:
            return []
        expected = {
            "job_id": self.expected_job_id,
            "in_or_out": TIDY_MOVE,
            "tray_code": self.step.tray_code,
            "cargo_space_id": self.step.cargo_space_id,
            "target_cargo_space_id": self.step.target_cargo_space_id,
        }
        return [name for name, value in expected.items() if getattr(job, name) != value]

    # --- serialisation -------------------------------------------------------------------------

    def _as_dict(self) -> dict:
        """dataclasses.asdict(self), without its generic recursion and deep copies (every value
        here is immutable): it runs several times for each decision applied."""
        data = {name: getattr(self, name) for name in _EVIDENCE_FIELDS}
        for name in ("step", "active_job", "finish_job"):
            if data[name] is not None:
                data[name] = dict(vars(data[name]))
        return data

    def finish_job_json(self) -> dict | None:
        """as_json()["finish_job"], without building the rest."""
        return None if self.finish_job is None else dict(vars(self.finish_job))

    def as_json(self) -> dict:
        data = self._as_dict()
        data["stock_locations"] = list(self.stock_locations)
        data["expected_job_id"] = self.expected_job_id
        data["pre_move_state"] = self.pre_move_state
        data["terminal_state"] = self.terminal_state
        return data

    @cached_property  # writes the instance __dict__ directly, which a frozen dataclass allows
    def fingerprint(self) -> str:
        """A digest of the evidence; equal fingerprints mean nothing relevant changed."""
        canonical = json.dumps(self._as_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()


# The classification's StepEvidence and JobEvidence: the same fields, as plain named tuples, which
# the classification builds straight from a row's values (about five times faster than the
# dataclasses, 100,000 times a cycle at a large site).
ClassifiedStep = namedtuple("ClassifiedStep", [f.name for f in fields(StepEvidence)])
ClassifiedJob = namedtuple("ClassifiedJob", [f.name for f in fields(JobEvidence)])


class ClassificationEvidence(
    namedtuple("ClassificationEvidence", [
        "workflow_id", "workflow_status", "active_tidy_job_count", "step", "active_job", "finish_job",
        "finish_job_count", "stock_rows", "stock_at_source", "stock_at_target", "source_tray_code",
        "target_tray_code", "finish_report_mismatch"]),
    EvidenceTerms,
):
    """The fields of TidyRecoveryEvidence that decide() reads, and only those: what the recovery
    cycle's classification reads of every active workflow (classification.sql). Each field holds
    what the full evidence's field of the same name holds (`step` a ClassifiedStep, the jobs
    ClassifiedJobs), so decide() gives both the same decision; a workflow needing one is re-read
    in full under its row lock before anything changes (docs/architecture.md §4)."""

    __slots__ = ()

    @classmethod
    def of(cls, evidence: TidyRecoveryEvidence) -> "ClassificationEvidence":
        """The part of the full evidence the classification reads."""
        def plain(row, kind):
            return None if row is None else kind(*(getattr(row, name) for name in kind._fields))
        return cls(*(plain(evidence.step, ClassifiedStep) if name == "step" else
                     plain(getattr(evidence, name), ClassifiedJob) if name in ("active_job", "finish_job") else
                     getattr(evidence, name) for name in cls._fields))


def _frozen(cls, values: dict):
    """Build a frozen dataclass from a dict holding every one of its fields, without the
    generated __init__ (one dict update instead of a guarded setattr per field, about 15 times
    faster): the classification builds tens of thousands of these per cycle."""
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


_EVIDENCE_FIELDS = tuple(f.name for f in fields(TidyRecoveryEvidence))
_JOB_FIELDS = tuple(f.name for f in fields(JobEvidence))
_JOB_KEYS = {prefix: tuple(f"{prefix}_{name}" for name in _JOB_FIELDS) for prefix in ("active", "finish")}
_STEP_KEYS = {"step_id": "step_id", "step_no": "step_no", "status": "step_status", "tray_code": "tray_code",
              "cargo_space_id": "cargo_space_id", "target_cargo_space_id": "target_cargo_space_id"}
_EVIDENCE_KEYS = {
    "workflow_id": "workflow_id", "workflow_status": "workflow_status", "origin": "origin",
    "lock_count": "lock_count", "step_count": "step_count", "completed_step_count": "completed_step_count",
    "active_tidy_job_count": "active_tidy_job_count", "finish_job_count": "finish_count",
    "stock_rows": "stock_rows", "stock_at_source": "stock_at_source", "stock_at_target": "stock_at_target",
    "source_exists": "source_exists", "source_tray_code": "source_tray_code",
    "target_exists": "target_exists", "target_tray_code": "target_tray_code",
    "finish_report_mismatch": "finish_report_mismatch", "finish_report_tray_code": "finish_report_tray_code",
    "finish_report_location": "finish_report_location",
}


def _job(row: dict, prefix: str) -> JobEvidence | None:
    keys = _JOB_KEYS[prefix]
    if row[keys[0]] is None:
        return None
    return _frozen(JobEvidence, dict(zip(_JOB_FIELDS, (row[key] for key in keys), strict=True)))


def evidence_from_row(row: dict) -> TidyRecoveryEvidence:
    """One row of the evidence query as TidyRecoveryEvidence."""
    values = {name: row[column] for name, column in _EVIDENCE_KEYS.items()}
    values["step"] = (None if row["step_id"] is None else
                      _frozen(StepEvidence, {name: row[column] for name, column in _STEP_KEYS.items()}))
    values["active_job"] = _job(row, "active")
    values["finish_job"] = _job(row, "finish")
    values["stock_locations"] = tuple(row["stock_locations"])
    return _frozen(TidyRecoveryEvidence, values)


def evidence_row_reader(columns: list[str]) -> Callable[[tuple], TidyRecoveryEvidence]:
    """evidence_from_row for rows as tuples in `columns` order: the columns' positions are
    looked up once per query instead of a dict being built, and read by name, for every row."""
    at = {name: i for i, name in enumerate(columns)}
    evidence_names, evidence_values = tuple(_EVIDENCE_KEYS), itemgetter(*(at[c] for c in _EVIDENCE_KEYS.values()))
    step_names, step_values, step_id_at = tuple(_STEP_KEYS), itemgetter(*(at[c] for c in _STEP_KEYS.values())), \
        at["step_id"]
    jobs = tuple((name, at[keys[0]], itemgetter(*(at[key] for key in keys)))
                 for name, keys in (("active_job", _JOB_KEYS["active"]), ("finish_job", _JOB_KEYS["finish"])))
    locations_at = at["stock_locations"]

    def read(row: tuple) -> TidyRecoveryEvidence:
        values = dict(zip(evidence_names, evidence_values(row), strict=True))
        values["step"] = (None if row[step_id_at] is None else
                          _frozen(StepEvidence, dict(zip(step_names, step_values(row), strict=True))))
        for name, id_at, job_values in jobs:
            values[name] = (None if row[id_at] is None else
                            _frozen(JobEvidence, dict(zip(_JOB_FIELDS, job_values(row), strict=True))))
        values["stock_locations"] = tuple(row[locations_at])
        return _frozen(TidyRecoveryEvidence, values)

    return read


def classification_row_reader(columns: list[str]) -> Callable[[tuple], ClassificationEvidence]:
    """A row of classification.sql (tuples in `columns` order) as ClassificationEvidence: the
    columns' positions are looked up once per query, and each row becomes its named tuples with
    no per-field Python code (the classification reads 100,000 rows and more)."""
    at = {name: i for i, name in enumerate(columns)}
    names = ClassificationEvidence._fields
    split = names.index("step"), names.index("finish_job") + 1
    head = itemgetter(*(at[_EVIDENCE_KEYS[name]] for name in names[:split[0]]))
    tail = itemgetter(*(at[_EVIDENCE_KEYS[name]] for name in names[split[1]:]))
    step_at, step_values = at["step_id"], itemgetter(*(at[c] for c in _STEP_KEYS.values()))
    (active_at, active_values), (finish_at, finish_values) = (
        (at[keys[0]], itemgetter(*(at[key] for key in keys))) for keys in (_JOB_KEYS["active"], _JOB_KEYS["finish"]))
    new = tuple.__new__

    def read(row: tuple) -> ClassificationEvidence:
        return new(ClassificationEvidence, (
            *head(row),
            None if row[step_at] is None else new(ClassifiedStep, step_values(row)),
            None if row[active_at] is None else new(ClassifiedJob, active_values(row)),
            None if row[finish_at] is None else new(ClassifiedJob, finish_values(row)),
            *tail(row),
        ))

    return read


def evidence_from_json(data: dict) -> TidyRecoveryEvidence:
    """Rebuild evidence journaled by `as_json` (derived keys are ignored)."""
    names = {f.name for f in fields(TidyRecoveryEvidence)}
    values = {k: v for k, v in data.items() if k in names}
    values["step"] = StepEvidence(**data["step"]) if data.get("step") else None
    values["active_job"] = JobEvidence(**data["active_job"]) if data.get("active_job") else None
    values["finish_job"] = JobEvidence(**data["finish_job"]) if data.get("finish_job") else None
    values["stock_locations"] = tuple(data.get("stock_locations", ()))
    return TidyRecoveryEvidence(**values)


def _fetch(sql: str, params: dict | None) -> list[TidyRecoveryEvidence]:
    with connection.cursor() as cursor, cyclic_gc_paused():
        cursor.execute(sql, params)
        read = evidence_row_reader([col.name for col in cursor.description])
        return [read(row) for row in cursor.fetchall()]


def evidence_for_active_workflows() -> list[TidyRecoveryEvidence]:
    """The full evidence of every ACTIVE workflow, oldest first (the replay's view of what is
    pending; the recovery cycle classifies with stream_classification instead)."""
    return _fetch(wms_sql.evidence_for_active_workflows(), None)


# Rows per chunk of the classification's stream: libpq holds one chunk at a time (a few hundred
# kB at this size), and more rows per chunk buy no speed.
_STREAM_CHUNK = 2000


def stream_classification(*, shard: int | None = None, shard_count: int = 1,
                          id_range: tuple[int, int] | None = None) -> Iterator[ClassificationEvidence]:
    """What decide() reads of every ACTIVE workflow (or of one shard of them, and of those only
    the ids from, to of `id_range`, both included), oldest first,
    streamed: the query runs as an ordinary statement whose rows libpq hands over a chunk at a
    time (psycopg's `stream`, libpq's chunked-rows mode), so a cycle holds one chunk of rows
    instead of the whole active set, without a server-side cursor's FETCH round trips and
    portal (docs/architecture.md §4). Runs in its own read transaction, which ends when the
    iteration does: read it to the end before starting another transaction."""
    sql = wms_sql.classification(sharded=shard is not None, ranged=id_range is not None)
    params = {}
    if shard is not None:
        params.update(shard=shard, shard_count=shard_count)
    if id_range is not None:
        params.update(from_id=id_range[0], to_id=id_range[1])
    with transaction.atomic(), cyclic_gc_paused(), connection.cursor() as cursor:
        cursor.execute(wms_sql.CLASSIFICATION_SETTINGS)
        rows = cursor.cursor.stream(sql, params or None, size=_STREAM_CHUNK)  # the driver's own cursor
        try:
            first = next(rows, None)
            if first is None:
                return
            read = classification_row_reader([col.name for col in cursor.cursor.description])
            yield read(first)
            yield from map(read, rows)
        finally:
            # A reader that stops early: the driver cancels the query and drains what was
            # sent, so the transaction can roll back on a connection that is idle again.
            rows.close()


def evidence_for_workflows(workflow_ids: Iterable[int]) -> list[TidyRecoveryEvidence]:
    return _fetch(wms_sql.evidence_for_workflows(), {"workflow_ids": list(workflow_ids)})


def evidence_for_workflow(workflow_id: int) -> TidyRecoveryEvidence | None:
    """One workflow's evidence, prepared with a generic plan (recovery.engine.prepared): callbacks,
    recovery, the repair flow and the console's workflow page run it per workflow, and planning
    the statement afresh cost more than running it."""
    return evidence_from_result(*run_prepared(wms_sql.evidence_for_one_workflow(), {"workflow_id": workflow_id}))


def evidence_for_workflow_under_lock(workflow_id: int) -> TidyRecoveryEvidence | None:
    """The same read, for a caller holding the workflow row lock inside a transaction."""
    return evidence_for_workflow(workflow_id)


def evidence_from_result(columns: list[str], rows: list[tuple]) -> TidyRecoveryEvidence | None:
    """The one workflow's evidence from the evidence query's result (column names, rows)."""
    return evidence_from_row(dict(zip(columns, rows[0], strict=True))) if rows else None
