"""Named SQL of the rack map (/map/ and the workflow page's small map): set-based reads, a
fixed number whatever the number of cargo spaces (console.rack_map.drawing).

The stalled flag is computed inline (an ACTIVE workflow whose current step's job, status 1-3,
has not changed since %(stalled_before)s, the same cut-off and comparison as
console.readers.sql.STALLED_WORKFLOWS) so the map needs no other statement.
"""


# Every cargo space with its tray and the workflow that locks it, plus locks on codes that
# bas_cargo_space does not list (never dropped: the map lists them as unknown spaces).
# {spaces} and {locks} are the two tables whole (ALL_*) or only some codes (OF_CODES_*, with
# %(codes)s; OF_PREFIXES_*, with %(likes)s). Parameter: %(stalled_before)s.
RACK_MAP_SPACES = """
WITH stalled AS (
    SELECT w.workflow_id
    FROM alg.tidy_workflow AS w
    CROSS JOIN LATERAL (
        SELECT s.step_id
        FROM alg.tidy_step AS s
        WHERE s.workflow_id = w.workflow_id                 -- tidy_step_workflow_step_no_key
          AND s.status NOT IN ('COMPLETED', 'CANCELLED')
        ORDER BY s.step_no
        LIMIT 1
    ) AS cur
    JOIN public.mydo_job AS j
      ON j.job_id = 'TDY-' || w.workflow_id || '-' || cur.step_id   -- mydo_job_pkey
    WHERE w.status = 'ACTIVE'                               -- tidy_workflow_active_idx
      AND j.status IN (1, 2, 3)
      AND j.updated_at <= %(stalled_before)s
)
SELECT coalesce(c.cargo_space_id, l.cargo_space_id) AS code,
       c.tray_code,
       l.workflow_id,
       -- The space's CSS classes on the map (console/rack_map.py): its lock, then o for a tray.
       concat_ws(' ',
                 CASE WHEN l.workflow_id IS NULL THEN NULL
                      WHEN w.status = 'PAUSED_RECOVERY' THEN 'p'
                      WHEN w.status = 'ACTIVE' AND st.workflow_id IS NOT NULL THEN 's'
                      WHEN w.status = 'ACTIVE' THEN 'a'
                      ELSE 'x'
                 END,
                 CASE WHEN c.tray_code IS NOT NULL THEN 'o' END) AS css,
       CASE WHEN w.status NOT IN ('ACTIVE', 'PAUSED_RECOVERY') THEN w.status END AS holder_status,
       c.cargo_space_id IS NOT NULL AS known
FROM {spaces} AS c
FULL JOIN {locks} AS l
  ON l.cargo_space_id = c.cargo_space_id
LEFT JOIN alg.tidy_workflow AS w
  ON w.workflow_id = l.workflow_id
LEFT JOIN stalled AS st
  ON st.workflow_id = l.workflow_id
"""


RACK_MAP_ALL_SPACES = "public.bas_cargo_space"


RACK_MAP_ALL_LOCKS = "alg.tidy_space_lock"


# %(codes)s: the codes of one aisle (and the codes no aisle takes), from RACK_MAP_CODES.
RACK_MAP_OF_CODES_SPACES = """(SELECT cargo_space_id, tray_code
    FROM public.bas_cargo_space                                    -- bas_cargo_space_pkey
    WHERE cargo_space_id = ANY (%(codes)s::text[]))"""


RACK_MAP_OF_CODES_LOCKS = """(SELECT workflow_id, cargo_space_id
    FROM alg.tidy_space_lock                                -- tidy_space_lock_cargo_space_id_key
    WHERE cargo_space_id = ANY (%(codes)s::text[]))"""


# %(likes)s: LIKE patterns ('A01%' for aisle A01, wildcards in the aisle escaped).
RACK_MAP_OF_PREFIXES_SPACES = """(SELECT cargo_space_id, tray_code
    FROM public.bas_cargo_space
    WHERE cargo_space_id LIKE ANY (%(likes)s::text[]))"""


RACK_MAP_OF_PREFIXES_LOCKS = """(SELECT workflow_id, cargo_space_id
    FROM alg.tidy_space_lock
    WHERE cargo_space_id LIKE ANY (%(likes)s::text[]))"""


# Every code the map places: the spaces, and locks on codes bas_cargo_space does not list.
RACK_MAP_CODES = """
SELECT c.cargo_space_id
FROM public.bas_cargo_space AS c
UNION ALL
SELECT l.cargo_space_id
FROM alg.tidy_space_lock AS l
WHERE NOT EXISTS (SELECT 1
                  FROM public.bas_cargo_space AS c
                  WHERE c.cargo_space_id = l.cargo_space_id)  -- bas_cargo_space_pkey
"""


# Changes when a code is added, removed or renamed: the aisle list is read again only then.
RACK_MAP_CODES_FINGERPRINT = f"""
SELECT count(*),
       coalesce(sum(hashtext(codes.code)), 0)
FROM ({RACK_MAP_CODES}) AS codes(code)
"""


# The steps recovery paused (the workflow and its step both PAUSED_RECOVERY): the map draws
# each as an arrow from its source to its target.
RACK_MAP_PAUSED_STEPS = """
SELECT s.workflow_id,
       s.step_no,
       s.tray_code,
       s.cargo_space_id,
       s.target_cargo_space_id
FROM alg.tidy_workflow AS w
JOIN alg.tidy_step AS s
  ON s.workflow_id = w.workflow_id                          -- tidy_step_workflow_step_no_key
WHERE w.status = 'PAUSED_RECOVERY'                          -- tidy_workflow_paused_idx
  AND s.status = 'PAUSED_RECOVERY'
ORDER BY s.workflow_id, s.step_no
"""
