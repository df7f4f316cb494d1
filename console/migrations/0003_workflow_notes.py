import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Notes are append-only in the database itself, like the repair audit (migration 0002): UPDATE
# and DELETE are refused for every row, TRUNCATE while the table holds rows, with the same
# session switch for the test suite's flush (SET tidy.audit_truncate_allowed = 'on').
APPEND_ONLY_SQL = """
CREATE FUNCTION console_workflownote_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        IF coalesce(current_setting('tidy.audit_truncate_allowed', true), '') = 'on'
           OR NOT EXISTS (SELECT 1 FROM console_workflownote) THEN
            RETURN NULL;
        END IF;
    END IF;
    RAISE EXCEPTION 'console_workflownote is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Notes are never edited or deleted; a correction is a new note.';
END;
$$;
CREATE TRIGGER console_workflownote_no_update_delete
    BEFORE UPDATE OR DELETE ON console_workflownote
    FOR EACH ROW EXECUTE FUNCTION console_workflownote_append_only();
CREATE TRIGGER console_workflownote_no_truncate
    BEFORE TRUNCATE ON console_workflownote
    FOR EACH STATEMENT EXECUTE FUNCTION console_workflownote_append_only();
ALTER TABLE console_workflownote
    ADD CONSTRAINT console_workflownote_text_length CHECK (char_length(text) BETWEEN 1 AND 2000);
"""

DROP_APPEND_ONLY_SQL = """
ALTER TABLE console_workflownote DROP CONSTRAINT IF EXISTS console_workflownote_text_length;
DROP TRIGGER IF EXISTS console_workflownote_no_truncate ON console_workflownote;
DROP TRIGGER IF EXISTS console_workflownote_no_update_delete ON console_workflownote;
DROP FUNCTION IF EXISTS console_workflownote_append_only();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0002_repair_audit'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='WorkflowNote',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('workflow_id', models.BigIntegerField()),
                ('at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('username', models.CharField(help_text='as signed in at the time', max_length=150)),
                ('text', models.TextField()),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-at', '-id'],
                'indexes': [models.Index(fields=['workflow_id', '-at'], name='workflow_note_wf_idx')],
            },
        ),
        migrations.RunSQL(APPEND_ONLY_SQL, DROP_APPEND_ONLY_SQL),
    ]
