-- name: bulk_seed
-- Bulk warehouse data for the benchmarks and the scale tests (recovery.demo.warehouse.BulkSeeder):
-- workflows lo..hi with explicit ids, one step each (tray BT-<id> from BS-<id> to BD-<id>),
-- two locks, three stock rows. The kind decides the job rows and where the goods are:
-- healthy (leave), missing (pause: job missing), finished (advance), completed (complete).
-- The statements run one by one (split at each semicolon that ends a line).
INSERT INTO alg.tidy_workflow (workflow_id, origin, status)
SELECT g, CASE WHEN g %% 3 = 0 THEN 'MANUAL' ELSE 'AUTOMATIC' END, 'ACTIVE'
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO alg.tidy_step (step_id, workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id, status)
SELECT g, g, 1, 'BT-' || g, 'BS-' || g, 'BD-' || g,
       CASE WHEN %(kind)s = 'completed' THEN 'COMPLETED' ELSE 'DISPATCHED' END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
SELECT g, s || g FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, unnest(ARRAY['BS-', 'BD-']) AS s;

INSERT INTO public.bas_cargo_space (cargo_space_id, tray_code)
SELECT 'BS-' || g, CASE WHEN %(kind)s IN ('healthy', 'missing') THEN 'BT-' || g END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
UNION ALL
SELECT 'BD-' || g, CASE WHEN %(kind)s IN ('healthy', 'missing') THEN NULL ELSE 'BT-' || g END
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g;

INSERT INTO public.bas_stock (tray_code, cargo_space_id, sku, qty)
SELECT 'BT-' || g, CASE WHEN %(kind)s IN ('healthy', 'missing') THEN 'BS-' ELSE 'BD-' END || g, 'SKU-' || k, k * 3
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g, generate_series(1, 3) AS k;

INSERT INTO public.mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT 'TDY-' || g || '-' || g, 28, 2, 'BT-' || g, 'BS-' || g, 'BD-' || g
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
WHERE %(kind)s = 'healthy';

INSERT INTO public.mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id)
SELECT 'TDY-' || g || '-' || g, 28, 4, 'BT-' || g, 'BS-' || g, 'BD-' || g
FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
WHERE %(kind)s IN ('finished', 'completed');
