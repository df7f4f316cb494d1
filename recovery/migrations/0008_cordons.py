import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models

# Cordons and their lifts are append-only in the database itself, like the repair audit (console
# 0002): UPDATE and DELETE are refused for every row, TRUNCATE while the table holds rows, with
# the same session switch for the test suite's flush (SET tidy.audit_truncate_allowed = 'on').
# Lifting a cordon is a recovery_cordonlift row, never a change to the cordon.
APPEND_ONLY_SQL = """
CREATE FUNCTION recovery_cordon_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        IF coalesce(current_setting('tidy.audit_truncate_allowed', true), '') = 'on' THEN
            RETURN NULL;
        END IF;
        IF TG_TABLE_NAME = 'recovery_cordon' AND NOT EXISTS (SELECT 1 FROM recovery_cordon) THEN
            RETURN NULL;
        END IF;
        IF TG_TABLE_NAME = 'recovery_cordonlift' AND NOT EXISTS (SELECT 1 FROM recovery_cordonlift) THEN
            RETURN NULL;
        END IF;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'A cordon is never edited or deleted; lifting it is a new recovery_cordonlift row.';
END;
$$;
CREATE TRIGGER recovery_cordon_no_update_delete
    BEFORE UPDATE OR DELETE ON recovery_cordon
    FOR EACH ROW EXECUTE FUNCTION recovery_cordon_append_only();
CREATE TRIGGER recovery_cordon_no_truncate
    BEFORE TRUNCATE ON recovery_cordon
    FOR EACH STATEMENT EXECUTE FUNCTION recovery_cordon_append_only();
CREATE TRIGGER recovery_cordonlift_no_update_delete
    BEFORE UPDATE OR DELETE ON recovery_cordonlift
    FOR EACH ROW EXECUTE FUNCTION recovery_cordon_append_only();
CREATE TRIGGER recovery_cordonlift_no_truncate
    BEFORE TRUNCATE ON recovery_cordonlift
    FOR EACH STATEMENT EXECUTE FUNCTION recovery_cordon_append_only();
"""

DROP_APPEND_ONLY_SQL = """
DROP TRIGGER IF EXISTS recovery_cordonlift_no_truncate ON recovery_cordonlift;
DROP TRIGGER IF EXISTS recovery_cordonlift_no_update_delete ON recovery_cordonlift;
DROP TRIGGER IF EXISTS recovery_cordon_no_truncate ON recovery_cordon;
DROP TRIGGER IF EXISTS recovery_cordon_no_update_delete ON recovery_cordon;
DROP FUNCTION IF EXISTS recovery_cordon_append_only();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('recovery', '0007_observe_mode'),
    ]

    operations = [
        migrations.CreateModel(
            name='Cordon',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scope', models.CharField(choices=[('AISLE', 'Aisle'), ('SPACE', 'Space')], max_length=8)),
                ('place', models.CharField(help_text='the aisle (as SPACE_CODE_PATTERN names it) or the space code', max_length=100)),
                ('reason', models.TextField(help_text='why, as the shift lead wrote it')),
                ('created_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('created_by', models.CharField(help_text='username as signed in at the time', max_length=150)),
                ('ends_at', models.DateTimeField(blank=True, help_text='none: until lifted', null=True)),
            ],
            options={
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='CordonLift',
            fields=[
                ('cordon', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='lift', serialize=False, to='recovery.cordon')),
                ('lifted_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('lifted_by', models.CharField(help_text='username as signed in at the time', max_length=150)),
            ],
        ),
        migrations.AddIndex(
            model_name='cordon',
            index=models.Index(fields=['scope', 'place'], name='recovery_cordon_place_idx'),
        ),
        migrations.AddConstraint(
            model_name='cordon',
            constraint=models.CheckConstraint(condition=models.Q(('scope__in', ['AISLE', 'SPACE'])), name='recovery_cordon_scope'),
        ),
        migrations.AddConstraint(
            model_name='cordon',
            constraint=models.CheckConstraint(condition=models.Q(('ends_at__isnull', True), ('ends_at__gt', models.F('created_at')), _connector='OR'), name='recovery_cordon_ends_after_start'),
        ),
        migrations.RunSQL(APPEND_ONLY_SQL, DROP_APPEND_ONLY_SQL),
    ]
