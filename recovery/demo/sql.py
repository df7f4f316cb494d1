"""Named SQL of the demo warehouse (`manage.py wms_demo`) and of the warehouse builder
(recovery/demo/warehouse.py) that writes the demo, the tests' and the benchmarks' WMS rows, and the bulk
seed of the benchmarks and the scale tests. Nothing recovery runs in production."""

from recovery.engine.wms_sql import WMS_TABLES, qualified, sql_file

# --- the demo warehouse (`manage.py wms_demo`) ------------------------------------------------

COUNT_WORKFLOWS = "SELECT count(*) FROM alg.tidy_workflow"

DEMO_WAREHOUSE_SIZE = """
SELECT (SELECT count(*) FROM public.bas_cargo_space),
       (SELECT count(DISTINCT tray_code) FROM public.bas_stock),
       (SELECT count(*) FROM public.bas_stock)
"""


# The demo's stalled workflow (a vehicle fault the simulator leaves alone).
# Parameters: %(workflow_id)s, %(minutes)s. The job of the workflow's first step last changed
# that long ago: the job is stalled until someone on the floor looks.
DEMO_STALL_JOB = """
UPDATE public.mydo_job
SET created_at = now() - make_interval(mins => %(minutes)s + 5),
    updated_at = now() - make_interval(mins => %(minutes)s)
WHERE job_id LIKE 'TDY-' || %(workflow_id)s || '-%%'
"""


# --- the warehouse builder (recovery/demo/warehouse.py: demo, tests, benchmarks, replay) ------------

BUILDER_INSERT_SPACE = """
INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
VALUES (%(s)s, %(t)s)
"""

BUILDER_INSERT_STOCK = """
INSERT INTO public.bas_stock (tray_code, cargo_space_id, sku, qty)
VALUES (%(t)s, %(s)s, %(k)s, %(q)s)
"""

BUILDER_BOOK_TRAY_STOCK = """
UPDATE public.bas_stock
SET cargo_space_id = %(t)s
WHERE tray_code = %(tray)s
"""

BUILDER_EMPTY_SPACE = """
UPDATE public.bas_cargo_space
SET tray_code = NULL
WHERE cargo_space_id = %(s)s
"""

BUILDER_PUT_TRAY = """
UPDATE public.bas_cargo_space
SET tray_code = %(tray)s
WHERE cargo_space_id = %(t)s
"""

BUILDER_INSERT_WORKFLOW = """
INSERT INTO alg.tidy_workflow (origin, status, pause_reason, created_at, updated_at, completed_at)
VALUES (%(o)s, %(st)s, %(r)s,
        now() - make_interval(mins => %(age)s),
        now() - make_interval(mins => %(age)s),
        CASE WHEN %(st)s = 'COMPLETED' THEN now() END)
RETURNING workflow_id
"""

BUILDER_INSERT_STEP = """
INSERT INTO alg.tidy_step (workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id,
                           status, pause_reason, completed_at)
VALUES (%(w)s, %(n)s, %(t)s, %(s)s, %(g)s, %(st)s, %(r)s, CASE WHEN %(st)s = 'COMPLETED' THEN now() END)
RETURNING step_id
"""

BUILDER_INSERT_SPACE_LOCK = """
INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
VALUES (%(w)s, %(s)s)
"""

BUILDER_INSERT_FINISHED_JOB = """
INSERT INTO public.mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
VALUES (%(j)s, %(io)s, %(st)s, %(t)s, %(s)s, %(g)s)
"""

BUILDER_INSERT_ACTIVE_JOB = """
INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
VALUES (%(j)s, %(io)s, %(st)s, %(t)s, %(s)s, %(g)s)
"""

BUILDER_INSERT_EVENT = """
INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage)
VALUES (%(w)s, %(s)s, %(j)s, %(st)s)
"""

# The demo's receipt of a job-finish that named another tray (%(tray)s) than the step's: what the
# callback writes for a REPORT_MISMATCH (recovery.engine.callbacks.finish_report_mismatch).
BUILDER_WCS_REPORT_MISMATCH = """
INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, workflow_id, step_id, stage, wcs_event_id,
                                      http_status, outcome, message, payload, duration_ms, tray_code, location,
                                      mismatch)
VALUES (now(), 'job-finish', %(j)s, %(w)s, %(s)s, 'MOVE_FINISHED', '', 409, 'REPORT_MISMATCH',
        'job ' || %(j)s || ' reported tray ' || %(tray)s || ' (expected ' || %(expected_tray)s || '): nothing moved',
        jsonb_build_object('job_id', %(j)s, 'stage', 'MOVE_FINISHED', 'tray_code', %(tray)s::text,
                           'location', %(location)s::text),
        1.0, %(tray)s, %(location)s,
        jsonb_build_object('expected', jsonb_build_object('tray_code', %(expected_tray)s::text,
                                                          'location', %(location)s::text),
                           'reported', jsonb_build_object('tray_code', %(tray)s::text,
                                                          'location', %(location)s::text)))
"""

# The bulk seed of the benchmarks and the scale tests (recovery/sql/bulk_seed.sql), statement by statement.
def bulk_seed_statements() -> list[str]:
    return [part for part in sql_file("bulk_seed.sql").split(";\n") if part.strip()]

TRUNCATE_WMS_TABLES = f"TRUNCATE {', '.join(qualified(t) for t in WMS_TABLES)} RESTART IDENTITY CASCADE"
