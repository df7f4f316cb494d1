"""The unknown fields of WCS callbacks in the database (the tolerant reader, docs/architecture.md §8):
the site's labels for tidy_callback_unknown_fields_total and their counts.

At most CallbackFieldLabel.MAX_NAMES names are labels, for the whole site and for good, whichever
process saw them first; every other name is counted as `other`. A name takes a free slot of
recovery_callbackfieldlabel (its check constraint is the cap) under a table lock, so two processes
never take one slot or go past the cap. The counts are added when a callback is read
(recovery_callbackfieldtotal, a few shards per label), so /metrics sums a few hundred rows at most,
however many receipts there are.
"""

from django.db import connection, transaction

from recovery.engine import wms_sql
from recovery.engine.prepared import run_prepared
from recovery.models import CallbackFieldLabel, CallbackFieldTotal

OTHER = "other"


def field_labels_register(names: list[str]) -> frozenset[str]:
    """Make labels of `names` (distinct, in the order the body had them; `other` is never one)
    while free slots last, and return every label the site has: the caller learns the labels other
    processes made too. One short transaction of its own (a savepoint inside a caller's)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(wms_sql.LOCK_FIELD_LABELS)
        cursor.execute(wms_sql.REGISTER_FIELD_LABELS,
                       {"names": [n for n in names if n != OTHER], "max_names": CallbackFieldLabel.MAX_NAMES})
        return frozenset(row[0] for row in cursor.fetchall())


def unknown_fields_count(*, endpoint: str, counts: dict[str, int]) -> None:
    """Add `counts` ({label: names counted under it}) to tidy_callback_unknown_fields_total: one
    prepared statement, in autocommit (on a callback's path whenever the WCS sends a new field)."""
    labels = sorted(counts)
    run_prepared(wms_sql.COUNT_UNKNOWN_FIELDS, {
        "endpoint": endpoint, "fields": labels, "counts": [counts[label] for label in labels],
        "shards": CallbackFieldTotal.SHARDS})
