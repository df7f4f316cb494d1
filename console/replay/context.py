"""What a scenario works with: its result (expected sequence, checks, final state, timeline),
run-scoped fixtures through the mutation journal, the shared processes, and reads of the state
of its own workflows."""

import json
import threading
import time
import traceback
from dataclasses import dataclass, field

from django.db import connection
from django.utils import timezone

from console.replay import database as sql
from console.replay.journal import MutationJournal, Timeline
from console.replay.processes import Child, Processes, ReplayTimeout
from recovery.engine import wms_sql
from recovery.engine.creation import TidyMove, create_tidy_workflow
from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import decide
from recovery.engine.evidence import evidence_for_active_workflows
from recovery.engine.wcs import HttpFailure, WcsVehicleSnapshotClient, http_request
from recovery.errors import TidyError
from recovery.models import RecoveryCycle, tidy_job_id

REPLAY_PURPOSE = "replay-wcs-callback"

@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class ScenarioResult:
    name: str
    title: str
    window: str  # the failure window or restart case the scenario exercises
    expected: list[str]
    status: str = "not run"  # passed | failed | not available | not run
    checks: list[Check] = field(default_factory=list)
    observed: list[str] = field(default_factory=list)
    final_state: dict = field(default_factory=dict)
    timeline: Timeline = field(default_factory=Timeline)
    workflows: list[int] = field(default_factory=list)
    error: str = ""
    started_at: object = None
    finished_at: object = None
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass
class Created:
    workflow_id: int
    step_ids: tuple[int, ...]
    moves: list[TidyMove]
    stock_before: list[dict]

    def job(self, index: int) -> str:
        return tidy_job_id(self.workflow_id, self.step_ids[index])

    @property
    def jobs(self) -> list[str]:
        return [self.job(i) for i in range(len(self.step_ids))]


class ScenarioFailed(TidyError):
    """A step of the scenario could not be carried out (distinct from a failed check)."""


@dataclass
class RunState:
    """What every scenario of one run shares."""

    run_id: str
    profile: str
    journal: MutationJournal
    procs: Processes
    snapshot_url: str
    token: str
    web_port: int | None = None
    web: Child | None = None
    qcluster: Child | None = None
    workflows: set[int] = field(default_factory=set)
    _space_no: int = 0
    _tray_no: int = 0

    @property
    def prefix(self) -> str:
        return f"RP{self.run_id.upper()}-"


class ScenarioContext:
    def __init__(self, run: RunState, result: ScenarioResult):
        self.run = run
        self.result = result
        self.journal = run.journal
        self.procs = run.procs

    # --- recording ----------------------------------------------------------------------------

    def note(self, what: str, **detail) -> None:
        self.result.timeline.add(what, **detail)

    def observe(self, text: str) -> None:
        self.result.observed.append(text)
        self.note(f"observed: {text}")

    def check(self, name: str, passed: bool, detail="") -> bool:
        if not isinstance(detail, str):
            detail = json.dumps(detail, default=str)
        self.result.checks.append(Check(name, bool(passed), detail))
        self.note(("check passed: " if passed else "CHECK FAILED: ") + name, detail=detail[:500])
        return bool(passed)

    def equal(self, name: str, actual, expected) -> bool:
        return self.check(name, actual == expected, f"expected {expected!r}, got {actual!r}")

    # --- run-scoped fixtures ------------------------------------------------------------------

    def moves(self, n: int) -> list[TidyMove]:
        """n trays with two stock rows each in their own source space, and n empty targets."""
        run = self.run
        trays, sources, targets = [], [], []
        for _ in range(n):
            run._tray_no += 1
            trays.append(f"{run.prefix}T{run._tray_no:03d}")
            run._space_no += 1
            sources.append(f"{run.prefix}S{run._space_no:03d}")
            run._space_no += 1
            targets.append(f"{run.prefix}S{run._space_no:03d}")
        self.journal.execute(sql.INSERT_SPACES, {"spaces": sources + targets, "trays": trays + [None] * n},
                             why=f"run-scoped cargo spaces for {self.result.name}: {n} source(s) holding their "
                                 f"tray, {n} empty target(s)")
        stock_trays = [t for t in trays for _ in range(2)]
        self.journal.execute(sql.INSERT_STOCK, {"trays": stock_trays, "spaces": [s for s in sources for _ in range(2)],
                                            "skus": ["REPLAY-BOLT", "REPLAY-NUT"] * n, "qtys": [12, 30] * n},
                             why="two stock rows per run-scoped tray, booked at its source")
        return [TidyMove(t, s, g) for t, s, g in zip(trays, sources, targets, strict=True)]

    def create_workflow(self, *, steps: int = 2, origin: str = "AUTOMATIC") -> Created:
        moves = self.moves(steps)
        client = WcsVehicleSnapshotClient(self.run.snapshot_url, 3000) if origin == "MANUAL" else None
        created = create_tidy_workflow(origin=origin, moves=moves, snapshot_client=client)
        self.run.workflows.add(created.workflow_id)
        self.result.workflows.append(created.workflow_id)
        self.journal.record(kind="service", why=f"the tidy under test in {self.result.name}",
                            call=f"recovery.engine.creation.create_tidy_workflow(origin={origin!r}, "
                                 f"moves={len(moves)})",
                            result={"workflow_id": created.workflow_id, "first_job": created.first_job_id,
                                    "vehicles_available": created.vehicles_available})
        self.note(f"created {origin} workflow {created.workflow_id} ({steps} steps); job {created.first_job_id} "
                  "status 1, step 1 DISPATCHED, spaces locked", actor="wms (lifecycle service)")
        stock = self.state([created.workflow_id])["stock"]
        return Created(created.workflow_id, created.step_ids, moves, stock)

    def complete_move_in_wms(self, created: Created, index: int, why: str) -> None:
        self.journal.execute(wms_sql.COMPLETE_MOVE_JOB, {"job_id": created.job(index)}, why=why)
        self.note(f"fixture: alg.usp_complete_move_job({created.job(index)}) without advancing the step")

    # --- processes ----------------------------------------------------------------------------

    def ensure_web(self, *, wait: bool = True) -> Child:
        run = self.run
        if run.web is None or not run.web.alive():
            run.web = self.procs.start_web("web", port=run.web_port, wait=wait)
            run.web_port = run.web.port
        return run.web

    def ensure_wms(self) -> None:
        """The WMS running: web server and a qcluster (started, with its start-up cycle, if needed)."""
        web = self.ensure_web(wait=False)
        if self.run.qcluster is None or not self.run.qcluster.alive():
            self.start_qcluster()
        self.procs.wait_http(web, timeout=30)

    def restart_wms(self) -> RecoveryCycle:
        """Start the web server and the qcluster side by side; return the qcluster's start-up cycle."""
        web = self.ensure_web(wait=False)
        cycle = self.start_qcluster()
        self.procs.wait_http(web, timeout=30)
        return cycle

    def stop_wms(self) -> None:
        """Stop the WMS: in the short profile abruptly (SIGKILL, as a crash), else with SIGTERM."""
        for attr in ("qcluster", "web"):
            child = getattr(self.run, attr)
            if child is None:
                continue
            if self.run.profile == "short":
                self.procs.kill(child, why="WMS stopped")
            else:
                self.procs.stop(child, grace=10.0)
            setattr(self.run, attr, None)
        self.note("WMS stopped (web server and qcluster)")

    def stop_web(self) -> None:
        if self.run.web is not None:
            self.procs.stop(self.run.web)
            self.run.web = None

    def stop_qcluster(self) -> None:
        if self.run.qcluster is not None:
            self.procs.stop(self.run.qcluster, grace=10.0)
            self.run.qcluster = None

    def kill_qcluster(self, why: str) -> None:
        if self.run.qcluster is not None:
            self.procs.kill(self.run.qcluster, why=why)
            self.run.qcluster = None

    def start_qcluster(self, *, faults: str | None = None, wait_startup: bool = True,
                       name: str = "qcluster", extra_env: dict | None = None) -> RecoveryCycle | None:
        """Start a qcluster (stopping the running one) and wait for its start-up cycle."""
        self.stop_qcluster()
        self.run.qcluster = self.procs.start_qcluster(name, faults=faults, extra_env=extra_env)
        if wait_startup:
            return self.procs.wait_startup_cycle(self.run.qcluster)
        return None

    def settle(self) -> None:
        """Decide, with one in-process cycle, every workflow outside this scenario that a cycle
        would change, so fault points reached by the scenario's processes are reached only for
        the scenario's own workflows."""
        mine = set(self.result.workflows)
        pending = [e.workflow_id for e in evidence_for_active_workflows()
                   if e.workflow_id not in mine and decide(e).changes_state]
        if not pending:
            return
        report = run_cycle(trigger=RecoveryCycle.Trigger.MANUAL, worker=f"replay-settle:{self.run.run_id}")
        self.journal.record(kind="recovery-cycle", why="settle workflows outside the scenario before fault points "
                            f"are armed ({len(pending)} needed a decision)", call="recovery.engine.cycle.run_cycle()",
                            result=report.summary())
        self.note(f"settled {len(pending)} workflow(s) outside the scenario: {report.summary()}")

    # --- WCS requests made by the replay (as WCS) ----------------------------------------------

    def wcs_post(self, endpoint: str, body: dict, *, port: int | None = None, timeout_ms: int = 10000,
                 note: str = "") -> tuple[int | None, dict | str]:
        port = port or self.run.web_port
        url = f"http://127.0.0.1:{port}/api/wcs/{endpoint}"
        try:
            answer = http_request("POST", url, purpose=REPLAY_PURPOSE, timeout_ms=timeout_ms,
                                  body=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json",
                                           "Authorization": f"Bearer {self.run.token}"})
        except HttpFailure as exc:
            self.note(f"WCS -> {endpoint} {body}: no answer ({exc})" + (f" [{note}]" if note else ""), actor="wcs")
            return None, str(exc)
        try:
            data = json.loads(answer.body)
        except ValueError:
            data = answer.body.decode(errors="replace")
        outcome = data.get("outcome") if isinstance(data, dict) else None
        self.note(f"WCS -> {endpoint} {body}: {answer.status} {outcome}" + (f" [{note}]" if note else ""),
                  actor="wcs", message=data.get("message") if isinstance(data, dict) else data)
        return answer.status, data

    def finish(self, job_id: str, **kw) -> tuple[int | None, dict | str]:
        event_id = kw.pop("event_id", f"replay-{job_id}-finish")
        identity = {name: kw.pop(name) for name in ("tray_code", "location") if name in kw}
        return self.wcs_post("job-finish", {"job_id": job_id, "stage": "MOVE_FINISHED", "event_id": event_id,
                                            **identity}, **kw)

    def report_status(self, job_id: str, status: int, **kw) -> tuple[int | None, dict | str]:
        return self.wcs_post("job-status", {"job_id": job_id, "status": status,
                                            "event_id": f"replay-{job_id}-status-{status}"}, **kw)

    def in_thread(self, fn, *args, **kw) -> tuple[threading.Thread, dict]:
        """Run fn in a thread with its own database connection; the dict gets 'result' or 'error'."""
        box: dict = {}

        def target():
            try:
                box["result"] = fn(*args, **kw)
            except Exception as exc:  # noqa: BLE001 - reported by the scenario
                box["error"] = exc
                box["traceback"] = traceback.format_exc()
            finally:
                connection.close()

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread, box

    # --- reading state --------------------------------------------------------------------------

    def state(self, workflow_ids: list[int] | None = None) -> dict:
        wids = list(workflow_ids if workflow_ids is not None else self.result.workflows)
        with connection.cursor() as cursor:
            cursor.execute(sql.STEPS_OF_WORKFLOWS, {"w": wids})
            steps = cursor.fetchall()
            params = {"w": wids, "jobs": [tidy_job_id(w, s) for s, w, *_ in steps],
                      "trays": sorted({r[2] for r in steps}), "spaces": sorted({x for r in steps for x in r[3:5]})}
            out = {}
            for name, statement in sql.STATE_QUERIES.items():
                cursor.execute(statement, params)
                # Django's psycopg adapter hands jsonb over as text.
                out[name] = [json.loads(r[0]) if isinstance(r[0], str) else r[0] for r in cursor.fetchall()]
        return out

    def workflow_status(self, workflow_id: int) -> tuple[str, str | None]:
        with connection.cursor() as cursor:
            cursor.execute(sql.WORKFLOW_STATUS, {"w": workflow_id})
            return cursor.fetchone()

    def wait_until(self, what: str, predicate, *, timeout: float = 60.0, every: float = 0.1):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                self.note(f"reached: {what}")
                return value
            time.sleep(every)
        raise ReplayTimeout(f"not reached within {timeout} s: {what}")

    def now(self):
        return timezone.now()
