"""The console's tables in their own schema, CONSOLE_DB_SCHEMA (design §16). `migrate` creates the
schema and sets the migrating role's search_path before the first migration runs
(console.database.schema, pre_migrate), so on a fresh database every table is made there; here, the
tables and functions an earlier release made in public move over, with their rows, indexes,
sequences and triggers. The WMS's own tables in public stay where they are."""

from django.db import migrations

from console.database.schema import move_console_objects


def move_to_console_schema(apps, schema_editor):
    move_console_objects(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0015_directory_identity'),
    ]

    # Moving back into public would put the console's tables beside the WMS's again: not offered.
    operations = [
        migrations.RunPython(move_to_console_schema, migrations.RunPython.noop),
    ]
