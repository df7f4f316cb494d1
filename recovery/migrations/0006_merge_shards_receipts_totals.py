# Joins recovery migrations written side by side: cycle shards, backlog and one decision per
# workflow per cycle, with the receipts and journal totals. No operations.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("recovery", "0004_cycle_shards_backlog_decision_once"),
        ("recovery", "0005_merge_receipts_journal_totals"),
    ]

    operations = []
