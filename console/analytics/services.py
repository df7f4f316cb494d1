"""The analytics' one mutation: storing a computation of the figures as the newest snapshot and
keeping only the newest few (one transaction)."""

from datetime import datetime

from django.db import transaction

from console.models import AnalyticsSnapshot

KEEP_SNAPSHOTS = 5


def snapshot_record(*, computed_at: datetime, figures: dict, duration_ms: float) -> AnalyticsSnapshot:
    with transaction.atomic():
        snapshot = AnalyticsSnapshot.objects.create(computed_at=computed_at, figures=figures,
                                                    duration_ms=duration_ms)
        kept = AnalyticsSnapshot.objects.order_by("-computed_at", "-id").values("pk")[:KEEP_SNAPSHOTS]
        AnalyticsSnapshot.objects.exclude(pk__in=list(kept.values_list("pk", flat=True))).delete()
    return snapshot
