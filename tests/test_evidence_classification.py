"""The classification's set-based evidence query (evidence_active.sql) gives every workflow exactly
the evidence of the per-workflow read (evidence.sql), on the shapes its shortcuts treat apart:
stock in several places or nowhere, a NULL location, duplicated finish rows, no step at all,
steps whose ids run against their order; whole, and split into shards."""

from django.db import connection

from recovery.cycle import classify
from recovery.decisions import decide
from recovery.evidence import evidence_for_active_workflows, evidence_for_workflow, stream_active_evidence
from recovery.scenarios import EXPECTED


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


def test_every_active_workflow_gets_the_per_workflow_evidence(wms):
    ids = _awkward_warehouse(wms)
    classified = evidence_for_active_workflows()
    active = {row[0] for row in _x("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'ACTIVE'")}
    assert [e.workflow_id for e in classified] == sorted(active)
    for evidence in classified:
        assert evidence == evidence_for_workflow(evidence.workflow_id), evidence.workflow_id
        assert evidence.fingerprint == evidence_for_workflow(evidence.workflow_id).fingerprint
    by_id = {e.workflow_id: e for e in classified}
    # The shapes above really were read: several locations (one of them none), no stock, a
    # duplicated finish, no step, the lowest step_no rather than the lowest id.
    assert by_id[ids["healthy"]].stock_locations == tuple(sorted(
        by_id[ids["healthy"]].stock_locations)) and len(by_id[ids["healthy"]].stock_locations) == 3
    assert "(none)" in by_id[ids["healthy"]].stock_locations
    assert by_id[ids["finish_not_terminal"]].stock_rows == 0
    assert by_id[ids["finish_not_terminal"]].stock_locations == ()
    assert by_id[ids["active_not_pre_move"]].stock_locations == ("(none)",)
    assert by_id[ids["finish_terminal"]].finish_job_count == 2
    assert by_id[ids["finish_terminal"]].finish_job.status == 3  # the newest row
    assert by_id[ids["no_step"]].step is None and by_id[ids["no_step"]].step_count == 0
    assert by_id[ids["reversed_steps"]].step.step_no == 2


def test_shards_partition_the_active_set_with_the_same_evidence(wms):
    _awkward_warehouse(wms)
    whole = {e.workflow_id: e for e in evidence_for_active_workflows()}
    seen = {}
    for shard in range(3):
        for evidence in stream_active_evidence(shard=shard, shard_count=3):
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
