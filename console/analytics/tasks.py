"""The scheduled analytics task (schedule `tidy-analytics`, every ANALYTICS_REFRESH_MINUTES, in
the qcluster): the page's statements, run here off the request path, stored as a snapshot."""

import time

from django.utils import timezone

from console.analytics import selectors, services


def refresh_analytics() -> dict:
    """Compute the figures for now and store them as the newest snapshot."""
    started = time.monotonic()
    now = timezone.now()
    figures = selectors.compute_figures(now=now)
    duration_ms = (time.monotonic() - started) * 1000
    snapshot = services.snapshot_record(computed_at=now, figures=figures, duration_ms=duration_ms)
    return {"snapshot": snapshot.pk, "computed_at": now.isoformat(), "duration_ms": round(duration_ms, 1)}
