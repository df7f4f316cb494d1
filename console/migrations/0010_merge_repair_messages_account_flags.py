# Merges the repair audit's stored messages with the account flags and the note index.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0008_repair_audit_messages'),
        ('console', '0009_workflow_note_user_time_index'),
    ]

    operations = [
    ]
