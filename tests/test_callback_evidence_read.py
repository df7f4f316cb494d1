"""The jobFinish's evidence read under the lock (`wms_sql.evidence_for_one_workflow`): the same
evidence as every other read of one workflow, and a generic plan that probes the active job by
its key where the list form's plan (`= ANY (array)`) hashes the whole of mydo_job
(docs/architecture.md §8)."""

import re

from django.db import connection

from recovery import wms_sql
from recovery.evidence import evidence_for_workflow, evidence_from_row
from recovery.prepared import run_prepared
from recovery.scenarios import EXPECTED

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
    """EXPLAIN (GENERIC_PLAN): the plan a prepared statement keeps, whatever its parameters."""
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))
    numbered = re.sub(r"%\((\w+)\)s", lambda m: f"${names.index(m.group(1)) + 1}", sql).replace("%%", "%")
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (GENERIC_PLAN) " + numbered.replace("%", "%%"))
        return "\n".join(row[0] for row in cursor.fetchall())


def test_its_generic_plan_probes_the_active_job_by_key_among_many(wms):
    wms.build(next(iter(EXPECTED)))
    with connection.cursor() as cursor:
        cursor.execute(MANY_ACTIVE_JOBS)
        cursor.execute("ANALYZE mydo_job")
    plan = _generic_plan(wms_sql.evidence_for_one_workflow())
    assert not re.search(r"Seq Scan on mydo_job\b(?!_)", plan), plan
    assert re.search(r"Index (Only )?Scan using \w+ on mydo_job aj\b", plan), plan
