"""The jobFinish's evidence read under the lock (`wms_sql.evidence_for_one_workflow`): the same
evidence as every other read of one workflow, and a generic plan that probes the active job by
its key where the list form's plan (`= ANY (array)`) hashes the whole of mydo_job
(docs/architecture.md §8). The jobFinish reads it in one statement with what the job names
(`wms_sql.callback_target_and_evidence`): the same target and the same evidence as the two reads."""

import re

import pytest
from django.db import connection

from recovery.demo.warehouse import EXPECTED
from recovery.engine import wms_sql
from recovery.engine.evidence import evidence_for_workflow, evidence_from_row
from recovery.engine.prepared import run_prepared

MANY_ACTIVE_JOBS = """
INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT 'OTHER-' || g, 28, 2, 'OT-' || g, 'OS-' || g, 'OD-' || g FROM generate_series(1, 1500) AS g
"""


def _one(workflow_id):
    columns, rows = run_prepared(wms_sql.evidence_for_one_workflow(), {"workflow_id": workflow_id})
    return [evidence_from_row(dict(zip(columns, row, strict=True))) for row in rows]


def test_it_reads_what_the_per_workflow_read_gives_for_every_kind(wms):
    built = [wms.build(kind) for kind in EXPECTED]
    for b in built:
        (evidence,) = _one(b.workflow_id)
        plain = evidence_for_workflow(b.workflow_id)
        assert evidence == plain and evidence.fingerprint == plain.fingerprint, b.kind
    assert _one(424242) == []


def _generic_plan(sql: str) -> str:
    """The plan a prepared statement keeps, whatever its parameters: the statement prepared and
    explained under force_generic_plan (EXPLAIN (GENERIC_PLAN) would do it in one, from
    PostgreSQL 16 only)."""
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))
    numbered = re.sub(r"%\((\w+)\)s", lambda m: f"${names.index(m.group(1)) + 1}", sql).replace("%%", "%")
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        cursor.execute("PREPARE generic_plan_probe AS " + numbered.replace("%", "%%"))
        try:
            cursor.execute(f"EXPLAIN EXECUTE generic_plan_probe({', '.join(['NULL'] * len(names))})")
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE generic_plan_probe")


@pytest.mark.parametrize("statement", [wms_sql.evidence_for_one_workflow, wms_sql.callback_target_and_evidence],
                         ids=["evidence alone", "with the callback's target"])
def test_its_generic_plan_probes_the_active_job_by_key_among_many(wms, statement):
    wms.build(next(iter(EXPECTED)))
    with connection.cursor() as cursor:
        cursor.execute(MANY_ACTIVE_JOBS)
        cursor.execute("ANALYZE mydo_job")
    plan = _generic_plan(statement())
    assert not re.search(r"Seq Scan on mydo_job\b(?!_)", plan), plan
    assert re.search(r"Index (Only )?Scan using \w+ on mydo_job aj\b", plan), plan


# --- the jobFinish's one read under the lock: target and evidence in one statement ----------------


def _target_and_evidence(workflow_id, step_id, job_id):
    columns, rows = run_prepared(wms_sql.callback_target_and_evidence(),
                                 {"workflow_id": workflow_id, "step_id": step_id, "job_id": job_id})
    n = wms_sql.CALLBACK_TARGET_COLUMNS
    (row,) = rows
    evidence = dict(zip(columns[n:], row[n:], strict=True))
    return row[:n], (evidence_from_row(evidence) if evidence["workflow_id"] is not None else None)


def test_the_combined_read_gives_the_target_and_the_evidence_of_the_two_reads(wms):
    built = [wms.build(kind) for kind in EXPECTED]
    for b in built:
        (evidence,) = _one(b.workflow_id)
        with connection.cursor() as cursor:
            cursor.execute("SELECT step_id FROM alg.tidy_step WHERE workflow_id = %s ORDER BY step_no",
                           [b.workflow_id])
            step_ids = [row[0] for row in cursor.fetchall()]
        for step_id in step_ids:
            job_id = f"TDY-{b.workflow_id}-{step_id}"
            params = {"workflow_id": b.workflow_id, "step_id": step_id, "job_id": job_id}
            _, (alone,) = run_prepared(wms_sql.CALLBACK_TARGET, params)
            target, combined = _target_and_evidence(b.workflow_id, step_id, job_id)
            assert target == alone, b.kind
            assert combined == evidence and combined.fingerprint == evidence.fingerprint, b.kind
    # A step of no workflow: the target's row of NULLs and no evidence, as the two reads give.
    target, evidence = _target_and_evidence(424242, 7, "TDY-424242-7")
    assert target == (None, None, None, None, 0, None, None, None, None) and evidence is None


def test_the_target_columns_are_callback_targets_columns(wms):
    columns, _ = run_prepared(wms_sql.CALLBACK_TARGET, {"workflow_id": 1, "step_id": 1, "job_id": "TDY-1-1"})
    combined, _ = run_prepared(wms_sql.callback_target_and_evidence(),
                               {"workflow_id": 1, "step_id": 1, "job_id": "TDY-1-1"})
    evidence_columns, _ = run_prepared(wms_sql.evidence_for_one_workflow(), {"workflow_id": 1})
    assert len(columns) == wms_sql.CALLBACK_TARGET_COLUMNS
    assert combined == columns + evidence_columns


def test_the_combined_read_fits_psycopgs_parse_cache():
    from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH

    assert len(wms_sql.callback_target_and_evidence().encode()) <= MAX_CACHED_STATEMENT_LENGTH


def test_compacting_keeps_quoted_dashes_and_drops_comments():
    sql = "SELECT 'a--b' AS x,   -- the comment\n    '--' || 'c' -- another's\n\n-- a line\nFROM t\n"
    assert wms_sql._compact(sql) == "SELECT 'a--b' AS x,\n'--' || 'c'\nFROM t\n"
