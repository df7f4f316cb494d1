"""Named SQL of the security checks: who could alter an append-only audit table, and the role
names deploy/sql/roles.sql reads (`manage.py db_roles`)."""


# Parameter: %(tables)s, the append-only audit tables. For each one that exists: could the
# connected role alter it? Owning it (or being able to act as its owner) allows ALTER TABLE ...
# DISABLE TRIGGER; UPDATE, DELETE and TRUNCATE grants, a superuser, or membership of the test
# role tidy_audit_test (whose TRUNCATE switch the trigger honours) are the other ways.
AUDIT_TABLE_ALTERABLE = """
SELECT c.relname AS table_name,
       current_user AS role_name,
       r.rolsuper AS superuser,
       pg_has_role(current_user, c.relowner, 'MEMBER') AS owner,
       has_table_privilege(c.oid, 'UPDATE') AS can_update,
       has_table_privilege(c.oid, 'DELETE') AS can_delete,
       has_table_privilege(c.oid, 'TRUNCATE') AS can_truncate,
       has_table_privilege(c.oid, 'TRIGGER') AS can_trigger,
       CASE WHEN to_regrole('tidy_audit_test') IS NULL THEN false
            ELSE pg_has_role(current_user, 'tidy_audit_test', 'MEMBER')
       END AS audit_test_role
FROM pg_class AS c
JOIN pg_roles AS r
  ON r.rolname = current_user
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(%(tables)s::text[]) AS t)
ORDER BY c.relname
"""


# The role names and the console's schema deploy/sql/roles.sql reads (session settings, so the
# file itself has no parameters and runs with psql as well).
SET_ROLE_NAMES = """
SELECT set_config('tidy.owner_role', %(owner)s, false),
       set_config('tidy.runtime_role', %(runtime)s, false),
       set_config('tidy.console_schema', %(schema)s, false)
"""
