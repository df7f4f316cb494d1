"""Named SQL of the recovery runner's leases (recovery/runtime/lease.py) and of the recovery processes'
heartbeats (recovery/runtime/processes.py): session advisory locks and the runner's own table, no WMS
table."""


# --- process heartbeats (recovery/runtime/processes.py) ------------------------------------------------

# One worker process says it is alive and which shards it holds. Its first beat sets started_at;
# later ones move last_seen_at and the shards. Keyed by the worker: two runners of one cluster
# (a handover) each keep their own row.
PROCESS_BEAT = """
INSERT INTO recovery_processheartbeat (worker, cluster, host, cluster_pid, started_at, last_seen_at, shards,
                                       shard_count)
VALUES (%(worker)s, %(cluster)s, %(host)s, %(cluster_pid)s, now(), now(), %(shards)s::jsonb, %(shard_count)s)
ON CONFLICT (worker) DO UPDATE
SET last_seen_at = now(),
    shards = excluded.shards,
    shard_count = excluded.shard_count
"""

# Rows of processes not seen for a day: long gone (a process's pid is not reused in its row's lifetime
# that matters; the page shows ten minutes). Relies on recovery_heartbeat_seen_idx.
PROCESS_FORGET = """
DELETE FROM recovery_processheartbeat
WHERE last_seen_at < now() - interval '1 day'
"""


# --- leases: session advisory locks of the recovery runner (recovery/runtime/lease.py) ---------------

# An advisory lock belongs to one database, but pg_locks shows every database of the server: each
# read below keeps to this database's rows (`database`, the current database's oid), so the runners
# of another deployment on the same server (or a parallel test run's) are never counted as ours.

LEASE_TRY = "SELECT pg_try_advisory_lock(%(key)s)"

LEASE_WAIT = "SELECT pg_advisory_lock(%(key)s)"

LEASE_RELEASE = "SELECT pg_advisory_unlock(%(key)s)"

# The presence key every live runner holds in shared mode (never blocks another holder).
LEASE_SHARED = "SELECT pg_advisory_lock_shared(%(key)s)"

# Live runners (holders of the presence key) that hold no shard lease: runners standing by, e.g.
# the schedule's next runner waiting for this one to hand over (docs/architecture.md §7).
LEASE_RUNNERS_WAITING = """
SELECT count(*)
FROM pg_locks AS p
WHERE p.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND p.locktype = 'advisory'
  AND p.classid = 0
  AND p.objid::bigint = %(presence_key)s
  AND p.objsubid = 1
  AND p.mode = 'ShareLock'
  AND p.granted
  AND NOT EXISTS (
      SELECT 1
      FROM pg_locks AS s
      WHERE s.pid = p.pid
        AND s.database = p.database
        AND s.locktype = 'advisory'
        AND s.classid = 0
        AND s.objid::bigint = ANY (%(shard_keys)s::bigint[])
        AND s.objsubid = 1
        AND s.mode = 'ExclusiveLock'
        AND s.granted
  )
"""

# Whether the lease %(lease_key)s is held by a live runner (a session that also holds the
# presence key), rather than by anything else.
LEASE_HELD_BY_RUNNER = """
SELECT EXISTS (
    SELECT 1
    FROM pg_locks AS l
    JOIN pg_locks AS p ON p.pid = l.pid
    WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.locktype = 'advisory' AND l.classid = 0 AND l.objid::bigint = %(lease_key)s
      AND l.objsubid = 1 AND l.mode = 'ExclusiveLock' AND l.granted
      AND p.database = l.database
      AND p.locktype = 'advisory' AND p.classid = 0 AND p.objid::bigint = %(presence_key)s
      AND p.objsubid = 1 AND p.mode = 'ShareLock' AND p.granted
)
"""

# How many sessions hold the presence key: the live runners, this one included.
LEASE_SHARED_HOLDERS = """
SELECT count(*)
FROM pg_locks
WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND locktype = 'advisory'
  AND classid = 0
  AND objid = %(key)s
  AND objsubid = 1
  AND mode = 'ShareLock'
  AND granted
"""

# Whether this session still holds the lease (a reconnect would silently have dropped it).
LEASE_HELD = """
SELECT count(*)
FROM pg_locks
WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND locktype = 'advisory'
  AND pid = pg_backend_pid()
  AND objid = %(key)s
  AND granted
"""
