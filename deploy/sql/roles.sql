-- Database roles of the Tidy Recovery Console (docs/operations.md "Security", database roles).
--
-- Two roles: the OWNER runs migrations and owns the console's schema (CONSOLE_DB_SCHEMA, default
-- tidy_console) and everything in it; the RUNTIME role runs the web console and the qcluster. The
-- runtime role reads and writes what it needs (the console's tables and the WMS tables), but never
-- owns a table and may only SELECT and INSERT on the audit tables: UPDATE, DELETE, TRUNCATE and
-- trigger changes there are impossible for it, whatever the application does. `manage.py check
-- --database default`, run as the runtime role, reports a role that could alter the audit
-- (console.W110). Grants go by schema: the console's schema for the console's tables, `public` and
-- `alg` for the WMS's; neither role may create anything in the WMS's schemas. Both roles find the
-- console's tables through their search_path in this database (`<schema>, public`), set here.
--
-- Run as a superuser connected to the console's database, after the migrations. Idempotent.
-- The role and schema names come from three session settings, set first in the same session:
--   manage.py db_roles --owner tidy_owner --runtime tidy_runtime      (sets them and runs this)
--   psql "$ADMIN_DATABASE_URL" \
--     -c "SELECT set_config('tidy.owner_role', 'tidy_owner', false), set_config('tidy.runtime_role', 'tidy_runtime', false), set_config('tidy.console_schema', 'tidy_console', false)" \
--     -f deploy/sql/roles.sql
-- Roles are created without a password: set one with ALTER ROLE ... PASSWORD (or use
-- certificates) and put the runtime role in the console's DATABASE_URL.
DO $roles$
DECLARE
    owner_role   text := current_setting('tidy.owner_role');
    runtime_role text := current_setting('tidy.runtime_role');
    console      text := current_setting('tidy.console_schema');
    -- The append-only tables: repair audit, role changes, workflow notes, notification
    -- acknowledgements, silences and their endings, cordons and their lifts, break-glass sign-ins
    -- (those that exist are handled).
    audit_tables text[] := ARRAY['console_repairaudit', 'console_rolechangeaudit', 'console_workflownote',
                                 'console_notificationacknowledgement', 'console_silence',
                                 'console_silenceending', 'recovery_cordon', 'recovery_cordonlift',
                                 'console_breakglasssignin'];
    -- The WMS's schemas: public (the job and stock tables), alg (the workflow tables).
    wms_schemas  text[] := ARRAY['public', 'alg'];
    s            text;
    t            text;
    rel          record;
BEGIN
    IF owner_role = '' OR runtime_role = '' OR owner_role = runtime_role THEN
        RAISE EXCEPTION 'set tidy.owner_role and tidy.runtime_role to two different role names first';
    END IF;
    IF console = '' OR console = ANY (wms_schemas) THEN
        RAISE EXCEPTION 'set tidy.console_schema to the console''s own schema (CONSOLE_DB_SCHEMA) first';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = owner_role) THEN
        EXECUTE format('CREATE ROLE %I LOGIN', owner_role);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = runtime_role) THEN
        EXECUTE format('CREATE ROLE %I LOGIN', runtime_role);
    END IF;
    -- The runtime role is nobody special: not a superuser, and never able to act as the owner.
    EXECUTE format('ALTER ROLE %I NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS', runtime_role);
    IF pg_has_role(runtime_role, owner_role, 'MEMBER') THEN
        EXECUTE format('REVOKE %I FROM %I', owner_role, runtime_role);
    END IF;
    -- Whatever the runtime role created (migrations that once ran as it) now belongs to the owner.
    EXECUTE format('REASSIGN OWNED BY %I TO %I', runtime_role, owner_role);
    -- The console's schema and everything in it (tables with their sequences, the append-only
    -- triggers' functions) belong to the owner, who migrates them.
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', console, owner_role);
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', console, owner_role);
    FOR rel IN
        SELECT c.relname
        FROM pg_class AS c
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = console
          AND c.relkind IN ('r', 'p')
    LOOP
        EXECUTE format('ALTER TABLE %I.%I OWNER TO %I', console, rel.relname, owner_role);
    END LOOP;
    FOR rel IN
        SELECT p.oid::regprocedure AS fn
        FROM pg_proc AS p
        JOIN pg_namespace AS n ON n.oid = p.pronamespace
        WHERE n.nspname = console
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', rel.fn, owner_role);
    END LOOP;
    -- Both find the console's tables first, the WMS's by their schema-qualified names.
    EXECUTE format('ALTER ROLE %I IN DATABASE %I SET search_path TO %I, public', owner_role, current_database(), console);
    EXECUTE format('ALTER ROLE %I IN DATABASE %I SET search_path TO %I, public', runtime_role, current_database(), console);

    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO %I, %I', current_database(), owner_role, runtime_role);
    -- The console's schema: the owner creates in it, the runtime role reads and writes its tables.
    EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO %I', console, owner_role);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', console, runtime_role);
    EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC, %I', console, runtime_role);
    EXECUTE format('REVOKE ALL ON SCHEMA %I FROM PUBLIC', console);
    -- The WMS's schemas: nobody of the console creates anything there; the runtime role reads and
    -- writes the WMS's tables (recovery and repairs change them) and runs its procedure.
    FOREACH s IN ARRAY wms_schemas LOOP
        CONTINUE WHEN to_regnamespace(s) IS NULL;
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I, %I', s, owner_role, runtime_role);
        EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM %I, %I', s, owner_role, runtime_role);
    END LOOP;
    FOREACH s IN ARRAY array_prepend(console, wms_schemas) LOOP
        CONTINUE WHEN to_regnamespace(s) IS NULL;
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO %I', s, runtime_role);
        EXECUTE format('REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA %I FROM %I', s, runtime_role);
        EXECUTE format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA %I TO %I', s, runtime_role);
        EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO %I', s, runtime_role);
    END LOOP;
    -- Tables a later migration creates get the same grants (an audit table added later must
    -- revoke UPDATE and DELETE in its migration; the system check reports it otherwise).
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I '
                   'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', owner_role, console, runtime_role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I '
                   'GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO %I', owner_role, console, runtime_role);

    FOREACH t IN ARRAY audit_tables LOOP
        CONTINUE WHEN to_regclass(format('%I.%I', console, t)) IS NULL;
        EXECUTE format('REVOKE ALL ON TABLE %I.%I FROM PUBLIC, %I', console, t, runtime_role);
        EXECUTE format('GRANT SELECT, INSERT ON TABLE %I.%I TO %I', console, t, runtime_role);
    END LOOP;
END
$roles$;
