# Joins two recovery migrations written side by side: unauthorized callback receipts and the
# journal totals with their indexes. No operations.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("recovery", "0004_callback_receipt_unauthorized"),
        ("recovery", "0004_journal_totals_and_indexes"),
    ]

    operations = []
