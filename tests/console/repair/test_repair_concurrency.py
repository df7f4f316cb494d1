"""Repairs racing each other on separate connections: one idempotency key applies once, two
operators on the same evidence apply once, and a failure mid-change rolls the change back
while its refusal row still commits."""

import threading

import pytest
from django.db import connection, connections

from console import repair
from console.models import RepairAudit
from console.repair.registry import RepairAction
from recovery.engine.transaction import StaleWrite
from recovery.runtime.lease import connect_direct
from tests.repair_support import *  # noqa: F403  (fixtures)
from tests.repair_support import at_source, fingerprint, key, make_user, paused
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

REASON = "Job lost at the restart, tray at source"


def request_for(wid):
    scans = at_source(wid)
    return repair.RepairRequest(RepairAction.REISSUE, wid, "JOB_LOST_AT_RESTART", REASON,
                                tray_code=scans["tray_code"], space_code=scans["space_code"])


def race(calls):
    """Run each callable on its own thread (own connection) at once; return results or exceptions."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except Exception as exc:  # noqa: BLE001  (reported to the test)
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_the_same_key_submitted_twice_at_once_applies_once(repair_db, operator):
    wid = paused(repair_db, "job_missing").workflow_id
    fp, k = fingerprint(wid), key()
    before = snapshot()
    results = race([lambda: repair.repair_apply(user=operator, request=request_for(wid), previewed_fingerprint=fp,
                                                idempotency_key=k)] * 2)
    assert all(isinstance(r, RepairAudit) for r in results), results
    assert results[0].pk == results[1].pk and results[0].outcome == "APPLIED"
    assert len(diff(before, snapshot())["mydo_job"]["added"]) == 1
    assert RepairAudit.objects.count() == 1


def test_two_operators_on_the_same_evidence_apply_once(repair_db, operator):
    other = make_user("omar", "operator")
    wid = paused(repair_db, "job_missing").workflow_id
    fp = fingerprint(wid)
    results = race([
        lambda: repair.repair_apply(user=operator, request=request_for(wid), previewed_fingerprint=fp,
                                    idempotency_key=key()),
        lambda: repair.repair_apply(user=other, request=request_for(wid), previewed_fingerprint=fp,
                                    idempotency_key=key()),
    ])
    applied = [r for r in results if isinstance(r, RepairAudit)]
    refused = [r for r in results if isinstance(r, repair.RepairRefused)]
    assert len(applied) == 1 and len(refused) == 1, results
    assert refused[0].code == repair.Refusal.STALE_EVIDENCE
    assert sorted(RepairAudit.objects.values_list("outcome", flat=True)) == ["APPLIED", "REFUSED:STALE_EVIDENCE"]


def test_a_failure_mid_change_rolls_back_and_the_refusal_row_commits(repair_db, operator, monkeypatch):
    wid = paused(repair_db, "job_missing").workflow_id
    real = repair.MUTATIONS[RepairAction.REISSUE]

    def half_then_fail(ctx, *, payload):
        real(ctx, payload=payload)  # every write of the action happens ...
        raise StaleWrite("simulated: a conditional write matched no row")  # ... then one fails

    monkeypatch.setitem(repair.MUTATIONS, RepairAction.REISSUE, half_then_fail)
    before = snapshot()
    with pytest.raises(repair.RepairRefused):
        repair.repair_apply(user=operator, request=request_for(wid), previewed_fingerprint=fingerprint(wid),
                            idempotency_key=key())
    assert diff(before, snapshot()) == {}
    # Seen from another connection: the refusal is committed.
    with connect_direct("audit-check") as other:
        rows = other.execute("SELECT outcome, workflow_id FROM console_repairaudit").fetchall()
    assert rows == [("REFUSED:STALE_WRITE", wid)]
    assert connection.in_atomic_block is False
