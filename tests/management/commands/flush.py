"""The test database's flush, which Django's test cases run after every test whose rows were
committed (the `committed_db` opt-in, live servers): the same end state for the tests, a fifth of
the time.

Django's flush empties every table of every app with one TRUNCATE, then runs post_migrate again to
put back the content types and permissions it removed: about 0.3 s after each such test, most of
it spent on tables the test never wrote. This one truncates only the tables that hold rows, and
keeps the rows that migrate writes and no test changes (migrations, content types, permissions),
so nothing has to be put back. Everything else is as Django's: the groups of the roles migration
are emptied too, and the test fixtures create what they need.
"""

from django.core.management.commands import flush
from django.db import connections

# Written by migrate and its post_migrate signal, never by a test: kept.
KEPT = frozenset({"django_migrations", "django_content_type", "auth_permission"})


class Command(flush.Command):
    def handle(self, **options):
        if options["interactive"] or options.get("reset_sequences"):
            return super().handle(**options)
        connection = connections[options["database"]]
        tables = sorted(set(connection.introspection.django_table_names(only_existing=True, include_views=False))
                        - KEPT)
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            # One statement: which of them hold a row.
            cursor.execute(" UNION ALL ".join(f"SELECT %s WHERE EXISTS (SELECT FROM {quote(table)})"
                                              for table in tables), tables)
            filled = [table for (table,) in cursor.fetchall()]
            if filled:
                # CASCADE: an empty table that references a filled one is emptied with it.
                cursor.execute(f"TRUNCATE {', '.join(quote(table) for table in filled)} CASCADE")
