# Joins two console migrations written side by side: the cancel floor confirmation with batch
# progress, and the role-change audit. No operations.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0004_floor_confirmation_batch_progress"),
        ("console", "0005_role_change_audit"),
    ]

    operations = []
