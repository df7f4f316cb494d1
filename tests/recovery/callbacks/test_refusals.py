"""Refused WCS callbacks, 401 included, are counted and shown to operations; a flood of
unauthenticated requests adds at most one row per endpoint and minute and keeps nothing it sent."""

from datetime import timedelta

import pytest
from django.utils import timezone

from console.readers.recovery import callback_refusals
from recovery.models import CallbackReceipt
from tests.wcs_helpers import create, post
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def _unauthorized(client, endpoint="job-finish", body=None, **headers):
    return post(client, endpoint, body or {"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": "secret"},
                token="wrong-token", **headers)


def test_it_counts_401s_per_endpoint_and_minute_without_their_body(wms, client):
    created, _ = create(wms, 1)
    before = snapshot()
    for _ in range(3):
        assert _unauthorized(client, body={"job_id": created.first_job_id, "stage": "MOVE_FINISHED"}).status_code == 401
    assert _unauthorized(client, "job-status", REMOTE_ADDR="10.1.2.3").status_code == 401
    assert post(client, "job-status", {"job_id": created.first_job_id, "status": 2}, token=None).status_code == 401

    assert diff(before, snapshot()) == {}
    rows = list(CallbackReceipt.objects.order_by("endpoint").values(
        "endpoint", "outcome", "http_status", "request_count", "remote_addr", "job_id", "wcs_event_id", "payload",
        "workflow_id"))
    assert rows == [
        {"endpoint": "job-finish", "outcome": "UNAUTHORIZED", "http_status": 401, "request_count": 3,
         "remote_addr": "127.0.0.1", "job_id": "", "wcs_event_id": "", "payload": None, "workflow_id": None},
        {"endpoint": "job-status", "outcome": "UNAUTHORIZED", "http_status": 401, "request_count": 2,
         "remote_addr": "127.0.0.1", "job_id": "", "wcs_event_id": "", "payload": None, "workflow_id": None},
    ]


def test_a_flood_adds_one_row_per_minute_and_a_new_minute_starts_a_new_row(wms, client):
    for _ in range(150):
        _unauthorized(client)
    assert list(CallbackReceipt.objects.values_list("request_count", flat=True)) == [150]
    CallbackReceipt.objects.update(received_at=timezone.now() - timedelta(minutes=2))
    _unauthorized(client)
    assert sorted(CallbackReceipt.objects.values_list("request_count", flat=True)) == [1, 150]


def test_an_address_that_is_not_an_ip_is_kept_as_unknown(wms, client):
    assert _unauthorized(client, REMOTE_ADDR="unix:/run/gunicorn.sock").status_code == 401
    assert list(CallbackReceipt.objects.values_list("remote_addr", "request_count")) == [(None, 1)]


def test_operations_see_refusals_per_endpoint_and_outcome_on_the_recovery_page(wms, client, supervisor_client):
    created, _ = create(wms, 1)
    for _ in range(2):
        _unauthorized(client, REMOTE_ADDR="192.0.2.7")
    post(client, "job-finish", {"job_id": created.first_job_id, "stage": "NOPE"})  # 400
    post(client, "job-finish", {"job_id": "TDY-999-999", "stage": "MOVE_FINISHED"})  # 404
    post(client, "job-status", {"job_id": created.first_job_id, "status": 2})  # accepted: not a refusal

    refusals = callback_refusals()
    assert refusals.counts == [("job-finish", "UNAUTHORIZED", 2), ("job-finish", "BAD_REQUEST", 1),
                               ("job-finish", "UNKNOWN_JOB", 1)]
    body = supervisor_client.get("/recovery/").content.decode()
    assert "Refused WCS callbacks, last 24 hours" in body
    assert "<strong class=\"warn\">4</strong> refused requests" in body
    assert "from 192.0.2.7" in body
    assert '<td data-label="Outcome">UNAUTHORIZED</td><td data-label="Requests" class="num">2</td>' in body

    CallbackReceipt.objects.update(received_at=timezone.now() - timedelta(hours=25))
    assert callback_refusals().counts == []
    assert "No WCS callback was refused in the last 24 hours." in supervisor_client.get("/recovery/").content.decode()
