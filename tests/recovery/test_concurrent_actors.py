"""The stateful property test's invariants with truly concurrent actors: WCS callbacks over HTTP,
recovery cycles, WMS-local damage and operator repairs run at the same time, each in its own
thread with its own database connection, on a small warehouse. PostgreSQL's row locks, not the
order of steps, decide who goes first; afterwards every invariant of tests/recovery/test_properties.py
holds and nothing answered 5xx except the documented 503 "busy, retry"."""

import json
import random
import threading
import uuid
from collections import Counter
from contextlib import suppress

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection, connections
from django.test import Client

from console import repair
from console.repair.registry import RepairAction
from console.roles import OPERATOR
from recovery.demo.warehouse import WarehouseBuilder
from recovery.engine.cycle import run_cycle
from recovery.engine.evidence import evidence_for_workflow
from tests.recovery.test_properties import Warehouse
from tests.wcs_helpers import TOKEN

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROUNDS = 3
ITERATIONS = 25  # per actor and round


def _rows(sql: str, params: dict | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class BiggerWarehouse(Warehouse):
    """Twelve trays and twelve empty spaces: enough workflows for the actors to collide on some."""

    def __init__(self):
        super().__init__()
        builder = WarehouseBuilder(prefix="C", space_prefix="C")
        for _ in range(7):
            builder.stocked_tray(sku_count=2)
        for _ in range(7):
            builder.add_space(None)
        self._remember()


class Actors:
    def __init__(self, operator: User, seed: int):
        self.operator = operator
        self.seed = seed
        self.statuses: Counter = Counter()
        self.failures: list[str] = []
        self.repaired: set[int] = set()
        self.lock = threading.Lock()

    def _fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)

    def _post(self, client: Client, endpoint: str, body: dict) -> None:
        response = client.post(f"/api/wcs/{endpoint}", data=json.dumps(body), content_type="application/json",
                                HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        with self.lock:
            self.statuses[response.status_code] += 1
        if response.status_code not in (200, 404, 409, 503):
            self._fail(f"{endpoint} {body} -> {response.status_code} {response.content[:300]!r}")

    def wcs(self, rng: random.Random) -> None:
        client = Client()
        sent: list[str] = []
        for _ in range(ITERATIONS):
            jobs = [r[0] for r in _rows("SELECT job_id FROM mydo_job ORDER BY job_id")]
            if not jobs and not sent:
                continue
            if not jobs:
                jobs = sent
            job = rng.choice(jobs)
            kind = rng.choice(["status", "finish", "finish", "duplicate"])
            if kind == "status":
                self._post(client, "job-status", {"job_id": job, "status": rng.choice([2, 3])})
            elif kind == "finish" or not sent:
                self._post(client, "job-finish", {"job_id": job, "stage": "MOVE_FINISHED", "event_id": f"c-{job}"})
                sent.append(job)
            else:
                old = rng.choice(sent)
                self._post(client, "job-finish", {"job_id": old, "stage": "MOVE_FINISHED", "event_id": f"c-{old}"})

    def recovery(self, rng: random.Random) -> None:
        for _ in range(ITERATIONS // 2):
            report = run_cycle()
            if not report.succeeded:
                self._fail(f"cycle failed: {report.error_text}")

    def floor_damage(self, rng: random.Random) -> None:
        """What a crash leaves behind: a lost job, or a move archived without its advance."""
        for _ in range(ITERATIONS // 5):
            jobs = [r[0] for r in _rows("SELECT job_id FROM mydo_job ORDER BY job_id")]
            if not jobs:
                continue
            job = rng.choice(jobs)
            with suppress(Exception):  # the job may be finished or locked by now: that is the race
                if rng.random() < 0.5:
                    _rows("DELETE FROM mydo_job WHERE job_id = %(j)s RETURNING job_id", {"j": job})
                else:
                    evidence = evidence_for_workflow(int(job.split("-")[1]))
                    if evidence is not None and evidence.pre_move_state and evidence.expected_job_id == job:
                        _rows("SELECT alg.usp_complete_move_job(%(j)s)", {"j": job})

    def operator_repairs(self, rng: random.Random) -> None:
        for _ in range(ITERATIONS // 2):
            paused = _rows("SELECT workflow_id, pause_reason FROM alg.tidy_workflow "
                           "WHERE status = 'PAUSED_RECOVERY' ORDER BY workflow_id")
            if not paused:
                continue
            workflow_id, reason = rng.choice(paused)
            if reason == "RECOVERY_JOB_MISSING":
                action, code = RepairAction.REISSUE, "JOB_LOST_AT_RESTART"
            else:
                action, code = RepairAction.RECHECK, "WMS_RECORDS_FIXED"
            evidence = evidence_for_workflow(workflow_id)
            # A re-issue needs the tray and its space read on the floor: the operator finds the
            # tray at the step's source.
            step = evidence.step if evidence is not None else None
            request = repair.RepairRequest(action=action, workflow_id=workflow_id, reason_code=code,
                                           reason_text="Concurrency test: the operator repairs the workflow.",
                                           tray_code=step.tray_code if step else "",
                                           space_code=step.cargo_space_id if step else "")
            with self.lock:
                self.repaired.add(workflow_id)
            with suppress(repair.RepairRefused):  # refused and audited when the evidence moved on
                repair.repair_apply(user=self.operator, request=request, previewed_fingerprint=evidence.fingerprint,
                                    idempotency_key=uuid.uuid4().hex)

    def run(self) -> None:
        actors = [self.wcs, self.wcs, self.recovery, self.floor_damage, self.operator_repairs]
        barrier = threading.Barrier(len(actors))

        def thread(n, actor):
            try:
                barrier.wait(timeout=30)
                actor(random.Random(self.seed * 100 + n))
            except Exception as exc:
                self._fail(f"{actor.__name__} raised {exc!r}")
            finally:
                connections.close_all()

        threads = [threading.Thread(target=thread, args=(n, a)) for n, a in enumerate(actors)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "an actor hung"


@pytest.fixture
def operator(wms, audit_truncate_allowed):
    user = User.objects.create_user(username="concurrent-operator")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    return user


def test_concurrent_callbacks_cycles_damage_and_repairs_keep_every_invariant(operator):
    warehouse = BiggerWarehouse()
    totals: Counter = Counter()
    repaired = 0
    for round_no in range(ROUNDS):
        for steps in (2, 1, 2, 1, 2, 1, 2, 1):
            warehouse.create_tidy(steps=steps)
        warehouse._remember()
        actors = Actors(operator, seed=round_no)
        actors.run()
        assert actors.failures == []
        # Operators may legitimately resume the paused workflows they repaired.
        warehouse.paused_locks = {w: locks for w, locks in warehouse.paused_locks.items()
                                  if w not in actors.repaired}
        warehouse.every_invariant_holds()
        # Quiet again, one more cycle and the invariants still hold: nothing half-done was left.
        assert run_cycle().succeeded
        warehouse.every_invariant_holds()
        totals.update(actors.statuses)
        repaired += len(actors.repaired)
    assert totals[200] >= 20, f"the actors hardly got a callback through: {totals}"
    print(f"callback answers over {ROUNDS} rounds: {dict(totals)}; workflows an operator repaired: {repaired}")
