"""Named SQL of the repair feature's own coordination: one run of a batch re-check at a time
(console.repair.batch)."""


# One run of a batch re-check at a time (console.repair.batch): a session-level advisory lock
# on (namespace, batch id), held for the whole run and released at its end, or by PostgreSQL
# when the worker's connection dies. A second delivery of the task finds it taken and leaves.
# Parameters: %(namespace)s and %(key)s, both 32-bit (the batch id folded into 31 bits).
TRY_BATCH_RUN_LOCK = "SELECT pg_try_advisory_lock(%(namespace)s, %(key)s)"


RELEASE_BATCH_RUN_LOCK = "SELECT pg_advisory_unlock(%(namespace)s, %(key)s)"
