"""The tolerant reader: a callback with top-level fields the contract does not name is answered as
if they were absent, keeps none of them as evidence, and counts each name on /metrics (cut to 64
characters, `other` past 50 names for the whole site, kept in the database), logging each name once
per process. A receipt names each distinct unknown field once, at most 50, and counts the rest."""

import logging
import threading
import time

import pytest
from django.db import connection
from django.db.models import Sum

from console.api import unknown_fields
from recovery.engine.callback_fields import field_labels_register, unknown_fields_count
from recovery.models import CallbackFieldLabel, CallbackFieldTotal, CallbackReceipt
from recovery.runtime.retention import journal_fold
from tests.console.operations.test_metrics import scrape, value
from tests.wcs_helpers import TOKEN, create, finish, status
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


def test_past_fifty_names_in_all_further_ones_are_counted_as_other(wms, client):
    created, _ = create(wms, 1)
    status(client, created.first_job_id, 2, **{f"f{n:02d}": n for n in range(50)})
    status(client, created.first_job_id, 2, f07=1, late_one=1, late_two=2)
    receipt = CallbackReceipt.objects.order_by("id").last()
    # The receipt names what was sent; the metric counts the names past the fifty as `other`.
    assert (receipt.unknown_fields, receipt.unknown_fields_rest) == (["f07", "late_one", "late_two"], 0)
    samples = scrape(client)
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="other") == 2
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="f07") == 2
    named = {labels for (name, labels) in samples if name == "tidy_callback_unknown_fields_total"}
    assert len(named) == 51


def test_the_fifty_labels_are_the_sites_not_a_process_s(wms, client):
    """A recycled web worker or another node (a process that has seen no name yet) adds no label
    past the fifty the database keeps."""
    created, _ = create(wms, 1)
    status(client, created.first_job_id, 2, **{f"f{n:02d}": n for n in range(50)})
    unknown_fields.forget_unknown_fields()  # a fresh process
    status(client, created.first_job_id, 2, f07=1, newcomer=1)
    unknown_fields.forget_unknown_fields()
    finish(client, created.first_job_id, **{f"g{n:02d}": n for n in range(50)})
    samples = scrape(client)
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="other") == 1
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-finish", field="other") == 50
    fields = {dict(labels)["field"] for (name, labels) in samples if name == "tidy_callback_unknown_fields_total"}
    assert len(fields) == 51 and "newcomer" not in fields and "g00" not in fields
    assert CallbackFieldLabel.objects.count() == 50


def _names(start: int, count: int) -> list[str]:
    """`count` distinct four-character names (base 36) from `start` on."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    return ["".join(digits[(n // 36 ** k) % 36] for k in range(4)) for n in range(start, start + count)]


def test_sixty_bodies_of_seven_thousand_names_leave_at_most_51_labels_and_bounded_receipts(wms, client):
    created, _ = create(wms, 1)
    for body_no in range(60):
        fields = ",".join(f'"{name}":0' for name in _names(body_no * 7000, 7000))
        body = f'{{"job_id":"{created.first_job_id}","status":2,{fields}}}'.encode()
        assert 50_000 < len(body) < 65_536
        response = client.post("/api/wcs/job-status", data=body, content_type="application/json",
                               HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert response.status_code == 200, response.content[:300]
    started = time.perf_counter()
    samples = scrape(client)
    print(f"/metrics after 60 bodies of 7,000 unknown names: {time.perf_counter() - started:.3f} s")
    fields = {dict(labels)["field"] for (name, labels) in samples if name == "tidy_callback_unknown_fields_total"}
    assert len(fields) <= 51 and "other" in fields
    assert value(samples, "tidy_callback_unknown_fields_total", endpoint="job-status", field="other") == (
        60 * 7000 - 50)
    receipts = list(CallbackReceipt.objects.values_list("unknown_fields", "unknown_fields_rest"))
    assert len(receipts) == 60
    assert all(len(names) == 50 and len(set(names)) == 50 and rest == 6950 for names, rest in receipts)


@pytest.mark.usefixtures("committed_db")  # eight sessions of their own commit their labels
def test_concurrent_processes_never_make_more_than_fifty_labels(wms):
    """Eight sessions register 20 new names each at once: the database keeps exactly fifty labels,
    and each session learns every label made so far."""
    barrier = threading.Barrier(8)
    learnt: dict[int, frozenset] = {}

    def register(n: int) -> None:
        try:
            barrier.wait(30)
            learnt[n] = field_labels_register([f"s{n}-{k}" for k in range(20)])
            unknown_fields_count(endpoint="job-status", counts={"other": 1, f"s{n}-0": 2})
        finally:
            connection.close()

    threads = [threading.Thread(target=register, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    labels = set(CallbackFieldLabel.objects.values_list("name", flat=True))
    assert len(labels) == 50 and len(learnt) == 8
    assert all(seen <= labels for seen in learnt.values())
    assert sorted(CallbackFieldLabel.objects.values_list("slot", flat=True)) == list(range(1, 51))
    totals = CallbackFieldTotal.objects.filter(field="other").aggregate(Sum("total"))["total__sum"]
    assert totals == 8


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


def test_the_migration_moves_what_was_counted_so_the_counter_never_goes_down(wms, client):
    """recovery 0012 moves the counts taken the old way (folded totals, plus the labels of the
    receipts not folded yet) into the new totals, keeps the 50 names counted most as labels and
    counts every other one as `other`."""
    import importlib

    from recovery.models import JournalFold, JournalTotal

    migration = importlib.import_module("recovery.migrations.0013_callback_unknown_field_labels")
    JournalFold.objects.create(journal="callbacks", folded_before="2026-01-01T00:00:00Z")
    JournalTotal.objects.create(journal="callback_unknown_fields", label1="job-status", label2="crane", total=7)
    JournalTotal.objects.create(journal="callback_unknown_fields", label1="job-status", label2="other", total=3)
    for n in range(55):  # 55 names, each on a receipt received after the watermark; n00 on two
        CallbackReceipt.objects.create(endpoint="job-finish", http_status=200, outcome="ACCEPTED",
                                       unknown_fields=[f"n{n:02d}"] + (["crane", "n00"] if n == 0 else []))
    folded = CallbackReceipt.objects.create(endpoint="job-finish", http_status=200, outcome="ACCEPTED",
                                            unknown_fields=["folded"])
    CallbackReceipt.objects.filter(pk=folded.pk).update(received_at="2025-12-31T00:00:00Z")  # counted already
    with connection.cursor() as cursor:
        cursor.execute(migration.MOVE_COUNTS)
    samples = scrape(client)
    total = {(dict(labels)["endpoint"], dict(labels)["field"]): v for (name, labels), v in samples.items()
             if name == "tidy_callback_unknown_fields_total"}
    assert total[("job-status", "crane")] == 7 and total[("job-status", "other")] == 3
    assert total[("job-finish", "crane")] == 1 and total[("job-finish", "n00")] == 2
    assert total[("job-finish", "other")] == 6  # crane, n00 and n01-n48 are the 50 labels; n49-n54 not
    assert sum(v for (endpoint, _), v in total.items() if endpoint == "job-finish") == 57
    assert ("job-finish", "folded") not in total
    assert CallbackFieldLabel.objects.count() == 50
    assert not JournalTotal.objects.filter(journal="callback_unknown_fields").exists()
