"""The callbacks' answers to the hostile bodies a security review found: each is refused with a 4xx
naming the field (never a 500, never a 503 that WCS would retry forever), changes no WMS row, and
is kept as one storable receipt."""

import json

import pytest

from console.input_checks import LINE_OR_BIDI
from recovery.models import CallbackReceipt
from tests.wcs_helpers import TOKEN, create
from tests.wms_state import diff, snapshot

DEEP = b'{"job_id": ' + b"[" * 5000 + b"]" * 5000 + b"}"
FINISH = '{"job_id": "%s", "stage": "MOVE_FINISHED", "event_id": %s}'

CASES = [
    # (endpoint, body, status, field, words in the message)
    ("job-finish", DEEP, 400, None, "deeper than 32"),
    ("job-status", b"[" * 100_000, 413, None, "larger than 65536"),
    ("job-finish", b"\x00", 400, None, "not valid JSON"),
    ("job-status", b"\x00", 400, None, "not valid JSON"),
    ("job-finish", FINISH % ("{job}", '"\\ud800"'), 400, "event_id", "lone surrogate"),
    ("job-finish", FINISH % ("{job}", '"a\\u0000b"'), 400, "event_id", "NUL"),
    ("job-finish", FINISH % ("{job}", '"tab\\there"'), 400, "event_id", "control character"),
    ("job-finish", FINISH % ("{job}", '"caf\\u00e9"'), 400, "event_id", "visible ASCII"),
    ("job-finish", FINISH % ("{job}", "1" + "0" * 30), 400, "event_id", "between 0 and"),
    ("job-finish", FINISH % ("{job}", "1" + "0" * 5000), 400, None, "not acceptable JSON"),
    ("job-finish", FINISH % ("{job}", "null"), 400, "event_id", "leave it out"),
    ("job-finish", FINISH % ("{job}", "NaN"), 400, "event_id", "NaN"),
    ("job-finish", '{"job_id": "{job}\\u0000", "stage": "MOVE_FINISHED"}', 400, "job_id", "NUL"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "x\\u0007": 1}', 400, None, "field name"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "\\ud800": 1}', 400, None, "field name"),
    ("job-status", '{"job_id": "{job}", "status": 3, "a\\u0000b": 1}', 400, None, "field name"),
    ("job-status", '{"job_id": "{job}", "status": 3, "sequence": -1}', 400, "sequence", "between 0 and"),
    ("job-status", '{"job_id": "{job}", "status": 3, "sequence": "7"}', 400, "sequence", "whole number"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "sequence": true}', 400, "sequence", "whole number"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "tray_code": ""}', 400, "tray_code", "non-empty"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "location": null}', 400, "location", "leave it out"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "tray_code": "T\\u0000"}', 400, "tray_code", "NUL"),

    # Numbers no double holds, and NaN (design §11): a 400 naming the field, never a 500.
    ("job-status", '{"job_id": "{job}", "status": 3, "sequence": 1e400}', 400, "sequence", "1e400"),
    ("job-status", '{"job_id": "{job}", "status": 1e400}', 400, "status", "1e400"),
    ("job-status", '{"job_id": "{job}", "status": 3, "event_id": -1e400}', 400, "event_id", "-1e400"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "sequence": -1e400}', 400, "sequence", "-1e400"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "event_id": 1e400}', 400, "event_id", "1e400"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "tray_code": -1e400}', 400, "tray_code", "-1e400"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "location": [1e999]}', 400, "location[0]",
     "1e999"),
    ("job-status", '{"job_id": "{job}", "status": 3, "sequence": NaN}', 400, "sequence", "NaN"),
    ("job-status", '{"job_id": "{job}", "status": 3, "sequence": -Infinity}', 400, "sequence", "-Infinity"),
    ("job-finish", '{"job_id": 1e400, "stage": "MOVE_FINISHED"}', 400, "job_id", "1e400"),
    ("job-status", '{"job_id": "{job}", "status": 3, "vendor": NaN}', 400, None, "not valid JSON"),
    # Field names that forge lines or reorder text, and the same in the codes a finish reports.
    ("job-status", '{"job_id": "{job}", "status": 3, "a\\u2028b": 1}', 400, None, "field name contains a line"),
    ("job-status", '{"job_id": "{job}", "status": 3, "a\\u2029b": 1}', 400, None, "field name contains a line"),
    ("job-status", '{"job_id": "{job}", "status": 3, "raw\u2028": 1}', 400, None, "field name contains a line"),
    ("job-status", '{"job_id": "{job}", "status": 3, "a\\u0085b": 1}', 400, None, "field name contains"),
    ("job-status", '{"job_id": "{job}", "status": 3, "a\\nb": 1}', 400, None, "field name contains"),
    ("job-status", '{"job_id": "{job}", "status": 3, "a\\rb": 1}', 400, None, "field name contains"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "x\\u202ey": 1}', 400, None, "bidi control"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "x\\u2067y": 1}', 400, None, "bidi control"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "x\\u200fy": 1}', 400, None, "bidi control"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "x\\u061cy": 1}', 400, None, "bidi control"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "tray_code": "T\\u2028Open: x"}', 400,
     "tray_code", "line break or separator"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "tray_code": "T\\u202eA"}', 400,
     "tray_code", "bidi control"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "location": "A01\\u2029"}', 400,
     "location", "line break or separator"),
    ("job-finish", '{"job_id": "{job}", "stage": "MOVE_FINISHED", "location": "\\u2066A01-01-01\\u2069"}', 400,
     "location", "bidi control"),

    ("job-status", '{"job_id": "{job}", "status": 1' + "0" * 40 + "}", 400, "status", "must be 2"),
    ("job-status", '{"job_id": "{job}", "status": "\\u0663"}', 400, "status", "must be 2"),
    ("job-finish", b"\xff\xfe", 400, None, "UTF-8"),
]


@pytest.mark.parametrize(("endpoint", "body", "status", "field", "text"), CASES)
def test_a_hostile_body_is_refused_naming_the_field_and_kept_as_one_storable_receipt(
        wms, client, endpoint, body, status, field, text):
    created, _ = create(wms, 2)
    if isinstance(body, str):
        body = body.replace("{job}", created.first_job_id).encode()
    before = snapshot()
    response = client.post(f"/api/wcs/{endpoint}", data=body, content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == status, response.content[:300]
    answer = response.json()
    assert answer["field"] == field and text in answer["message"], answer
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get()
    assert (receipt.http_status, receipt.outcome, receipt.endpoint) == (status, "BAD_REQUEST", endpoint)
    json.dumps(receipt.payload)  # what it kept is plain, storable JSON
    # ... and shows no line break, separator or bidi control where it is read (escaped instead).
    assert not LINE_OR_BIDI.search(json.dumps(receipt.payload, ensure_ascii=False)), receipt.payload


def test_a_body_that_is_not_sent_as_json_is_refused_with_415(wms, client):
    created, _ = create(wms, 1)
    body = json.dumps({"job_id": created.first_job_id, "stage": "MOVE_FINISHED"})
    before = snapshot()
    response = client.post("/api/wcs/job-finish", data=body, content_type="text/plain",
                           HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 415 and response.json()["field"] == "Content-Type"
    assert diff(before, snapshot()) == {}
    assert list(CallbackReceipt.objects.values_list("http_status", "outcome")) == [(415, "BAD_REQUEST")]


def test_a_body_over_the_limit_is_refused_before_it_is_read(wms, client):
    response = client.post("/api/wcs/job-finish", data=b"{" + b" " * (3 * 1024 * 1024) + b"}",
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 413 and response.json()["error"] == "payload_too_large"
    receipt = CallbackReceipt.objects.get()
    assert (receipt.http_status, receipt.payload) == (413, {"raw": None})


def test_a_number_out_of_range_in_an_unknown_field_is_ignored_like_the_field(wms, client):
    created, _ = create(wms, 1)
    body = f'{{"job_id": "{created.first_job_id}", "status": 2, "vendor": [1e400, -1e999]}}'
    response = client.post("/api/wcs/job-status", data=body.encode(), content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200 and response.json()["outcome"] == "ACCEPTED", response.content
    assert CallbackReceipt.objects.get().payload == {"job_id": created.first_job_id, "status": 2}
