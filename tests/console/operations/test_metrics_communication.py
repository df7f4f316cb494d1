"""/metrics: communication quality with the WCS (docs/operations.md "Monitoring"), read from the database at
scrape time: the last callback heard, outbound requests per target and outcome, the active jobs'
age percentiles, and counters that survive the journal's retention."""

import math
import socket
from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from recovery.engine.wcs import WcsSnapshotUnavailable, WcsVehicleSnapshotClient, http_request
from recovery.models import CallbackReceipt, OutboundHttpRequest
from recovery.runtime.retention import journal_retention_run
from tests.console.operations.test_metrics import scrape, value
from tests.notification_support import *  # noqa: F403  (fixtures)
from tests.notification_support import recovery_is_fresh
from tests.wcs_helpers import answer, local_http_server, post, rows, status

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

QUANTILES = ("0.5", "0.95", "1")
TARGETS = ("wcs_snapshot", "webhook")
OUTCOMES = ("ok", "http_error", "no_answer")


def outbound(samples: dict) -> dict:
    return {(t, o): value(samples, "tidy_outbound_requests_total", target=t, outcome=o)
            for t in TARGETS for o in OUTCOMES}


def test_it_exposes_the_communication_metrics_on_an_empty_database(transactional_db, client):
    samples = scrape(client)
    assert value(samples, "tidy_wcs_last_heard_age_seconds") == math.inf  # never heard
    assert value(samples, "tidy_wcs_jobs_in_progress") == 0
    assert set(outbound(samples).values()) == {0}  # every series exists before the first request
    assert {value(samples, "tidy_active_job_age_seconds", quantile=q) for q in QUANTILES} == {0}


# The communication metrics of the operations contract: type and label names.
CONTRACT = {
    "tidy_wcs_last_heard_age_seconds": ("gauge", set()),
    "tidy_outbound_requests": ("counter", {"target", "outcome"}),
    "tidy_notification_deliveries": ("counter", {"channel", "outcome"}),
}


def test_the_communication_metrics_have_the_contract_types_and_labels(transactional_db, client):
    body = client.get("/metrics").content.decode()
    families = {f.name: f for f in text_string_to_metric_families(body)}
    for name, (kind, labels) in CONTRACT.items():
        family = families[name]
        assert family.type == kind, name
        assert {frozenset(s.labels) for s in family.samples} == {frozenset(labels)}, name
    ages = families["tidy_active_job_age_seconds"]
    assert ages.type == "summary"
    assert {(s.name, s.labels.get("quantile")) for s in ages.samples} == {
        *(("tidy_active_job_age_seconds", q) for q in QUANTILES),
        ("tidy_active_job_age_seconds_count", None), ("tidy_active_job_age_seconds_sum", None)}


def test_the_callback_metrics_have_the_contract_types_and_labels(wms, client):
    """The tolerant reader's counter and the callback duration histogram, once a callback with a
    field the contract does not name was answered."""
    assert post(client, "job-status", {"job_id": "TDY-999999-1", "status": 2, "crane": 4}).status_code == 404
    families = {f.name: f for f in text_string_to_metric_families(client.get("/metrics").content.decode())}
    unknown = families["tidy_callback_unknown_fields"]
    assert unknown.type == "counter"
    assert {frozenset(s.labels) for s in unknown.samples} == {frozenset({"endpoint", "field"})}
    durations = families["tidy_callback_duration_seconds"]
    assert durations.type == "histogram"
    assert {s.name: frozenset(s.labels) for s in durations.samples} == {
        "tidy_callback_duration_seconds_bucket": frozenset({"endpoint", "le"}),
        "tidy_callback_duration_seconds_count": frozenset({"endpoint"}),
        "tidy_callback_duration_seconds_sum": frozenset({"endpoint"})}
    assert {s.labels["endpoint"] for s in durations.samples} >= {"job-status"}


def test_the_wcs_is_heard_by_any_authenticated_callback_but_never_by_an_unauthorized_one(wms, client):
    assert post(client, "job-status", {"job_id": "TDY-1-1", "status": 2}, token="wrong").status_code == 401
    assert value(scrape(client), "tidy_wcs_last_heard_age_seconds") == math.inf

    # Refused, but authenticated: the WCS spoke.
    assert status(client, "TDY-999999-1", 2).status_code == 404
    assert 0 <= value(scrape(client), "tidy_wcs_last_heard_age_seconds") < 5

    CallbackReceipt.objects.exclude(outcome="UNAUTHORIZED").update(
        received_at=timezone.now() - timedelta(minutes=7))
    CallbackReceipt.objects.filter(outcome="UNAUTHORIZED").delete()
    assert post(client, "job-finish", {"job_id": "TDY-1-1", "stage": "MOVE_FINISHED"}, token="").status_code == 401
    assert 7 * 60 <= value(scrape(client), "tidy_wcs_last_heard_age_seconds") < 7 * 60 + 5

    built = wms.build("healthy", job_status=2)
    assert status(client, f"TDY-{built.workflow_id}-{built.step_ids[0]}", 3).status_code == 200
    assert 0 <= value(scrape(client), "tidy_wcs_last_heard_age_seconds") < 5


def test_it_counts_outbound_requests_per_target_and_outcome(notify_db, webhook_receiver, client, settings):
    with local_http_server({"/ok": answer(200, {"vehicles": []}), "/busy": answer(503, b"")}) as base:
        WcsVehicleSnapshotClient(f"{base}/ok", 1000).fetch()
        WcsVehicleSnapshotClient(f"{base}/ok", 1000).fetch()
        with pytest.raises(WcsSnapshotUnavailable):
            WcsVehicleSnapshotClient(f"{base}/busy", 1000).fetch()
        # Other outbound requests (the simulator's callbacks, replay) are journaled, not counted.
        http_request("GET", f"{base}/ok", purpose="simulator-callback", timeout_ms=1000)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(WcsSnapshotUnavailable):
        WcsVehicleSnapshotClient(f"http://127.0.0.1:{closed}/s", 500).fetch()

    # The webhook, through the delivery worker: one answered 500, then sent.
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0  # the pause's message is due at once
    recovery_is_fresh()
    notify_db.build("paused")
    evaluate_notifications()
    webhook_receiver.status = 500
    t0 = timezone.now()
    assert deliver_pending(now=t0).failed == 1
    webhook_receiver.status = 200
    assert deliver_pending(now=t0 + timedelta(hours=1)).sent == 1

    samples = scrape(client)
    assert outbound(samples) == {
        ("wcs_snapshot", "ok"): 2, ("wcs_snapshot", "http_error"): 1, ("wcs_snapshot", "no_answer"): 1,
        ("webhook", "ok"): 1, ("webhook", "http_error"): 1, ("webhook", "no_answer"): 0,
    }
    assert value(samples, "tidy_notification_deliveries_total", channel="webhook", outcome="sent") == 1
    assert value(samples, "tidy_notification_deliveries_total", channel="webhook", outcome="failed") == 1


def _old_outbound(days: int) -> None:
    past = timezone.now() - timedelta(days=days)
    for purpose, status_code, error in (("vehicle-snapshot", 200, ""), ("vehicle-snapshot", None, "unreachable"),
                                        ("notification-webhook", 502, ""), ("simulator-callback", 200, "")):
        OutboundHttpRequest.objects.create(started_at=past, purpose=purpose, method="GET", url="http://x",
                                           status=status_code, error=error, duration_ms=1)


def test_outbound_counters_never_go_down_when_retention_deletes_old_requests(transactional_db, client):
    _old_outbound(days=100)
    OutboundHttpRequest.objects.create(started_at=timezone.now(), purpose="vehicle-snapshot", method="GET",
                                       url="http://x", status=200, duration_ms=1)
    before = outbound(scrape(client))
    assert before[("wcs_snapshot", "ok")] == 2
    assert (before[("wcs_snapshot", "no_answer")], before[("webhook", "http_error")]) == (1, 1)

    result = journal_retention_run(days=90, batch=2)
    assert result["finished"] and result["deleted"]["outbound_requests"] == 4
    assert OutboundHttpRequest.objects.count() == 1  # the recent one stays
    assert outbound(scrape(client)) == before
    journal_retention_run(days=90)  # folding twice never counts a request twice
    assert outbound(scrape(client)) == before
    OutboundHttpRequest.objects.create(started_at=timezone.now(), purpose="vehicle-snapshot", method="GET",
                                       url="http://x", status=200, duration_ms=1)
    assert outbound(scrape(client))[("wcs_snapshot", "ok")] == 3


def test_an_outbound_request_newer_than_the_fold_is_not_deleted_even_past_retention(transactional_db, client):
    """Retention deletes only what is folded: with retention shorter than the fold's lag, the
    recent requests stay and are still counted once."""
    OutboundHttpRequest.objects.create(started_at=timezone.now() - timedelta(minutes=2), purpose="vehicle-snapshot",
                                       method="GET", url="http://x", status=200, duration_ms=1)
    journal_retention_run(days=0)
    assert OutboundHttpRequest.objects.count() == 1
    assert outbound(scrape(client))[("wcs_snapshot", "ok")] == 1


def age_jobs(built, minutes: float) -> None:
    rows("UPDATE mydo_job SET created_at = now() - make_interval(secs => %s) WHERE job_id LIKE %s",
         [minutes * 60, f"TDY-{built.workflow_id}-%"])


def test_it_exposes_the_active_job_age_percentiles(wms, client):
    for minutes, job_status in ((1, 1), (2, 2), (3, 3), (4, 3), (20, 1)):
        age_jobs(wms.build("healthy", job_status=job_status), minutes)
    # Not a tidy move (in_or_out 28): not counted.
    other = wms.build("healthy")
    rows("UPDATE mydo_job SET in_or_out = 1, created_at = now() - interval '5 hours' WHERE job_id LIKE %s",
         [f"TDY-{other.workflow_id}-%"])

    samples = scrape(client)
    ages = {q: value(samples, "tidy_active_job_age_seconds", quantile=q) for q in QUANTILES}
    # Interpolated: the median of 60, 120, 180, 240, 1200 s is 180; the 95th lies 0.8 of the way from 240 to 1200.
    assert ages["0.5"] == pytest.approx(180, abs=3)
    assert ages["0.95"] == pytest.approx(240 + 0.8 * 960, abs=3)
    assert ages["1"] == pytest.approx(1200, abs=3) == pytest.approx(value(samples, "tidy_job_oldest_age_seconds"),
                                                                    abs=1)
    assert value(samples, "tidy_wcs_jobs_in_progress") == 3
    assert value(samples, "tidy_active_job_age_seconds_count") == 5
    assert value(samples, "tidy_active_job_age_seconds_sum") == pytest.approx(60 + 120 + 180 + 240 + 1200, abs=10)


@pytest.mark.parametrize("statement,index", [
    ("WCS_LAST_HEARD_AGE", "callback_receipt_time_idx"),
    ("OUTBOUND_REQUEST_COUNTS", "outbound_http_time_idx"),
    ("COMPLETED_JOB_DURATIONS", "mydo_job_finish_finished_at_idx"),
])
def test_the_communication_queries_use_their_index(wms, statement, index):
    """Sequential scans priced out, the plan names the index that serves each scrape's read."""
    from django.db import connection

    from console.operations import sql as operations_sql
    from console.readers import sql as readers_sql

    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            text = getattr(operations_sql, statement, None) or getattr(readers_sql, statement)
            cursor.execute("EXPLAIN " + text, {"since": timezone.now()})
            plan = "\n".join(r[0] for r in cursor.fetchall())
        finally:
            cursor.execute("RESET ALL")
    assert index in plan, plan
