"""The WCS API takes the short path through the middleware (docs/architecture.md §8): no session,
CSRF, sign-in, messages or language machinery touches a callback, while what protects it still
does (request id, SecurityMiddleware's headers, the bearer token, the body limits). And a
duplicate of an applied jobFinish is answered from one read, without waiting for the row lock."""

import threading

import pytest
from django.contrib.sessions.models import Session
from django.db import connection, transaction
from django.test import Client

from console.input_checks import MAX_JSON_BODY_BYTES
from recovery.engine import transaction as tx
from recovery.models import CallbackReceipt
from tests.console_personas import make_user
from tests.wcs_helpers import create, finish, post, rows
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

# What the person-facing middleware leaves on an answer; none of it may be on an API answer.
PAGE_MACHINERY_HEADERS = ("Vary", "Content-Language", "Content-Security-Policy", "X-Frame-Options")


def assert_short_path(response):
    assert not response.cookies, response.cookies  # no session, CSRF or language cookie
    for header in PAGE_MACHINERY_HEADERS:
        assert header not in response, (header, response[header])
    # What stays: the request id and SecurityMiddleware's headers.
    assert response["X-Request-ID"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert int(response["Content-Length"]) == len(response.content)


def test_a_page_carries_the_machinery_the_api_goes_without(transactional_db):
    # The same checks on a page fail: they can tell the two paths apart.
    response = Client(enforce_csrf_checks=True).get("/accounts/login/")
    assert response.status_code == 200
    assert response.cookies and "Vary" in response and "Content-Security-Policy" in response


def test_a_signed_in_browsers_callback_touches_no_session_and_needs_no_csrf_token(wms):
    created, _ = create(wms, 2)
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("someone"))
    sessions_before = list(Session.objects.values_list("session_key", "expire_date", "session_data"))
    response = post(client, "job-finish", {"job_id": created.first_job_id, "stage": "MOVE_FINISHED"},
                    HTTP_X_REQUEST_ID="wcs-short-1")
    assert response.status_code == 200 and response.json()["outcome"] == "ACCEPTED"
    assert response["X-Request-ID"] == "wcs-short-1"
    assert_short_path(response)
    assert list(Session.objects.values_list("session_key", "expire_date", "session_data")) == sessions_before


def test_an_anonymous_callback_writes_no_session_row(wms):
    created, _ = create(wms, 1)
    response = finish(Client(enforce_csrf_checks=True), created.first_job_id)
    assert response.status_code == 200
    assert_short_path(response)
    assert not Session.objects.exists()


def test_a_bad_or_missing_token_is_still_refused_with_401(wms, client):
    created, _ = create(wms, 1)
    before = snapshot()
    for token in ("wrong-token", None):
        response = post(client, "job-finish", {"job_id": created.first_job_id, "stage": "MOVE_FINISHED"},
                        token=token)
        assert response.status_code == 401 and response["WWW-Authenticate"] == 'Bearer realm="wcs"'
        assert_short_path(response)
    assert diff(before, snapshot()) == {}
    assert not CallbackReceipt.objects.filter(outcome="ACCEPTED").exists()


def test_an_oversize_or_malformed_body_is_still_refused_naming_the_field(wms, client):
    created, _ = create(wms, 1)
    before = snapshot()
    big = b'{"job_id": "' + b"x" * (MAX_JSON_BODY_BYTES + 1) + b'"}'
    response = post(client, "job-finish", big)
    assert response.status_code == 413 and response.json()["error"] == "payload_too_large"
    assert_short_path(response)
    response = post(client, "job-finish", {"job_id": created.first_job_id, "stage": "SOMEWHERE"})
    assert response.status_code == 400 and response.json()["field"] == "stage"
    assert_short_path(response)
    assert diff(before, snapshot()) == {}


def test_an_unknown_api_path_is_answered_by_the_ordinary_chain(transactional_db, client):
    assert client.post("/api/wcs/no-such-endpoint", data="{}", content_type="application/json").status_code == 404
    assert client.get("/api/wcs/openapi.json").status_code == 200


def test_a_duplicate_is_answered_while_another_holds_the_row_and_records_nothing_but_its_receipt(wms, client,
                                                                                                 settings):
    settings.WCS_CALLBACK_LOCK_TIMEOUT_MS = 200
    created, _ = create(wms, 2)
    first = finish(client, created.first_job_id, event_id="first")
    assert first.json()["outcome"] == "ACCEPTED"
    before = snapshot()
    answers = []
    with transaction.atomic():
        tx.lock_workflow(created.workflow_id, skip_locked=False)  # a long repair holds the row
        copy = threading.Thread(target=lambda: (
            answers.append(finish(Client(), created.first_job_id, event_id="copy")), connection.close()))
        copy.start()
        copy.join(30)
    (answer,) = answers
    # The locked path would have waited 200 ms and answered 503 busy.
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["outcome"], body["inventory_moved"], body["event_recorded"]) == ("DUPLICATE", False, False)
    assert body["workflow"] == first.json()["workflow"]
    assert diff(before, snapshot()) == {}
    receipt = CallbackReceipt.objects.get(wcs_event_id="copy")
    assert (receipt.outcome, receipt.http_status, receipt.workflow_id) == ("DUPLICATE", 200, created.workflow_id)


def test_a_duplicate_with_a_new_stage_still_takes_the_lock_and_records_the_stage_once(wms, client):
    created, _ = create(wms, 2)
    assert finish(client, created.first_job_id).json()["outcome"] == "ACCEPTED"
    answers = [finish(client, created.first_job_id, stage="OUTBOUND_FINISHED").json() for _ in range(2)]
    assert [(a["outcome"], a["event_recorded"]) for a in answers] == [("DUPLICATE", True), ("DUPLICATE", False)]
    stages = rows("SELECT stage FROM alg.tidy_callback_event WHERE workflow_id = %s AND job_id = %s ORDER BY 1",
                  [created.workflow_id, created.first_job_id])
    assert stages == [("MOVE_FINISHED",), ("OUTBOUND_FINISHED",)]


def test_a_callback_for_another_host_is_answered_400_and_changes_nothing(wms, client):
    """The short path validates the Host against ALLOWED_HOSTS like every other path, before the
    token, the body or the database are looked at."""
    created, _ = create(wms, 1)
    before = snapshot()
    for endpoint, body in (("job-finish", {"job_id": created.first_job_id, "stage": "MOVE_FINISHED"}),
                           ("job-status", {"job_id": created.first_job_id, "status": 3})):
        response = post(client, endpoint, body, HTTP_HOST="evil.example")
        assert response.status_code == 400, (endpoint, response.status_code)
        assert response["X-Request-ID"]
    assert client.get("/accounts/login/", HTTP_HOST="evil.example").status_code == 400  # as the long path does
    assert diff(before, snapshot()) == {}
    assert not CallbackReceipt.objects.exists()
    assert finish(client, created.first_job_id).status_code == 200  # the allowed host still works
