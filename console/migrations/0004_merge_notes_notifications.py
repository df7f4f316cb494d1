# Joins the two branches of console migrations that were written side by side: workflow notes
# and notifications. No operations.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0003_notifications"),
        ("console", "0003_workflow_notes"),
    ]

    operations = []
