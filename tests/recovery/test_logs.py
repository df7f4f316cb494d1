"""Structured logs: one JSON object per line with the request id and, where known, the
workflow, step and job ids of each callback outcome, recovery decision and repair attempt."""

import io
import json
import logging

import pytest
from django.urls import reverse
from pythonjsonlogger.json import JsonFormatter

from recovery.engine.cycle import run_cycle
from recovery.logs.logcontext import ContextFilter, log_format_from_environ, logging_config
from tests.repair_support import *  # noqa: F403  (fixtures: repair_db, operator, ...)
from tests.repair_support import at_source, fingerprint, key, paused
from tests.wcs_helpers import post


@pytest.fixture
def json_lines():
    """The project's JSON handler (formatter and context filter as configured) on the root logger."""
    spec = dict(logging_config(log_format="json")["formatters"]["json"])
    spec.pop("()")
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter(**spec))
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    previous = root.level
    root.setLevel(logging.INFO)

    def read() -> list[dict]:
        return [json.loads(line) for line in buffer.getvalue().splitlines()]

    yield read
    root.removeHandler(handler)
    root.setLevel(previous)


def _one(lines: list[dict], logger: str) -> dict:
    found = [line for line in lines if line["logger"] == logger]
    assert len(found) == 1, lines
    return found[0]


def test_a_callback_outcome_is_one_json_line_with_the_request_and_workflow_ids(wms, client, json_lines):
    built = wms.build("paused")
    job_id = f"TDY-{built.workflow_id}-{built.step_ids[0]}"
    response = post(client, "job-finish", {"job_id": job_id, "stage": "MOVE_FINISHED"}, HTTP_X_REQUEST_ID="wcs-42")
    assert response.status_code == 409 and response["X-Request-ID"] == "wcs-42"
    line = _one(json_lines(), "recovery.callbacks")
    assert {"ts", "level", "logger", "message", "request_id"} <= set(line)
    assert (line["request_id"], line["workflow_id"], line["step_id"], line["job_id"]) == (
        "wcs-42", built.workflow_id, built.step_ids[0], job_id)
    assert (line["level"], line["outcome"], line["http_status"]) == ("INFO", "REFUSED_PAUSED", 409)
    move = built.moves[0]
    assert (line["tray_code"], line["source"], line["target"]) == (move.tray_code, move.source, move.target)
    # Django's own line about the 409 comes after the middleware returned and still has the id.
    assert all(entry["request_id"] == "wcs-42" for entry in json_lines())


def test_a_recovery_decision_is_one_line_with_its_cycle(wms, json_lines):
    built = wms.build("job_missing")
    report = run_cycle()
    line = _one(json_lines(), "recovery.decisions")
    assert (line["workflow_id"], line["step_id"], line["job_id"]) == (
        built.workflow_id, built.step_ids[0], f"TDY-{built.workflow_id}-{built.step_ids[0]}")
    assert (line["decision"], line["reason"], line["outcome"], line["cycle_id"]) == (
        "PAUSE", "RECOVERY_JOB_MISSING", "APPLIED", report.cycle_id)
    summary = [entry for entry in json_lines() if entry["logger"] == "recovery.cycle"]
    assert summary and all(entry["cycle_id"] == report.cycle_id for entry in summary)
    assert line["request_id"] is None  # not inside a request, and the key is still there
    move = built.moves[0]
    assert (line["tray_code"], line["source"], line["target"]) == (move.tray_code, move.source, move.target)


@pytest.mark.usefixtures("committed_db")
def test_a_repair_attempt_is_one_line_after_its_audit_row(repair_db, operator, client, json_lines):
    built = paused(repair_db, "job_missing")
    wid, step = built.workflow_id, built.step_ids[0]
    client.force_login(operator)
    response = client.post(reverse("repair-apply", args=[wid, "reissue"]),
                           {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": "Checked on the floor today",
                            "fingerprint": fingerprint(wid), "idempotency_key": key(), **at_source(wid)},
                           headers={"X-Request-ID": "op-1"})
    assert response.status_code == 303
    line = _one(json_lines(), "console.repair")
    assert (line["workflow_id"], line["step_id"], line["job_id"]) == (wid, step, f"TDY-{wid}-{step}")
    assert (line["action"], line["outcome"], line["user"], line["request_id"]) == (
        "REISSUE", "APPLIED", operator.username, "op-1")
    move = built.moves[0]
    assert (line["tray_code"], line["source"], line["target"]) == (move.tray_code, move.source, move.target)


def test_a_callback_line_carries_the_wcs_event_id_and_the_steps_places(wms, client, json_lines):
    built = wms.build("healthy")
    job_id = f"TDY-{built.workflow_id}-{built.step_ids[0]}"
    response = post(client, "job-status", {"job_id": job_id, "status": 3, "event_id": "wcs-981"})
    assert response.status_code == 200
    line = _one(json_lines(), "recovery.callbacks")
    move = built.moves[0]
    assert (line["event_id"], line["tray_code"], line["source"], line["target"]) == (
        "wcs-981", move.tray_code, move.source, move.target)


@pytest.mark.parametrize("environ,expected", [
    ({}, "text"),  # the embedded database: DEBUG defaults on
    ({"DATABASE_URL": "postgresql://h/db"}, "json"),
    ({"DATABASE_URL": "postgresql://h/db", "DEBUG": "true"}, "text"),
    ({"DEBUG": "false"}, "json"),
    ({"DEBUG": "true", "LOG_FORMAT": "json"}, "json"),
])
def test_the_format_is_json_unless_debug_is_on(environ, expected):
    assert log_format_from_environ(environ) == expected


def test_the_text_format_shows_the_request_id_or_a_dash():
    from recovery.logs.logcontext import TextFormatter, request_id_var

    spec = logging_config(log_format="text")["formatters"]["text"]
    formatter = TextFormatter(spec["format"])
    context = ContextFilter()
    record = logging.makeLogRecord({"name": "x", "levelname": "INFO", "msg": "hello"})
    request_id_var.set(None)
    context.filter(record)
    assert formatter.format(record).endswith("INFO x [-] hello")
    token = request_id_var.set("req-1")
    try:
        record = logging.makeLogRecord({"name": "x", "levelname": "INFO", "msg": "hello"})
        context.filter(record)
        assert formatter.format(record).endswith("INFO x [req-1] hello")
    finally:
        request_id_var.reset(token)
