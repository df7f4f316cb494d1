"""Parsing the WCS callback bodies into the core's typed requests (recovery.callbacks).

A malformed body raises BadCallback naming the field at fault; the view answers 400 and records
the request as a refused receipt, and nothing else changes.
"""

import json
from typing import Any

from recovery.callbacks import (
    FINISH_STAGES,
    MAX_TEXT,
    REPORTABLE_JOB_STATUSES,
    JobFinishRequest,
    JobStatusRequest,
)


class BadCallback(Exception):
    """A malformed callback request (400), naming the field at fault."""

    def __init__(self, field_name: str | None, message: str, *, payload: Any = None):
        super().__init__(message)
        self.field = field_name
        self.message = message
        self.payload = payload


def _decode(body: bytes) -> dict:
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadCallback(None, "the body is not UTF-8 text", payload={"raw": body[:500].hex()}) from exc
    except json.JSONDecodeError as exc:
        raise BadCallback(None, f"the body is not valid JSON ({exc.msg} at position {exc.pos})",
                          payload={"raw": body[:2000].decode("utf-8", "replace")}) from exc
    if not isinstance(data, dict):
        raise BadCallback(None, "the body must be a JSON object", payload={"raw": data})
    return data


def _text_field(data: dict, name: str, *, required: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise BadCallback(name, f"missing field '{name}'", payload=data)
        return None
    if isinstance(value, int) and not isinstance(value, bool) and name == "event_id":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise BadCallback(name, f"field '{name}' must be a non-empty string", payload=data)
    if len(value) > MAX_TEXT:
        raise BadCallback(name, f"field '{name}' is longer than {MAX_TEXT} characters", payload=data)
    return value


def parse_job_finish(body: bytes) -> JobFinishRequest:
    data = _decode(body)
    job_id = _text_field(data, "job_id", required=True)
    stage = _text_field(data, "stage", required=True)
    if stage not in FINISH_STAGES:
        raise BadCallback("stage", f"unknown stage {stage!r}: expected one of {', '.join(FINISH_STAGES)}",
                          payload=data)
    event_id = _text_field(data, "event_id", required=False)
    return JobFinishRequest(job_id, stage, event_id, data)


def parse_job_status(body: bytes) -> JobStatusRequest:
    data = _decode(body)
    job_id = _text_field(data, "job_id", required=True)
    if "status" not in data or data["status"] is None:
        raise BadCallback("status", "missing field 'status'", payload=data)
    status = data["status"]
    if isinstance(status, bool) or not isinstance(status, int) or status not in REPORTABLE_JOB_STATUSES:
        raise BadCallback("status", f"field 'status' must be 2 (dispatched) or 3 (executing), got {status!r}",
                          payload=data)
    event_id = _text_field(data, "event_id", required=False)
    return JobStatusRequest(job_id, status, event_id, data)
