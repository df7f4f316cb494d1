"""/metrics: every metric of the operations contract, read from the database at scrape time."""

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import PAUSE_REASONS
from recovery.models import CallbackReceipt, OutboundHttpRequest, RecoveryCycle, RecoveryDecision
from recovery.runtime.retention import journal_retention_run
from tests.wcs_helpers import finish, post

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

CONTRACT = [
    "tidy_active_workflows", "tidy_stalled_workflows", "tidy_paused_workflows", "tidy_paused_oldest_age_seconds",
    "tidy_retained_locks", "tidy_job_backlog", "tidy_job_oldest_age_seconds",
    "tidy_recovery_last_success_age_seconds", "tidy_recovery_last_cycle_duration_seconds",
    "tidy_recovery_decisions_total", "tidy_callbacks_total", "tidy_notifications_open",
    "tidy_notification_deliveries_total",
]
# Every pause reason the decision table gives (the contract: "every pause reason, 0 included").
REASONS = sorted(reason.value for reason in PAUSE_REASONS)


def scrape(client, **headers) -> dict:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def names(samples: dict) -> set[str]:
    return {name for name, _ in samples}


def test_it_exposes_every_contract_metric_on_an_empty_database(transactional_db, client):
    samples = scrape(client)
    assert set(CONTRACT) <= names(samples)
    # Every pause reason, decision and callback outcome is there at 0, so rate() and alerts work
    # before the first one happens.
    assert {value(samples, "tidy_paused_workflows", reason=r) for r in REASONS} == {0}
    assert {value(samples, "tidy_recovery_decisions_total", decision=d) for d in ("ADVANCE", "COMPLETE", "PAUSE")} \
        == {0}
    assert value(samples, "tidy_callbacks_total", endpoint="job-finish", outcome="REFUSED_PAUSED") == 0
    assert value(samples, "tidy_recovery_last_success_age_seconds") == math.inf
    assert math.isnan(value(samples, "tidy_recovery_last_cycle_duration_seconds"))
    assert {value(samples, "tidy_notification_deliveries_total", channel=c, outcome=o)
            for c in ("email", "webhook", "log") for o in ("sent", "failed")} == {0}


def test_it_counts_what_the_warehouse_holds(wms, client, settings):
    settings.STALLED_AFTER_MINUTES = 15
    fresh = wms.build("healthy")
    stalled = wms.build("healthy", job_status=3)
    wms.build("job_missing")
    wms.build("job_missing")
    paused = wms.build("active_mismatch")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - interval '16 minutes', "
                       "created_at = now() - interval '20 minutes' WHERE job_id LIKE %s",
                       [f"TDY-{stalled.workflow_id}-%"])
        cursor.execute("SELECT count(*) FROM mydo_job WHERE in_or_out = 28")
        backlog = cursor.fetchone()[0]
    run_cycle()
    assert finish(client, f"TDY-{paused.workflow_id}-{paused.step_ids[0]}").status_code == 409
    assert finish(client, "TDY-999999-1").status_code == 404
    assert post(client, "job-finish", {"stage": "MOVE_FINISHED"}).status_code == 400

    samples = scrape(client)
    assert value(samples, "tidy_active_workflows") == 2
    assert value(samples, "tidy_stalled_workflows") == 1
    assert value(samples, "tidy_paused_workflows", reason="RECOVERY_JOB_MISSING") == 2
    assert value(samples, "tidy_paused_workflows", reason="RECOVERY_JOB_MISMATCH") == 1
    assert value(samples, "tidy_paused_workflows", reason="RECOVERY_ACTIVE_EVIDENCE_INVALID") == 0
    assert 0 <= value(samples, "tidy_paused_oldest_age_seconds") < 60
    assert value(samples, "tidy_retained_locks") == 12
    assert value(samples, "tidy_job_backlog") == backlog
    assert 20 * 60 <= value(samples, "tidy_job_oldest_age_seconds") < 21 * 60
    assert 0 <= value(samples, "tidy_recovery_last_success_age_seconds") < 60
    assert value(samples, "tidy_recovery_last_cycle_duration_seconds") >= 0
    assert value(samples, "tidy_recovery_decisions_total", decision="PAUSE") == 3
    assert value(samples, "tidy_callbacks_total", endpoint="job-finish", outcome="REFUSED_PAUSED") == 1
    assert value(samples, "tidy_callbacks_total", endpoint="job-finish", outcome="UNKNOWN_JOB") == 1
    assert value(samples, "tidy_callbacks_total", endpoint="job-finish", outcome="BAD_REQUEST") == 1
    assert fresh.workflow_id  # the fresh job (updated now) is active but not stalled

    settings.STALLED_AFTER_MINUTES = 17
    assert value(scrape(client), "tidy_stalled_workflows") == 0


def test_it_counts_a_workflow_without_job_or_with_a_finished_job_as_not_stalled(wms, client):
    built = wms.build("job_missing")
    assert RecoveryCycle.objects.count() == 0 and built.workflow_id
    assert value(scrape(client), "tidy_stalled_workflows") == 0


def _old_journal(days: int) -> None:
    past = timezone.now() - timedelta(days=days)
    cycle = RecoveryCycle.objects.create(started_at=past, finished_at=past, outcome="SUCCEEDED", duration_ms=5)
    for outcome in ("ACCEPTED", "ACCEPTED", "DUPLICATE"):
        CallbackReceipt.objects.create(endpoint="job-finish", job_id="TDY-1-1", http_status=200, outcome=outcome)
    for workflow_id, action in enumerate(("PAUSE", "ADVANCE"), start=1):  # one decision per workflow per cycle
        RecoveryDecision.objects.create(cycle=cycle, workflow_id=workflow_id, action=action, evidence={},
                                        fingerprint="f")
    OutboundHttpRequest.objects.create(started_at=past, purpose="vehicle-snapshot", method="GET", url="http://x",
                                       duration_ms=1)
    CallbackReceipt.objects.filter(received_at__gt=past).update(received_at=past)
    RecoveryDecision.objects.filter(decided_at__gt=past).update(decided_at=past)


def test_counters_never_go_down_when_retention_deletes_old_rows(transactional_db, client):
    _old_journal(days=100)
    CallbackReceipt.objects.create(endpoint="job-status", job_id="TDY-1-1", http_status=200, outcome="ACCEPTED")
    before = scrape(client)
    assert value(before, "tidy_callbacks_total", endpoint="job-finish", outcome="ACCEPTED") == 2
    assert value(before, "tidy_recovery_decisions_total", decision="PAUSE") == 1

    result = journal_retention_run(days=90, batch=1)
    assert result["finished"]
    assert result["deleted"] == {"decisions": 2, "cycles": 1, "callback_receipts": 3, "outbound_requests": 1}
    assert CallbackReceipt.objects.count() == 1  # the recent one stays
    assert not RecoveryDecision.objects.exists() and not RecoveryCycle.objects.exists()
    assert not OutboundHttpRequest.objects.exists()

    after = scrape(client)
    counters = [k for k in before if k[0].endswith("_total")]
    assert {k: after[k] for k in counters} == {k: before[k] for k in counters}
    journal_retention_run(days=90)  # folding twice never counts a row twice
    assert {k: scrape(client)[k] for k in counters} == {k: before[k] for k in counters}
    CallbackReceipt.objects.create(endpoint="job-finish", job_id="TDY-1-1", http_status=200, outcome="ACCEPTED")
    assert value(scrape(client), "tidy_callbacks_total", endpoint="job-finish", outcome="ACCEPTED") == 3


def test_it_needs_the_token_when_one_is_set(transactional_db, client, settings):
    settings.METRICS_TOKEN = "scrape-" + "s" * 20
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Basic " + "s" * 20}).status_code == 401
    assert set(CONTRACT) <= names(scrape(client, Authorization=f"Bearer {settings.METRICS_TOKEN}"))


def test_it_refuses_other_methods(transactional_db, client):
    response = client.post("/metrics")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("statement,index,priced_out", [
    ("LAST_SUCCESS_AGE", "recovery_re_outcome_760dfc_idx", ("enable_seqscan",)),
    # Newest-first with LIMIT 1: the index serves the order, so a sort is priced out too (on a
    # near-empty table the planner may otherwise filter through another index and sort).
    ("LAST_CYCLE_DURATION", "recovery_cycle_started_idx", ("enable_seqscan", "enable_sort")),
    ("CALLBACK_COUNTS", "callback_receipt_time_idx", ("enable_seqscan",)),
    ("RECOVERY_DECISION_COUNTS", "recovery_decision_time_idx", ("enable_seqscan",)),
    ("WORKFLOW_COUNTS", "tidy_workflow_status_idx", ("enable_seqscan",)),
])
def test_the_metrics_queries_use_their_index(wms, statement, index, priced_out):
    """With sequential scans priced out the planner shows which index serves the query: if the
    index were missing or unusable the plan would still scan the table."""
    from console.operations import sql as operations_sql

    with connection.cursor() as cursor:
        for setting in priced_out:
            cursor.execute(f"SET {setting} = off")
        try:
            cursor.execute("EXPLAIN " + getattr(operations_sql, statement),
                           {"stalled_after_minutes": 15, "since": timezone.now()})
            plan = "\n".join(r[0] for r in cursor.fetchall())
        finally:
            cursor.execute("RESET ALL")
    assert index in plan, plan


def test_a_database_that_does_not_answer_fails_the_scrape_with_503(transactional_db, client, settings):
    """A real lock: the scrape's statement timeout ends the wait and the scrape says so."""
    from recovery.runtime.lease import connect_direct

    settings.CONSOLE_STATEMENT_TIMEOUT_MS = 1000
    holder = connect_direct("tidy-test-lock-holder")
    holder.autocommit = False
    try:
        holder.execute("LOCK TABLE recovery_recoverycycle IN ACCESS EXCLUSIVE MODE")
        response = client.get("/metrics")
    finally:
        holder.rollback()
        holder.close()
    assert response.status_code == 503
    assert b"ran longer than CONSOLE_STATEMENT_TIMEOUT_MS (1000 ms)" in response.content


def test_open_notifications_are_counted_per_event_every_event_included(wms, client):
    from console.models import Notification
    from console.notifications.events import Event

    now = timezone.now()

    def make(event, key, **kw):
        return Notification.objects.create(event=event, dedup_key=key, subject=key, url_path="/", opened_at=now,
                                           last_seen_at=now, **kw)

    make("paused", "paused:1", workflow_id=1)
    make("paused", "paused:2", workflow_id=2)
    make("stalled", "stalled:3", workflow_id=3, state="acknowledged")
    make("recovery_stale", "recovery_stale", state="resolved", resolved_at=now)
    samples = scrape(client)
    counts = {e: value(samples, "tidy_notifications_open", event=e) for e in Event.values}
    assert counts == {**dict.fromkeys(Event.values, 0), "paused": 2}


def test_refused_callbacks_count_every_request_though_401s_share_a_row(wms, client):
    for _ in range(3):
        assert post(client, "job-finish", {"job_id": "TDY-1-1", "stage": "MOVE_FINISHED"}, token="wrong").status_code \
            == 401
    assert CallbackReceipt.objects.filter(outcome="UNAUTHORIZED").count() == 1
    samples = scrape(client)
    assert value(samples, "tidy_callbacks_total", endpoint="job-finish", outcome="UNAUTHORIZED") == 3


def test_pause_reason_labels_are_the_known_codes_and_other(wms, client):
    """A pause reason is WMS text: whatever it holds, it never becomes a label value of its own, so
    the number of series is fixed (the known codes plus `other`)."""
    wms.build("paused", reason="RECOVERY_JOB_MISSING")
    wms.build("paused", reason="Vendor tool said: tray stuck\r\nsee log")
    wms.build("paused", reason="x" * 500)
    wms.build("paused", reason=None)
    wms.build("paused", reason="recovery_job_missing")  # codes are compared exactly
    samples = scrape(client)
    labels = {dict(labels)["reason"] for name, labels in samples if name == "tidy_paused_workflows"}
    assert labels == {*REASONS, "other"}
    assert value(samples, "tidy_paused_workflows", reason="other") == 4
    assert value(samples, "tidy_paused_workflows", reason="RECOVERY_JOB_MISSING") == 1


def test_notification_delivery_attempts_are_counted_per_channel_and_outcome(wms, client):
    from console.models import Notification, NotificationDelivery, NotificationDeliveryAttempt

    now = timezone.now()
    n = Notification.objects.create(event="paused", dedup_key="paused:1", subject="s", url_path="/", opened_at=now,
                                    last_seen_at=now, workflow_id=1)
    mail = NotificationDelivery.objects.create(notification=n, channel="email", severity="warning", next_attempt_at=now)
    hook = NotificationDelivery.objects.create(notification=n, channel="webhook", severity="warning",
                                               next_attempt_at=now)
    for delivery, ok in ((mail, False), (mail, False), (mail, True), (hook, True)):
        NotificationDeliveryAttempt.objects.create(delivery=delivery, at=now, ok=ok, duration_ms=1)
    samples = scrape(client)
    counted = {(c, o): value(samples, "tidy_notification_deliveries_total", channel=c, outcome=o)
               for c in ("email", "webhook", "log") for o in ("sent", "failed")}
    assert counted == {("email", "sent"): 1, ("email", "failed"): 2, ("webhook", "sent"): 1, ("webhook", "failed"): 0,
                       ("log", "sent"): 0, ("log", "failed"): 0}
