from django.core.management import call_command
from django.db import migrations, models


def declare_retention_schedule(apps, schema_editor):
    from recovery.runtime.retention import ensure_retention_schedule

    ensure_retention_schedule(apps.get_model("django_q", "Schedule"))


def create_cache_table(apps, schema_editor):
    # The shared cache (settings.CACHES); `manage.py release` runs createcachetable too. Here so
    # that every migrated database (tests, the replay's) has it before a qcluster writes to it.
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):

    dependencies = [
        ('recovery', '0003_callback_receipts_outbound_http'),
        ('django_q', '0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more'),
    ]

    operations = [
        migrations.CreateModel(
            name='JournalFold',
            fields=[
                ('journal', models.CharField(max_length=32, primary_key=True, serialize=False)),
                ('folded_before', models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name='JournalTotal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('journal', models.CharField(help_text='callbacks | decisions', max_length=32)),
                ('label1', models.CharField(help_text='callbacks: endpoint; decisions: action', max_length=64)),
                ('label2', models.CharField(help_text='callbacks: outcome; decisions: source', max_length=64)),
                ('total', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddIndex(
            model_name='recoverycycle',
            index=models.Index(fields=['-started_at'], name='recovery_cycle_started_idx'),
        ),
        migrations.AddIndex(
            model_name='recoverydecision',
            index=models.Index(fields=['decided_at'], name='recovery_decision_time_idx'),
        ),
        migrations.AddConstraint(
            model_name='journaltotal',
            constraint=models.UniqueConstraint(fields=('journal', 'label1', 'label2'), name='journal_total_key'),
        ),
        migrations.RunPython(declare_retention_schedule, migrations.RunPython.noop),
        migrations.RunPython(create_cache_table, migrations.RunPython.noop),
    ]
