-- Database roles of the Tidy Recovery Console (docs/operations.md "Security", database roles).
--
-- Two roles: the OWNER runs migrations and owns the console's (Django's) tables; the RUNTIME
-- role runs the web console and the qcluster. The runtime role reads and writes what it needs
-- (the console's tables and the WMS tables), but never owns a table and may only SELECT and
-- INSERT on the audit tables: UPDATE, DELETE, TRUNCATE and trigger changes there are impossible
-- for it, whatever the application does. `manage.py check --database default`, run as the
-- runtime role, reports a role that could alter the audit (console.W110).
--
-- Run as a superuser connected to the console's database, after the migrations. Idempotent.
-- The role names come from two session settings, set first in the same session:
--   manage.py db_roles --owner tidy_owner --runtime tidy_runtime      (sets them and runs this)
--   psql "$ADMIN_DATABASE_URL" \
--     -c "SELECT set_config('tidy.owner_role', 'tidy_owner', false), set_config('tidy.runtime_role', 'tidy_runtime', false)" \
--     -f deploy/sql/roles.sql
-- Roles are created without a password: set one with ALTER ROLE ... PASSWORD (or use
-- certificates) and put the runtime role in the console's DATABASE_URL.
DO $roles$
DECLARE
    owner_role   text := current_setting('tidy.owner_role');
    runtime_role text := current_setting('tidy.runtime_role');
    -- The append-only tables: repair audit, role changes, workflow notes, notification
    -- acknowledgements, silences and their endings, cordons and their lifts, break-glass sign-ins
    -- (those that exist are handled).
    audit_tables text[] := ARRAY['console_repairaudit', 'console_rolechangeaudit', 'console_workflownote',
                                 'console_notificationacknowledgement', 'console_silence',
                                 'console_silenceending', 'recovery_cordon', 'recovery_cordonlift',
                                 'console_breakglasssignin'];
    -- public: Django's tables and the WMS job/stock tables; alg: the WMS workflow tables.
    schemas      text[] := ARRAY['public', 'alg'];
    s            text;
    t            text;
    rel          record;
BEGIN
    IF owner_role = '' OR runtime_role = '' OR owner_role = runtime_role THEN
        RAISE EXCEPTION 'set tidy.owner_role and tidy.runtime_role to two different role names first';
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
    -- Django's own tables (and their sequences) belong to the owner, who migrates them.
    FOR rel IN
        SELECT c.relname
        FROM pg_class AS c
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public'
          AND c.relkind IN ('r', 'p')
          AND c.relname ~ '^(auth|django|console|recovery|axes)_'
    LOOP
        EXECUTE format('ALTER TABLE public.%I OWNER TO %I', rel.relname, owner_role);
    END LOOP;
    FOR rel IN
        SELECT p.oid::regprocedure AS fn
        FROM pg_proc AS p
        JOIN pg_namespace AS n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public'
          AND p.proname LIKE 'console\_%'
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', rel.fn, owner_role);
    END LOOP;

    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO %I, %I', current_database(), owner_role, runtime_role);
    FOREACH s IN ARRAY schemas LOOP
        CONTINUE WHEN to_regnamespace(s) IS NULL;
        EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO %I', s, owner_role);
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', s, runtime_role);
        EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM %I', s, runtime_role);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO %I', s, runtime_role);
        EXECUTE format('REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA %I FROM %I', s, runtime_role);
        EXECUTE format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA %I TO %I', s, runtime_role);
        EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO %I', s, runtime_role);
        -- Tables a later migration creates get the same grants (an audit table added later must
        -- revoke UPDATE and DELETE in its migration; the system check reports it otherwise).
        EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I '
                       'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', owner_role, s, runtime_role);
        EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I '
                       'GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO %I', owner_role, s, runtime_role);
    END LOOP;

    FOREACH t IN ARRAY audit_tables LOOP
        CONTINUE WHEN to_regclass(t) IS NULL;
        EXECUTE format('REVOKE ALL ON TABLE %I FROM PUBLIC, %I', t, runtime_role);
        EXECUTE format('GRANT SELECT, INSERT ON TABLE %I TO %I', t, runtime_role);
    END LOOP;
END
$roles$;
