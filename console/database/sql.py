"""Named SQL of the console's schema and of the statement timeout. Server-level statements on
catalogues (pg_namespace, pg_class, pg_proc): no index of ours is involved, each reads a few rows.
Identifiers (the schema, the database, a table) cannot be bind parameters: they are quoted by
psycopg.sql (console/database/schema.py composes them)."""

from psycopg import sql

# Parameter: %(schema)s. Where this session's unqualified names go (the first existing schema of
# its search_path), whether the console's schema exists, and the database the role setting is for.
SEARCH_PATH_STATE = """
SELECT current_schema() AS current_schema,
       to_regnamespace(%(schema)s) IS NOT NULL AS schema_exists,
       current_database() AS database
"""

# Created by `migrate` (the role that migrates needs CREATE on the database, or a DBA creates the
# schema first and gives it to that role).
CREATE_SCHEMA = sql.SQL("CREATE SCHEMA IF NOT EXISTS {schema}")

# The role's own default in this database only (every role may set its own; nothing of the WMS's
# roles or of other databases changes). New sessions start with it, also a PgBouncer server
# connection in transaction mode: nothing is set per session that a pool could hand to another client.
SET_ROLE_SEARCH_PATH = sql.SQL("ALTER ROLE CURRENT_USER IN DATABASE {database} SET search_path TO {schema}, public")

# The session that just set the role's default (it applies to new sessions only) uses it too; the
# same value as the role's, so a pool that keeps this server connection hands out nothing else.
SET_SESSION_SEARCH_PATH = "SELECT set_config('search_path', %(search_path)s, false)"

# Parameter: %(tables)s, every table name of the installed apps (with django_migrations and the
# cache table). Those an earlier release left in public.
CONSOLE_TABLES_IN_PUBLIC = """
SELECT c.relname
FROM pg_class AS c
JOIN pg_namespace AS n
    ON n.oid = c.relnamespace
WHERE n.nspname = 'public'
  AND c.relkind IN ('r', 'p')
  AND c.relname = ANY (%(tables)s::text[])
ORDER BY c.relname
"""

# Parameters: %(tables)s, %(schema)s. Tables that exist both in public and in the console's schema:
# moving would fail; the migration names them instead.
CONSOLE_TABLES_IN_BOTH = """
SELECT c.relname
FROM pg_class AS c
JOIN pg_namespace AS n
    ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s
  AND c.relkind IN ('r', 'p')
  AND c.relname = ANY (%(tables)s::text[])
  AND to_regclass(format('public.%%I', c.relname)) IS NOT NULL
ORDER BY c.relname
"""

# The console's own functions in public (the append-only triggers' functions of the migrations of
# console and recovery: console_*, recovery_*), with their argument list as ALTER FUNCTION needs it.
CONSOLE_FUNCTIONS_IN_PUBLIC = """
SELECT p.proname,
       pg_get_function_identity_arguments(p.oid) AS arguments
FROM pg_proc AS p
JOIN pg_namespace AS n
    ON n.oid = p.pronamespace
WHERE n.nspname = 'public'
  AND p.proname ~ '^(console|recovery)_'
ORDER BY p.proname
"""

MOVE_TABLE = sql.SQL("ALTER TABLE public.{table} SET SCHEMA {schema}")

# {arguments} comes from pg_get_function_identity_arguments (the catalogue's own text).
MOVE_FUNCTION = sql.SQL("ALTER FUNCTION public.{function}({arguments}) SET SCHEMA {schema}")

# Parameter: %(milliseconds)s. Only until the end of the request's transaction (is_local): a pool
# in transaction mode never hands it to another client, and nothing after the page is bound by it.
SET_LOCAL_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', %(milliseconds)s, true)"
