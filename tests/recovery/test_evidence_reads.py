"""The prepared evidence read under the lock gives exactly what the plain read gives."""

import pytest
from django.db import connection, transaction

from recovery.demo.warehouse import EXPECTED
from recovery.engine.evidence import (
    evidence_for_active_workflows,
    evidence_for_workflow,
    evidence_for_workflow_under_lock,
)
from recovery.engine.transaction import lock_and_read
from recovery.runtime.lease import connect_direct

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def test_the_prepared_read_equals_the_plain_read_for_every_kind(wms):
    built = [wms.build(kind) for kind in EXPECTED]
    for b in built:
        plain = evidence_for_workflow(b.workflow_id)
        with transaction.atomic():
            prepared = evidence_for_workflow_under_lock(b.workflow_id)
        assert prepared == plain, b.kind
        assert prepared.fingerprint == plain.fingerprint, b.kind


def test_the_classification_reads_the_same_evidence_as_the_per_workflow_read(wms):
    for kind in EXPECTED:
        wms.build(kind)
    for evidence in evidence_for_active_workflows():
        assert evidence == evidence_for_workflow(evidence.workflow_id)


def test_the_lock_and_its_read_in_one_round_trip_equal_the_plain_read_for_every_kind(wms):
    for kind in EXPECTED:
        b = wms.build(kind)
        with transaction.atomic():
            locked, evidence = lock_and_read(b.workflow_id, skip_locked=True)
        assert locked, kind
        assert evidence == evidence_for_workflow(b.workflow_id), kind


def test_lock_and_read_skips_a_held_row_and_an_unknown_one(wms):
    b = wms.build("job_missing")
    holder = connect_direct("test-holder")
    try:
        holder.execute("BEGIN")
        holder.execute("SELECT 1 FROM alg.tidy_workflow WHERE workflow_id = %s FOR UPDATE", (b.workflow_id,))
        with transaction.atomic():
            assert lock_and_read(b.workflow_id, skip_locked=True) == (False, None)
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    with transaction.atomic():
        assert lock_and_read(424242, skip_locked=True) == (False, None)
        assert lock_and_read(b.workflow_id, skip_locked=False)[0] is True


def test_an_unknown_workflow_has_no_evidence(wms):
    with transaction.atomic():
        assert evidence_for_workflow_under_lock(424242) is None
    assert evidence_for_workflow(424242) is None


def test_connections_keep_one_generic_plan_for_prepared_statements(transactional_db):
    connection.close()
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "force_generic_plan"


def test_evidence_built_from_a_row_is_complete_and_equal_to_a_constructed_one(wms):
    import dataclasses

    from recovery.engine.evidence import JobEvidence, StepEvidence, TidyRecoveryEvidence

    built = wms.build("finish_terminal")
    fast = evidence_for_workflow(built.workflow_id)
    # Every field is set, and the classes' own constructors give an equal object.
    for obj, cls in ((fast, TidyRecoveryEvidence), (fast.step, StepEvidence), (fast.finish_job, JobEvidence)):
        assert {f.name for f in dataclasses.fields(cls)} <= set(vars(obj))
    rebuilt = TidyRecoveryEvidence(**{
        **{f.name: getattr(fast, f.name) for f in dataclasses.fields(TidyRecoveryEvidence)},
        "step": StepEvidence(**dataclasses.asdict(fast.step)),
        "finish_job": JobEvidence(**dataclasses.asdict(fast.finish_job)),
    })
    assert rebuilt == fast and rebuilt.fingerprint == fast.fingerprint
    with __import__("pytest").raises(dataclasses.FrozenInstanceError):
        fast.workflow_status = "PAUSED_RECOVERY"
