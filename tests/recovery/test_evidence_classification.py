"""The classification's set-based query (classification.sql) gives every workflow exactly the
fields of the per-workflow evidence (evidence.sql) that decide() reads, and so the same decision,
on the shapes its shortcuts treat apart: stock in several places or nowhere, a NULL location,
duplicated finish rows, no step at all, steps whose ids run against their order; whole, split
into shards, and read in parts at once."""

import pytest
from django.db import connection

from recovery.demo.warehouse import EXPECTED
from recovery.engine import cycle as recovery_cycle
from recovery.engine.cycle import ApplyWorkers, classify
from recovery.engine.decisions import decide
from recovery.engine.evidence import (
    ClassificationEvidence,
    evidence_for_active_workflows,
    evidence_for_workflow,
    stream_classification,
)


def _x(sql: str, params: tuple = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def _awkward_warehouse(wms) -> dict[str, int]:
    built = {kind: wms.build(kind) for kind in EXPECTED}
    ids = {kind: b.workflow_id for kind, b in built.items()}

    # A healthy tray with one more row elsewhere and one with no location at all.
    move = built["healthy"].moves[0]
    _x("INSERT INTO bas_stock (tray_code, cargo_space_id, sku) VALUES (%s, %s, 'X'), (%s, NULL, 'Y')",
       (move.tray_code, move.target, move.tray_code))
    # A finished tray whose stock rows are all gone.
    _x("DELETE FROM bas_stock WHERE tray_code = %s", (built["finish_not_terminal"].moves[0].tray_code,))
    # A tray whose only stock row has no location.
    move = built["active_not_pre_move"].moves[0]
    _x("DELETE FROM bas_stock WHERE tray_code = %s", (move.tray_code,))
    _x("INSERT INTO bas_stock (tray_code, cargo_space_id, sku) VALUES (%s, NULL, 'Z')", (move.tray_code,))
    # The finish archive holding a job twice, the newer row different.
    job_id = _x("SELECT job_id FROM mydo_job_finish WHERE job_id LIKE %s",
                (f"TDY-{ids['finish_terminal']}-%",))[0][0]
    _x("INSERT INTO mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id,"
       " finished_at) SELECT job_id, in_or_out, 3, tray_code, cargo_space_id, target_cargo_space_id,"
       " finished_at + interval '1 minute' FROM mydo_job_finish WHERE job_id = %s", (job_id,))
    # An active workflow without any step.
    ids["no_step"] = _x("INSERT INTO alg.tidy_workflow (origin, status) VALUES ('MANUAL', 'ACTIVE')"
                        " RETURNING workflow_id")[0][0]
    # Steps whose ids run against their order: step_no 1 has the higher id.
    wid = _x("INSERT INTO alg.tidy_workflow (origin, status) VALUES ('AUTOMATIC', 'ACTIVE')"
             " RETURNING workflow_id")[0][0]
    for step_no, status in ((3, "PENDING"), (2, "PENDING"), (1, "COMPLETED")):
        _x("INSERT INTO alg.tidy_step (workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id,"
           " status) VALUES (%s, %s, %s, 'R-SRC', 'R-DST', %s)", (wid, step_no, f"R-{step_no}", status))
    ids["reversed_steps"] = wid
    return ids


def test_every_active_workflow_gets_the_fields_decide_reads_of_its_evidence(wms):
    ids = _awkward_warehouse(wms)
    classified = list(stream_classification())
    active = {row[0] for row in _x("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'ACTIVE'")}
    assert [e.workflow_id for e in classified] == sorted(active)
    for evidence in classified:
        full = evidence_for_workflow(evidence.workflow_id)
        assert evidence == ClassificationEvidence.of(full), evidence.workflow_id
        # decide() reads nothing else: ClassificationEvidence has no other field to read.
        assert decide(evidence) == decide(full), evidence.workflow_id
    by_id = {e.workflow_id: e for e in classified}
    # The shapes above really were read: several locations (one of them none), no stock, a
    # duplicated finish, no step, the lowest step_no rather than the lowest id.
    healthy = by_id[ids["healthy"]]
    assert (healthy.stock_rows, healthy.stock_at_source, healthy.stock_at_target) == (5, 3, 1)
    assert by_id[ids["finish_not_terminal"]].stock_rows == 0
    assert by_id[ids["active_not_pre_move"]].stock_rows == 1 and by_id[ids["active_not_pre_move"]].stock_at_source == 0
    assert by_id[ids["finish_terminal"]].finish_job_count == 2
    assert by_id[ids["finish_terminal"]].finish_job.status == 3  # the newest row
    assert by_id[ids["no_step"]].step is None
    assert by_id[ids["reversed_steps"]].step.step_no == 2


def test_the_full_evidence_of_the_active_set_is_the_per_workflow_evidence(wms):
    _awkward_warehouse(wms)
    whole = evidence_for_active_workflows()
    assert [e.workflow_id for e in whole] == sorted(
        row[0] for row in _x("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'ACTIVE'"))
    for evidence in whole:
        assert evidence == evidence_for_workflow(evidence.workflow_id)


def test_shards_partition_the_active_set_with_the_same_evidence(wms):
    _awkward_warehouse(wms)
    whole = {e.workflow_id: e for e in stream_classification()}
    seen = {}
    for shard in range(3):
        for evidence in stream_classification(shard=shard, shard_count=3):
            assert evidence.workflow_id % 3 == shard
            assert evidence.workflow_id not in seen
            seen[evidence.workflow_id] = evidence
    assert seen == whole


def test_the_classification_decides_as_the_per_workflow_read_does(wms):
    _awkward_warehouse(wms)
    needing = {e.workflow_id for e in classify(keep=1000).needing}
    expected = set()
    for (workflow_id,) in _x("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'ACTIVE'"):
        if decide(evidence_for_workflow(workflow_id)).changes_state:
            expected.add(workflow_id)
    assert needing == expected and needing


def _needing_ids(classification) -> list[int]:
    return [e.workflow_id for e in classification.needing]


@pytest.mark.parametrize("keep", [1, 2, 3, 5, 1000])
@pytest.mark.parametrize("shard", [None, 1])
@pytest.mark.usefixtures("committed_db")
def test_a_classification_read_in_parts_equals_one_read(wms, monkeypatch, keep, shard):
    """Parts are consecutive id ranges, read at once on their own connections: joined, they keep
    the same oldest `keep`, count and carry the same rest in the same order."""
    for _ in range(3):
        for kind in ("job_missing", "healthy", "finish_terminal", "finish_not_terminal"):
            wms.build(kind)
    # Workflows without steps (each needs completing) at both ends of bigint: no range leaves one out.
    for extreme in (-(2**63), 2**63 - 1):
        _x("INSERT INTO alg.tidy_workflow (workflow_id, origin, status) VALUES (%s, 'MANUAL', 'ACTIVE')", (extreme,))
    shards = {"shard": shard, "shard_count": 2} if shard is not None else {}
    whole = classify(keep=keep, carry=True, **shards)
    monkeypatch.setattr(recovery_cycle, "CLASSIFY_IN_PARTS_FROM", 1)
    original, seen_ranges = recovery_cycle.stream_classification, []

    def spy(**kwargs):
        seen_ranges.append(kwargs["id_range"])
        return original(**kwargs)

    monkeypatch.setattr(recovery_cycle, "stream_classification", spy)
    for parts in (2, 3):
        monkeypatch.setattr(recovery_cycle, "CLASSIFICATION_PARTS", parts)
        seen_ranges.clear()
        workers = ApplyWorkers(parts)
        try:
            joined = classify(keep=keep, carry=True, workers=workers, **shards)
        finally:
            workers.close()
        assert len(seen_ranges) == parts
        assert (joined.examined, joined.beyond_budget) == (whole.examined, whole.beyond_budget)
        assert _needing_ids(joined) == _needing_ids(whole)
        assert list(joined.beyond_ids) == list(whole.beyond_ids)
        assert joined.needing == whole.needing
    extremes = {-(2**63), 2**63 - 1} if shard is None else {2**63 - 1}  # -(2**63) % 2 = 0 in PostgreSQL
    assert extremes <= set(_needing_ids(whole)) | set(whole.beyond_ids)
    assert whole.examined > 0 and whole.needing


@pytest.mark.usefixtures("committed_db")
def test_a_part_that_fails_fails_the_classification(wms, monkeypatch):
    for kind in ("job_missing", "healthy", "finish_terminal"):
        wms.build(kind)
    monkeypatch.setattr(recovery_cycle, "CLASSIFY_IN_PARTS_FROM", 1)
    original = recovery_cycle.stream_classification

    def second_part_fails(**kwargs):
        if kwargs["id_range"][0] > 0:
            raise RuntimeError("the second part's query failed")
        return original(**kwargs)

    monkeypatch.setattr(recovery_cycle, "stream_classification", second_part_fails)
    with pytest.raises(RuntimeError, match="second part"):
        classify(keep=10)
