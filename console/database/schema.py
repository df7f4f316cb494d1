"""The console's tables in their own schema, CONSOLE_DB_SCHEMA (design §16), never in `public`
beside the WMS's tables.

Unqualified names (every model's table, every console_* and recovery_* statement) find the
console's schema through the search_path of the role in this database, `<schema>, public`; the
WMS's tables are always named with their schema (public.mydo_job, alg.tidy_step, ...). The role's
setting, not a libpq startup option or a session SET, is what new sessions start with, so a
PgBouncer in transaction mode needs nothing of its own.

- `migrate` (pre_migrate) creates the schema if it is missing and sets the migrating role's
  search_path before any table is created, then the console's migration 0014 moves what an earlier
  release left in public (`move_console_objects`).
- `manage.py db_roles` sets it for the owner and the runtime roles (deploy/sql/roles.sql).
- Any other process's new connection sets its role's own default when the schema exists but the
  role has none yet (a runtime role from before this release), so it never reads an empty public.
"""

import logging

from django.conf import settings
from django.core.checks import Warning
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.signals import connection_created
from django.db.models.signals import pre_migrate
from django.dispatch import receiver
from psycopg import sql as pgsql

from console.database import sql

log = logging.getLogger("console.database")


def search_path(schema: str) -> str:
    return f"{schema}, public"


def _compose(db, statement: pgsql.Composable) -> str:
    return statement.as_string(db.connection)


def ensure_search_path(db, *, create: bool) -> bool:
    """Make the console's schema the first of this role's search_path in this database (and of
    this session). With `create`, the schema is created when missing; without, a database that has
    none yet is left alone. True when something was set."""
    schema = settings.CONSOLE_DB_SCHEMA
    with db.cursor() as cursor:
        cursor.execute(sql.SEARCH_PATH_STATE, {"schema": schema})
        current, exists, database = cursor.fetchone()
        if current == schema:
            return False
        if not exists and not create:
            return False
        if not exists:
            try:
                cursor.execute(_compose(db, sql.CREATE_SCHEMA.format(schema=pgsql.Identifier(schema))))
            except DatabaseError as exc:
                raise ImproperlyConfigured(
                    f"could not create the schema {schema} (CONSOLE_DB_SCHEMA) in database {database}: {exc}. "
                    f"Give the role that migrates CREATE on the database, or have a DBA run "
                    f'CREATE SCHEMA {schema} AUTHORIZATION "<that role>" first.') from exc
        cursor.execute(_compose(db, sql.SET_ROLE_SEARCH_PATH.format(
            database=pgsql.Identifier(database), schema=pgsql.Identifier(schema))))
        cursor.execute(sql.SET_SESSION_SEARCH_PATH, {"search_path": search_path(schema)})
    log.info("the role's search_path in database %s now starts with the console's schema %s", database, schema)
    return True


@receiver(pre_migrate)
def console_schema_before_migrations(sender, using=DEFAULT_DB_ALIAS, **kwargs):
    """Before the first migration creates a table (pre_migrate is sent before django_migrations
    is created): the schema, and the migrating role's search_path. Sent once per app: the first
    call does the work, the others read one row."""
    if using == DEFAULT_DB_ALIAS:
        ensure_search_path(connections[using], create=True)


@receiver(connection_created)
def console_schema_on_connect(sender, connection, **kwargs):
    """Only the primary (default) connection: a replica follows the primary's role settings."""
    if connection.alias == DEFAULT_DB_ALIAS and connection.vendor == "postgresql":
        try:
            ensure_search_path(connection, create=False)
        except DatabaseError as exc:  # the queries then say which table they do not find
            log.warning("could not set the role's search_path to the console's schema %s: %s",
                        settings.CONSOLE_DB_SCHEMA, exc)


def console_table_names(db) -> list[str]:
    """Every table of the installed apps (managed models: the WMS's are not), Django's migration
    record and the database cache's tables."""
    names = set(db.introspection.django_table_names(only_existing=False, include_views=False))
    names.add("django_migrations")
    for cache in settings.CACHES.values():
        if cache.get("BACKEND") == "django.core.cache.backends.db.DatabaseCache":
            names.add(cache["LOCATION"])
    return sorted(names)


def move_console_objects(db) -> list[str]:
    """Move the console's tables (with their indexes, sequences and triggers) and functions that
    an earlier release made in public into the console's schema; returns what moved. Refuses,
    naming them, tables that exist in both."""
    schema = settings.CONSOLE_DB_SCHEMA
    target = pgsql.Identifier(schema)
    tables = console_table_names(db)
    moved = []
    with db.cursor() as cursor:
        cursor.execute(sql.CONSOLE_TABLES_IN_BOTH, {"tables": tables, "schema": schema})
        both = [row[0] for row in cursor.fetchall()]
        if both:
            raise ImproperlyConfigured(
                f"these tables exist both in public and in {schema} (CONSOLE_DB_SCHEMA): {', '.join(both)}; "
                f"keep the one with the console's data and drop the other before migrating")
        cursor.execute(sql.CONSOLE_TABLES_IN_PUBLIC, {"tables": tables})
        for (table,) in cursor.fetchall():
            cursor.execute(_compose(db, sql.MOVE_TABLE.format(table=pgsql.Identifier(table), schema=target)))
            moved.append(table)
        cursor.execute(sql.CONSOLE_FUNCTIONS_IN_PUBLIC)
        for function, arguments in cursor.fetchall():
            cursor.execute(_compose(db, sql.MOVE_FUNCTION.format(
                function=pgsql.Identifier(function), arguments=pgsql.SQL(arguments), schema=target)))
            moved.append(f"{function}()")
    return moved


def check_console_schema_in_use(app_configs=None, databases=None, **kwargs):
    """System check (`manage.py check --database default`): this role's sessions find the console's
    tables in CONSOLE_DB_SCHEMA, not in public."""
    if not databases or DEFAULT_DB_ALIAS not in databases:
        return []
    schema = settings.CONSOLE_DB_SCHEMA
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(sql.SEARCH_PATH_STATE, {"schema": schema})
            current, exists, database = cursor.fetchone()
    except DatabaseError as exc:
        return [Warning(f"Could not read the search_path of the console's database: {exc}", id="console.W120")]
    if current == schema:
        return []
    if not exists:
        # Also shown once by the first `migrate` itself, which then creates it.
        return [Warning(f"The console's schema {schema} (CONSOLE_DB_SCHEMA) does not exist yet in database "
                        f"{database}.", hint="`manage.py migrate` creates it (and moves the console's tables there).",
                        id="console.W121")]
    return [Warning(f"This role's sessions in database {database} create and look up tables in {current}, not in "
                    f"the console's schema {schema} (CONSOLE_DB_SCHEMA).",
                    hint=f"Run `manage.py db_roles` or: ALTER ROLE <role> IN DATABASE {database} SET search_path TO "
                         f"{schema}, public", id="console.W122")]
