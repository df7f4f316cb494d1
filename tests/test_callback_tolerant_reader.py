"""The tolerant reader: a callback with top-level fields the contract does not name is answered as
if they were absent, keeps none of them as evidence, and counts each name on /metrics (cut to 64
characters, `other` past 50 names a process), logging each name once per process."""

import logging

import pytest

from console.api import unknown_fields
from recovery.models import CallbackReceipt
from recovery.retention import journal_fold
from tests.test_metrics import scrape, value
from tests.wcs_helpers import create, finish, status
from tests.wms_state import snapshot


@pytest.fixture(autouse=True)
def fresh_process_names():
    unknown_fields.forget_unknown_fields()
    yield
    unknown_fields.forget_unknown_fields()


def test_it_answers_a_finish_with_an_added_field_as_without_it_and_keeps_no_trace_of_its_value(wms, client):
    created, moves = create(wms, 2)
    response = finish(client, created.first_job_id, vendor_extension={"crane": 4})
    assert response.status_code == 200, response.content
    assert response.json()["outcome"] == "ACCEPTED"
    receipt = CallbackReceipt.objects.get()
    assert receipt.payload == {"job_id": created.first_job_id, "stage": "MOVE_FINISHED"}
    assert receipt.unknown_fields == ["vendor_extension"]
    assert "crane" not in str(snapshot())  # nothing of it reached a WMS row


def test_it_answers_a_status_with_added_fields_as_without_them(wms, client):
    created, _ = create(wms, 1)
    response = status(client, created.first_job_id, 2, crane=4, lane="A")
    assert response.status_code == 200, response.content
    assert response.json()["outcome"] == "ACCEPTED"
    receipt = CallbackReceipt.objects.get()
    assert (receipt.payload, receipt.unknown_fields) == ({"job_id": created.first_job_id, "status": 2},
                                                         ["crane", "lane"])


def test_a_receipt_without_unknown_fields_names_none(wms, client):
    created, _ = create(wms, 1)
    assert status(client, created.first_job_id, 2).status_code == 200
    assert CallbackReceipt.objects.get().unknown_fields is None


def test_known_fields_keep_their_strict_checks_beside_unknown_ones(wms, client):
    created, _ = create(wms, 1)
    response = status(client, created.first_job_id, 7, crane=4)
    assert response.status_code == 400
    assert response.json()["field"] == "status"
    receipt = CallbackReceipt.objects.get()
    assert receipt.outcome == "BAD_REQUEST" and receipt.unknown_fields == ["crane"]
    assert "crane" not in receipt.payload


def test_it_counts_unknown_fields_per_endpoint_and_name_on_metrics(wms, client):
    created, _ = create(wms, 2)
    status(client, created.first_job_id, 2, crane=4)
    status(client, created.first_job_id, 3, crane=5)
    finish(client, created.first_job_id, crane=6, **{"x" * 100: 1})
    samples = scrape(client)
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="crane") == 2
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-finish", field="crane") == 1
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-finish", field="x" * 64) == 1


def test_past_fifty_names_a_process_counts_further_ones_as_other(wms, client):
    created, _ = create(wms, 1)
    status(client, created.first_job_id, 2, **{f"f{n:02d}": n for n in range(50)})
    status(client, created.first_job_id, 2, f07=1, late_one=1, late_two=2)
    assert CallbackReceipt.objects.order_by("id").last().unknown_fields == ["f07", "other", "other"]
    samples = scrape(client)
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="other") == 2
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="f07") == 2
    named = {labels for (name, labels) in samples if name == "tidy_callback_unknown_fields_total"}
    assert len(named) == 51


def test_it_logs_each_unknown_name_once_per_process(wms, client, caplog):
    created, _ = create(wms, 1)
    with caplog.at_level(logging.WARNING, logger="console.api.unknown_fields"):
        for _ in range(3):
            status(client, created.first_job_id, 2, crane=4)
        status(client, created.first_job_id, 2, lane="B")
    lines = [r for r in caplog.records if r.name == "console.api.unknown_fields"]
    assert [(r.field, r.endpoint) for r in lines] == [("crane", "job-status"), ("lane", "job-status")]


def test_the_counts_survive_the_retention_fold_and_deletion(wms, client):
    created, _ = create(wms, 1)
    status(client, created.first_job_id, 2, crane=4)
    before = scrape(client)
    CallbackReceipt.objects.update(received_at="2000-01-01T00:00:00Z")
    journal_fold()
    folded = scrape(client)
    CallbackReceipt.objects.all().delete()
    after = scrape(client)
    for samples in (before, folded, after):
        assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="crane") == 1
        assert value(samples, "tidy_callback_duration_seconds_count", endpoint="job-status") == 1
    assert after[("tidy_callback_duration_seconds_sum", (("endpoint", "job-status"),))] == pytest.approx(
        before[("tidy_callback_duration_seconds_sum", (("endpoint", "job-status"),))], abs=1e-6)


def test_the_duration_histogram_counts_every_authenticated_callback_in_its_bucket(wms, client):
    created, _ = create(wms, 1)
    status(client, created.first_job_id, 2)
    status(client, created.first_job_id, 9)  # a 400 is answered too, and timed
    finish(client, "TDY-999-999")
    CallbackReceipt.objects.filter(endpoint="job-status").update(duration_ms=30.0)  # 0.03 s: the 0.05 bucket
    samples = scrape(client)
    assert value(samples, "tidy_callback_duration_seconds_bucket", endpoint="job-status", le="0.025") == 0
    assert value(samples, "tidy_callback_duration_seconds_bucket", endpoint="job-status", le="0.05") == 2
    assert value(samples, "tidy_callback_duration_seconds_bucket", endpoint="job-status", le="+Inf") == 2
    assert value(samples, "tidy_callback_duration_seconds_sum", endpoint="job-status") == pytest.approx(0.06)
    assert value(samples, "tidy_callback_duration_seconds_count", endpoint="job-finish") == 1
