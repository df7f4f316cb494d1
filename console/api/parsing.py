"""Parsing the WCS callback bodies into the core's typed requests (recovery.callbacks).

The rules are the published contract (docs/wcs-api.openapi.json); the checks themselves are the
console's one set of hostile-input checks (console/input_checks.py). A refused body raises
BadCallback naming the field at fault (None: the body as a whole) with the HTTP status to answer
(400, or 413 for a body over the size limit); the view records the request as a refused receipt,
and nothing else changes. What a receipt keeps of a refused body is always storable text.
"""

import re
from typing import Any

from console.input_checks import (
    BIGINT_MAX,
    MAX_JSON_BODY_BYTES,
    InputRefused,
    load_json_object,
    printable_excerpt,
    safe_text,
    unsafe_character,
)
from recovery.callbacks import (
    FINISH_STAGES,
    MAX_TEXT,
    REPORTABLE_JOB_STATUSES,
    JobFinishRequest,
    JobStatusRequest,
)
from recovery.errors import Refused

# WCS's own id of a report: visible ASCII, no space at either end (the contract's EventId).
EVENT_ID_RE = re.compile(r"[!-~](?:[ -~]{0,198}[!-~])?")
FINISH_FIELDS = ("job_id", "stage", "event_id")
STATUS_FIELDS = ("job_id", "status", "event_id")


class BadCallback(Refused):
    """A refused callback request, naming the field at fault; `status` is 400 or 413."""

    def __init__(self, field_name: str | None, message: str, *, payload: Any = None, status: int = 400):
        super().__init__(message)
        self.field = field_name
        self.message = message
        self.payload = payload
        self.status = status


def _decode(body: bytes, allowed: tuple[str, ...]) -> dict:
    try:
        data = load_json_object(body, max_bytes=MAX_JSON_BODY_BYTES)
    except InputRefused as exc:
        raise BadCallback(exc.field, exc.message, status=exc.status,
                          payload={"raw": printable_excerpt(body)}) from None
    for name in data:
        if name not in allowed:
            raise BadCallback(name[:64], f"unknown field '{name[:64]}': expected only {', '.join(allowed)}",
                              payload=data)
    return data


def _text_field(data: dict, name: str, *, required: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise BadCallback(name, f"missing field '{name}'", payload=data)
        return None
    try:
        return safe_text(value, field=name, max_length=MAX_TEXT)
    except InputRefused as exc:
        raise BadCallback(name, exc.message, payload=data) from None


def _event_id(data: dict) -> str | None:
    if "event_id" not in data:
        return None
    value = data["event_id"]
    if value is None:
        raise BadCallback("event_id", "field 'event_id' must be a string or a number; leave it out when there "
                                      "is none", payload=data)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= BIGINT_MAX:
            raise BadCallback("event_id", f"field 'event_id' as a number must be between 0 and {BIGINT_MAX}",
                              payload=data)
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise BadCallback("event_id", "field 'event_id' must be a non-empty string", payload=data)
    if len(value) > MAX_TEXT:
        raise BadCallback("event_id", f"field 'event_id' is longer than {MAX_TEXT} characters", payload=data)
    bad = unsafe_character(value)
    if bad:
        raise BadCallback("event_id", f"field 'event_id' contains {bad}", payload=data)
    if not EVENT_ID_RE.fullmatch(value):
        raise BadCallback("event_id", "field 'event_id' must be visible ASCII characters (spaces only inside)",
                          payload=data)
    return value


def parse_job_finish(body: bytes) -> JobFinishRequest:
    data = _decode(body, FINISH_FIELDS)
    job_id = _text_field(data, "job_id", required=True)
    stage = _text_field(data, "stage", required=True)
    if stage not in FINISH_STAGES:
        raise BadCallback("stage", f"unknown stage {stage[:64]!r}: expected one of {', '.join(FINISH_STAGES)}",
                          payload=data)
    event_id = _event_id(data)
    return JobFinishRequest(job_id, stage, event_id, data)


def parse_job_status(body: bytes) -> JobStatusRequest:
    data = _decode(body, STATUS_FIELDS)
    job_id = _text_field(data, "job_id", required=True)
    if "status" not in data or data["status"] is None:
        raise BadCallback("status", "missing field 'status'", payload=data)
    status = data["status"]
    if isinstance(status, bool) or not isinstance(status, int) or status not in REPORTABLE_JOB_STATUSES:
        raise BadCallback("status", f"field 'status' must be 2 (dispatched) or 3 (executing), "
                                    f"got {str(status)[:40]}", payload=data)
    event_id = _event_id(data)
    return JobStatusRequest(job_id, status, event_id, data)
