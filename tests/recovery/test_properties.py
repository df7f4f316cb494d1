"""Property-based (Hypothesis stateful): a small warehouse where tidy creation, WCS status reports,
finish callbacks, duplicate callbacks, recovery cycles, crashes (transactions rolled back at a
fault point), WMS-local damage (a move archived without its advance, a lost job) and operator
repairs interleave in any order. After every step:

- one inventory move per finished job: every tray that moved is explained by exactly one new
  archived finish row (same tray, from where it was to where it is), and every new archived
  row moved its tray; no job id is archived twice;
- one event per (workflow, step, job, stage), and a finishing event only for a COMPLETED step;
- recovery and callbacks never release a lock of (or un-pause) a PAUSED_RECOVERY workflow;
- no COMPLETED step or workflow regresses;
- no space is held by two workflows, and every open step's spaces are held by its own workflow.
"""

import json
import os
import uuid
from contextlib import contextmanager, suppress

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from console import repair
from console.api import parsing
from console.repair.registry import RepairAction
from console.roles import OPERATOR
from recovery.demo.warehouse import WarehouseBuilder, truncate_wms_tables
from recovery.engine import callbacks, creation
from recovery.engine.creation import CreationRefused, TidyMove
from recovery.engine.cycle import run_cycle
from recovery.engine.evidence import evidence_for_workflow
from recovery.engine.faults import FaultInjected
from tests.wms_state import snapshot

FINISHING_STAGES = ("MOVE_FINISHED", "OUTBOUND_FINISHED", "RECOVERY_FINISHED")


def _rows(sql: str, params: dict | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@contextmanager
def faults(spec: str):
    previous = os.environ.get("TIDY_FAULTS")
    os.environ["TIDY_FAULTS"] = spec
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TIDY_FAULTS", None)
        else:
            os.environ["TIDY_FAULTS"] = previous


def _finish_body(job_id: str) -> bytes:
    return json.dumps({"job_id": job_id, "stage": "MOVE_FINISHED", "event_id": f"p-{job_id}"}).encode()


class Warehouse(RuleBasedStateMachine):
    operator: User = None

    def __init__(self):
        super().__init__()
        truncate_wms_tables()
        builder = WarehouseBuilder(prefix="P")
        for _ in range(5):
            builder.stocked_tray(sku_count=2)
        for _ in range(5):
            builder.add_space(None)
        self.sent_finishes: list[str] = []
        self.repaired = None
        self._remember()

    # --- what the invariants compare against ------------------------------------------------------

    def _tray_locations(self) -> dict[str, str | None]:
        locations = {}
        for tray, spaces in _rows("SELECT tray_code, array_agg(DISTINCT cargo_space_id) FROM bas_stock "
                                  "GROUP BY tray_code"):
            assert len(spaces) == 1, f"tray {tray}'s stock is split over {spaces}"
            locations[tray] = spaces[0]
        return locations

    def _remember(self) -> None:
        self.locations = self._tray_locations()
        self.finish_ids = {r[0] for r in _rows("SELECT finish_id FROM mydo_job_finish")}
        self.completed_steps = {r[0] for r in _rows("SELECT step_id FROM alg.tidy_step WHERE status = 'COMPLETED'")}
        self.completed_workflows = {r[0] for r in _rows(
            "SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'COMPLETED'")}
        self.paused_locks = {w: locks for w, locks in _rows(
            "SELECT w.workflow_id, array_agg(l.lock_id ORDER BY l.lock_id) FILTER (WHERE l.lock_id IS NOT NULL) "
            "FROM alg.tidy_workflow AS w LEFT JOIN alg.tidy_space_lock AS l USING (workflow_id) "
            "WHERE w.status = 'PAUSED_RECOVERY' GROUP BY w.workflow_id")}
        self.repaired = None

    # --- picking --------------------------------------------------------------------------------------

    def _active_jobs(self) -> list[str]:
        return [r[0] for r in _rows("SELECT job_id FROM mydo_job ORDER BY job_id")]

    def _pick(self, data, items: list, label: str):
        return data.draw(st.sampled_from(items), label=label) if items else None

    # --- rules ----------------------------------------------------------------------------------------

    @initialize()
    def two_tidies_under_way(self):
        self.create_tidy(steps=2)
        self.create_tidy(steps=1)
        self.every_invariant_holds()

    @rule(steps=st.integers(min_value=1, max_value=2))
    def create_tidy(self, steps):
        unlocked = "NOT EXISTS (SELECT 1 FROM alg.tidy_space_lock AS l WHERE l.cargo_space_id = c.cargo_space_id)"
        free = _rows("SELECT c.cargo_space_id, c.tray_code FROM bas_cargo_space AS c WHERE c.tray_code IS NOT NULL "
                     f"AND {unlocked} ORDER BY c.cargo_space_id LIMIT %(n)s", {"n": steps})
        empty = _rows("SELECT c.cargo_space_id FROM bas_cargo_space AS c WHERE c.tray_code IS NULL "
                      f"AND {unlocked} "
                      "AND NOT EXISTS (SELECT 1 FROM bas_stock AS b WHERE b.cargo_space_id = c.cargo_space_id) "
                      "ORDER BY c.cargo_space_id LIMIT %(n)s", {"n": steps})
        moves = [TidyMove(tray, source, target) for (source, tray), (target,) in zip(free, empty, strict=False)]
        if not moves:
            return
        with suppress(CreationRefused):  # e.g. a move does not fit the WMS state: nothing was created
            creation.create_tidy_workflow(origin="AUTOMATIC", moves=moves)

    @rule(data=st.data(), status=st.sampled_from([2, 3]))
    def report_status(self, data, status):
        job = self._pick(data, self._active_jobs(), "job")
        if job:
            body = json.dumps({"job_id": job, "status": status}).encode()
            callbacks.job_status_process(request=parsing.parse_job_status(body))

    @rule(data=st.data())
    def finish_callback(self, data):
        job = self._pick(data, self._active_jobs(), "job")
        if job:
            callbacks.job_finish_process(request=parsing.parse_job_finish(_finish_body(job)))
            self.sent_finishes.append(job)

    @rule(data=st.data())
    def duplicate_callback(self, data):
        job = self._pick(data, self.sent_finishes, "sent job")
        if job:
            callbacks.job_finish_process(request=parsing.parse_job_finish(_finish_body(job)))

    @rule()
    def recovery_cycle(self):
        report = run_cycle()
        assert report.succeeded
        for action in report.decisions:
            event(f"recovery applied {action}")

    @rule(data=st.data())
    def crash_inside_callback(self, data):
        job = self._pick(data, self._active_jobs(), "job")
        if not job:
            return
        before = snapshot()
        with faults("advance.MOVE_FINISHED:raise"):
            try:
                callbacks.job_finish_process(request=parsing.parse_job_finish(_finish_body(job)))
            except FaultInjected:
                assert snapshot() == before, "a callback crashed inside its transaction left changes behind"

    @rule()
    def crash_inside_recovery(self):
        before = snapshot()
        with faults("advance.RECOVERY_FINISHED:raise,recovery.before_commit:raise"):
            report = run_cycle()
        assert report.succeeded
        assert snapshot() == before, "recovery transactions that crashed left changes behind"

    @rule(data=st.data())
    def move_archived_without_advance(self, data):
        """A process died after alg.usp_complete_move_job committed but before the step advanced."""
        job = self._pick(data, self._active_jobs(), "job")
        if job:
            evidence = evidence_for_workflow(int(job.split("-")[1]))
            if evidence is not None and evidence.pre_move_state and evidence.expected_job_id == job:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT alg.usp_complete_move_job(%(j)s)", {"j": job})

    @rule(data=st.data())
    def job_lost(self, data):
        job = self._pick(data, self._active_jobs(), "job")
        if job:
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM mydo_job WHERE job_id = %(j)s", {"j": job})

    @rule(data=st.data())
    def operator_repair(self, data):
        paused = [r for r in _rows("SELECT workflow_id, pause_reason FROM alg.tidy_workflow "
                                   "WHERE status = 'PAUSED_RECOVERY' ORDER BY workflow_id")]
        picked = self._pick(data, paused, "paused workflow")
        if not picked:
            return
        workflow_id, reason = picked
        if reason == "RECOVERY_JOB_MISSING":
            action, code = RepairAction.REISSUE, "JOB_LOST_AT_RESTART"
        else:
            action, code = RepairAction.RECHECK, "WMS_RECORDS_FIXED"
        evidence = evidence_for_workflow(workflow_id)
        step = evidence.step  # a re-issue's floor scans: the tray found at the step's source
        request = repair.RepairRequest(action=action, workflow_id=workflow_id, reason_code=code,
                                       reason_text="Property test: the operator repairs the workflow.",
                                       tray_code=step.tray_code if step else "",
                                       space_code=step.cargo_space_id if step else "")
        self.repaired = workflow_id
        with suppress(repair.RepairRefused):  # refused (and audited) when the evidence does not allow it
            repair.repair_apply(user=self.operator, request=request, previewed_fingerprint=evidence.fingerprint,
                                idempotency_key=uuid.uuid4().hex)

    # --- invariants -------------------------------------------------------------------------------------

    def one_inventory_move_per_finished_job(self):
        now = self._tray_locations()
        new_rows = _rows("SELECT finish_id, job_id, tray_code, cargo_space_id, target_cargo_space_id "
                         "FROM mydo_job_finish WHERE NOT (finish_id = ANY (%(seen)s::bigint[]))",
                         {"seen": list(self.finish_ids)})
        moved = {tray: (self.locations.get(tray), where) for tray, where in now.items()
                 if self.locations.get(tray) != where}
        explained = {tray: (source, target) for _, _, tray, source, target in new_rows}
        assert len(explained) == len(new_rows), f"one tray archived twice in one step: {new_rows}"
        assert moved == explained, f"trays moved {moved} but new archived jobs say {explained}"
        twice = _rows("SELECT job_id FROM mydo_job_finish GROUP BY job_id HAVING count(*) > 1")
        assert twice == [], f"jobs archived twice: {twice}"
        unarchived = _rows(
            "SELECT s.step_id FROM alg.tidy_step AS s WHERE s.status = 'COMPLETED' AND NOT EXISTS ("
            "SELECT 1 FROM mydo_job_finish AS f WHERE f.job_id = 'TDY-' || s.workflow_id || '-' || s.step_id)")
        assert unarchived == [], f"steps COMPLETED without their move archived: {unarchived}"

    def one_event_per_identity(self):
        dup = _rows("SELECT workflow_id, step_id, job_id, stage FROM alg.tidy_callback_event "
                    "GROUP BY 1, 2, 3, 4 HAVING count(*) > 1")
        assert dup == [], f"duplicate events: {dup}"
        orphan = _rows("SELECT e.event_id, e.stage, s.status FROM alg.tidy_callback_event AS e "
                       "JOIN alg.tidy_step AS s USING (step_id) "
                       "WHERE e.stage = ANY (%(stages)s) AND s.status <> 'COMPLETED'",
                       {"stages": list(FINISHING_STAGES)})
        assert orphan == [], f"finishing events for steps that are not COMPLETED: {orphan}"

    def paused_workflows_keep_their_locks(self):
        for workflow_id, locks in self.paused_locks.items():
            if workflow_id == self.repaired:
                continue  # an operator may resume (and so change) the workflow it repairs
            status = _rows("SELECT status FROM alg.tidy_workflow WHERE workflow_id = %(w)s", {"w": workflow_id})
            assert status == [("PAUSED_RECOVERY",)], f"workflow {workflow_id} left PAUSED_RECOVERY without a repair"
            now = [r[0] for r in _rows("SELECT lock_id FROM alg.tidy_space_lock WHERE workflow_id = %(w)s "
                                       "ORDER BY lock_id", {"w": workflow_id})]
            assert now == (locks or []), f"paused workflow {workflow_id} lost locks: {locks} -> {now}"

    def nothing_completed_regresses(self):
        steps = {r[0] for r in _rows("SELECT step_id FROM alg.tidy_step WHERE status = 'COMPLETED'")}
        assert self.completed_steps <= steps, f"steps no longer COMPLETED: {self.completed_steps - steps}"
        workflows = {r[0] for r in _rows("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'COMPLETED'")}
        assert self.completed_workflows <= workflows

    def no_space_held_twice(self):
        held = _rows("SELECT cargo_space_id FROM alg.tidy_space_lock GROUP BY 1 HAVING count(DISTINCT workflow_id) > 1")
        assert held == []
        unheld = _rows(
            "SELECT s.step_id, x.space FROM alg.tidy_step AS s "
            "JOIN alg.tidy_workflow AS w USING (workflow_id) "
            "CROSS JOIN LATERAL (VALUES (s.cargo_space_id), (s.target_cargo_space_id)) AS x (space) "
            "WHERE w.status IN ('ACTIVE', 'PAUSED_RECOVERY') AND s.status <> 'COMPLETED' "
            "AND NOT EXISTS (SELECT 1 FROM alg.tidy_space_lock AS l "
            "                WHERE l.cargo_space_id = x.space AND l.workflow_id = s.workflow_id)")
        assert unheld == [], f"open steps whose spaces their workflow does not hold: {unheld}"
        finished = _rows("SELECT DISTINCT l.workflow_id FROM alg.tidy_space_lock AS l "
                         "JOIN alg.tidy_workflow AS w USING (workflow_id) WHERE w.status = 'COMPLETED'")
        assert finished == [], f"COMPLETED workflows still holding spaces: {finished}"

    @invariant()
    def every_invariant_holds(self):
        self.one_inventory_move_per_finished_job()
        self.one_event_per_identity()
        self.paused_workflows_keep_their_locks()
        self.nothing_completed_regresses()
        self.no_space_held_twice()
        self._remember()  # the next step is compared with this state


@pytest.fixture
def operator(wms, audit_truncate_allowed):
    user = User.objects.create_user(username="prop-operator")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    return user


@pytest.mark.slow
def test_it_keeps_every_invariant_whatever_the_interleaving(operator):
    Warehouse.operator = operator
    run_state_machine_as_test(Warehouse, settings=settings(
        max_examples=100, stateful_step_count=20, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
