"""Named SQL of the stand-in WCS (console.simulator.wcs): the jobs a WCS would be executing, the
trays and spaces it may tidy, the workflows it leaves stalled."""


# Active tidy jobs of ACTIVE workflows whose step is DISPATCHED: what a WCS would be executing.
SIMULATOR_ACTIVE_JOBS = """
SELECT j.job_id,
       j.status,
       s.workflow_id,
       j.tray_code,
       j.target_cargo_space_id
FROM public.mydo_job AS j
JOIN alg.tidy_step AS s
    ON j.job_id = 'TDY-' || s.workflow_id || '-' || s.step_id
JOIN alg.tidy_workflow AS w
    ON w.workflow_id = s.workflow_id
WHERE j.in_or_out = 28
  AND j.job_id LIKE 'TDY-%%'
  AND w.status = 'ACTIVE'
  AND s.status = 'DISPATCHED'
ORDER BY j.created_at, j.job_id
LIMIT %(limit)s
"""

COUNT_ACTIVE_WORKFLOWS = """
SELECT count(*) FROM alg.tidy_workflow WHERE status = 'ACTIVE'
"""

# A tray that may be tidied: its space holds it, every stock row is there, no tidy lock on the
# space, no active job for the tray and no open tidy workflow moving it (creation refuses those).
SIMULATOR_FREE_TRAYS = """
SELECT c.cargo_space_id,
       c.tray_code
FROM public.bas_cargo_space AS c
WHERE c.tray_code IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM alg.tidy_space_lock AS l WHERE l.cargo_space_id = c.cargo_space_id)
  AND NOT EXISTS (SELECT 1 FROM public.mydo_job AS j WHERE j.tray_code = c.tray_code)
  AND NOT EXISTS (SELECT 1
                  FROM alg.tidy_workflow AS w
                  JOIN alg.tidy_step AS s
                      ON s.workflow_id = w.workflow_id
                  WHERE w.status IN ('ACTIVE', 'PAUSED_RECOVERY')
                    AND s.tray_code = c.tray_code)
  AND EXISTS (SELECT 1 FROM public.bas_stock AS b WHERE b.tray_code = c.tray_code)
  AND NOT EXISTS (SELECT 1 FROM public.bas_stock AS b
                  WHERE b.tray_code = c.tray_code
                    AND b.cargo_space_id IS DISTINCT FROM c.cargo_space_id)
ORDER BY random()
LIMIT %(limit)s
"""

SIMULATOR_FREE_SPACES = """
SELECT c.cargo_space_id
FROM public.bas_cargo_space AS c
WHERE c.tray_code IS NULL
  AND NOT EXISTS (SELECT 1 FROM alg.tidy_space_lock AS l WHERE l.cargo_space_id = c.cargo_space_id)
  AND NOT EXISTS (SELECT 1 FROM public.bas_stock AS b WHERE b.cargo_space_id = c.cargo_space_id)
ORDER BY random()
LIMIT %(limit)s
"""

# Parameter: %(before)s. Workflows whose active tidy job has not changed since then: the
# simulator started with --leave-stalled-minutes treats them as a vehicle fault and never drives them.
SIMULATOR_STALLED_WORKFLOWS = """
SELECT DISTINCT s.workflow_id
FROM public.mydo_job AS j
JOIN alg.tidy_step AS s
    ON j.job_id = 'TDY-' || s.workflow_id || '-' || s.step_id
WHERE j.in_or_out = 28
  AND j.updated_at <= %(before)s
"""
