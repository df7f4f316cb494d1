"""Set up the owner and runtime database roles (deploy/sql/roles.sql).

Run as a superuser, connected to the console's database (DATABASE_URL of an administrator),
after `manage.py migrate`. Idempotent. `--print-sql` prints what it would run instead, for a DBA
to review or run with psql.
"""

import re
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection

from console.security.sql import SET_ROLE_NAMES

ROLES_SQL = Path(settings.BASE_DIR) / "deploy" / "sql" / "roles.sql"
ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class Command(BaseCommand):
    help = "Create (or repair) the owner role (runs migrations) and the runtime role (console, qcluster)."

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, help="role that owns the console's tables and runs migrations")
        parser.add_argument("--runtime", required=True, help="role the console and the qcluster connect as")
        parser.add_argument("--print-sql", action="store_true", help="print the SQL instead of running it")

    def handle(self, *args, owner: str, runtime: str, print_sql: bool, **options):
        for flag, name in (("--owner", owner), ("--runtime", runtime)):
            if not ROLE_NAME.fullmatch(name):
                raise CommandError(f"{flag} must be a lower-case PostgreSQL name (letters, digits, _), got {name!r}")
        if owner == runtime:
            raise CommandError("--owner and --runtime must be two different roles")
        body = ROLES_SQL.read_text()
        schema = settings.CONSOLE_DB_SCHEMA  # a plain name: checked when the settings were read
        if print_sql:
            self.stdout.write(f"SELECT set_config('tidy.owner_role', '{owner}', false), "
                              f"set_config('tidy.runtime_role', '{runtime}', false), "
                              f"set_config('tidy.console_schema', '{schema}', false);\n{body}")
            return
        try:
            with connection.cursor() as cursor:
                cursor.execute(SET_ROLE_NAMES, {"owner": owner, "runtime": runtime, "schema": schema})
                cursor.execute(body)
        except DatabaseError as exc:
            raise CommandError(f"could not set up the roles (run this as a superuser): {exc}") from exc
        self.stdout.write(self.style.SUCCESS(
            f"owner role {owner!r} owns the console's schema {schema!r} and its tables; runtime role {runtime!r} may "
            "read and write them and the WMS's tables but only SELECT and INSERT the audit tables; both find the "
            f"console's tables through their search_path ({schema}, public) in this database."))
        self.stdout.write(f"Next: give both roles a password (ALTER ROLE {runtime} PASSWORD ...), run migrations as "
                          f"{owner!r}, and the console and qcluster with {runtime!r} in DATABASE_URL.")
