from django.db import migrations


def declare_schedule(apps, schema_editor):
    from recovery.runtime.schedule import ensure_recovery_schedule

    ensure_recovery_schedule(apps.get_model("django_q", "Schedule"))


class Migration(migrations.Migration):
    dependencies = [
        ("recovery", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(declare_schedule, migrations.RunPython.noop)]
