"""Named SQL of the read replica (console/replica/__init__.py)."""

# Run on the replica: seconds its replay is behind the primary. 0 when everything received is
# replayed (an idle primary sends nothing, and the last replayed commit grows old without any lag:
# postgres_exporter's rule, no false alarm) and on a server that is not a standby.
REPLICA_LAG = """
SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0
            WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
            ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))
       END::float8 AS lag_seconds
"""
