"""Parsing the WCS callback bodies into the core's typed requests (recovery.engine.callbacks).

The rules are the published contract (docs/wcs-api.openapi.json); the checks themselves are the
console's one set of hostile-input checks (console/input_checks.py). A refused body raises
BadCallback naming the field at fault (None: the body as a whole) with the HTTP status to answer
(400, or 413 for a body over the size limit); the view records the request as a refused receipt,
and nothing else changes. What a receipt keeps of a refused body is always storable text.

The reader is tolerant (docs/architecture.md §8 "Tolerant reader"): a top-level field the
contract does not name is ignored, so a WCS release that adds one does not stop the floor. It
is left out of the request (and of what the receipt keeps as the body: never evidence), counted
under its label, named on the receipt (console/api/unknown_fields.py) and logged once per name per
process. A field name that is itself hostile (control characters, line separators, bidi
controls) is still refused by the document checks, and so is a number no double holds (`1e400`)
in a known field, naming it.
"""

import re
from typing import Any

from console.api.unknown_fields import UnknownFields, unknown_fields_record
from console.input_checks import (
    BIGINT_MAX,
    MAX_JSON_BODY_BYTES,
    InputRefused,
    line_or_bidi_character,
    load_json_object,
    printable_excerpt,
    safe_text,
    unsafe_character,
)
from recovery.engine.callbacks import (
    FINISH_STAGES,
    MAX_TEXT,
    REPORTABLE_JOB_STATUSES,
    JobFinishRequest,
    JobStatusRequest,
)
from recovery.errors import Refused

# WCS's own id of a report: visible ASCII, no space at either end (the contract's EventId).
EVENT_ID_RE = re.compile(r"[!-~](?:[ -~]{0,198}[!-~])?")
FINISH_FIELDS = frozenset(("job_id", "stage", "event_id", "tray_code", "location", "sequence"))
STATUS_FIELDS = frozenset(("job_id", "status", "event_id", "sequence"))


class BadCallback(Refused):
    """A refused callback request, naming the field at fault; `status` is 400 or 413."""

    def __init__(self, field_name: str | None, message: str, *, payload: Any = None, status: int = 400,
                 unknown: UnknownFields | None = None):
        super().__init__(message)
        self.field = field_name
        self.message = message
        self.payload = payload
        self.status = status
        self.unknown = unknown

    def receipt_kw(self) -> dict:
        """The unknown fields' part of the refused request's receipt."""
        return self.unknown.receipt_kw() if self.unknown is not None else {}


class _Body(dict):
    """The known fields of a callback body; `unknown` what the receipt keeps of the fields it left out."""

    unknown: UnknownFields | None = None

    def unknown_kw(self) -> dict:
        return self.unknown.receipt_kw() if self.unknown is not None else {}


def _decode(body: bytes, allowed: frozenset[str], endpoint: str) -> _Body:
    try:
        data = load_json_object(body, max_bytes=MAX_JSON_BODY_BYTES, known=allowed)
    except InputRefused as exc:
        raise BadCallback(exc.field, exc.message, status=exc.status,
                          payload={"raw": printable_excerpt(body)}) from None
    known = _Body(data)
    if not allowed.issuperset(data):
        # Only a body with unknown fields pays for them: the usual one does this one set test.
        unknown = [name for name in data if name not in allowed]
        for name in unknown:
            del known[name]
        known.unknown = unknown_fields_record(endpoint, unknown)
    return known


def _refuse(data: _Body, field_name: str | None, message: str) -> BadCallback:
    return BadCallback(field_name, message, payload=dict(data), unknown=data.unknown)


def _text_field(data: dict, name: str, *, required: bool, one_line: bool = False) -> str | None:
    """A text field; `one_line`: a code that reaches logs and pages as it is (tray_code,
    location), so line breaks and separators and bidi controls are refused too."""
    value = data.get(name)
    if value is None:
        if required:
            raise _refuse(data, name, f"missing field '{name}'")
        if name in data:
            raise _refuse(data, name, f"field '{name}' must be a string; leave it out when there is none")
        return None
    try:
        text = safe_text(value, field=name, max_length=MAX_TEXT)
    except InputRefused as exc:
        raise _refuse(data, name, exc.message) from None
    bad = line_or_bidi_character(text) if one_line else None
    if bad:
        refused = _refuse(data, name, f"field '{name}' contains {bad}")
        # The receipt keeps it escaped: shown anywhere, it breaks no line and reorders nothing.
        refused.payload[name] = printable_excerpt(text)
        raise refused
    return text


def _whole(value: Any) -> Any:
    """A JSON number with no fraction as an int (JSON Schema's integer includes 7.0, as the published
    OpenAPI 3.1 document does); any other value unchanged, for the caller's own check."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _sequence(data: _Body) -> int | None:
    """The WCS's sequence of its reports about one job: a whole number from 0 to bigint's maximum."""
    if "sequence" not in data:
        return None
    value = _whole(data["sequence"])
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= BIGINT_MAX:
        raise _refuse(data, "sequence", f"field 'sequence' must be a whole number between 0 and {BIGINT_MAX}; "
                                        "leave it out when there is none")
    return value


def _event_id(data: dict) -> str | None:
    if "event_id" not in data:
        return None
    value = _whole(data["event_id"])
    if value is None:
        raise _refuse(data, "event_id", "field 'event_id' must be a string or a number; leave it out when there "
                                      "is none")
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= BIGINT_MAX:
            raise _refuse(data, "event_id", f"field 'event_id' as a number must be between 0 and {BIGINT_MAX}")
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise _refuse(data, "event_id", "field 'event_id' must be a non-empty string")
    if len(value) > MAX_TEXT:
        raise _refuse(data, "event_id", f"field 'event_id' is longer than {MAX_TEXT} characters")
    bad = unsafe_character(value)
    if bad:
        raise _refuse(data, "event_id", f"field 'event_id' contains {bad}")
    if not EVENT_ID_RE.fullmatch(value):
        raise _refuse(data, "event_id", "field 'event_id' must be visible ASCII characters (spaces only inside)")
    return value


def parse_job_finish(body: bytes) -> JobFinishRequest:
    data = _decode(body, FINISH_FIELDS, "job-finish")
    job_id = _text_field(data, "job_id", required=True)
    stage = _text_field(data, "stage", required=True)
    if stage not in FINISH_STAGES:
        raise _refuse(data, "stage", f"unknown stage {stage[:64]!r}: expected one of {', '.join(FINISH_STAGES)}")
    event_id = _event_id(data)
    tray_code = _text_field(data, "tray_code", required=False, one_line=True)
    location = _text_field(data, "location", required=False, one_line=True)
    return JobFinishRequest(job_id, stage, event_id, dict(data), tray_code=tray_code, location=location,
                            sequence=_sequence(data), **data.unknown_kw())


def parse_job_status(body: bytes) -> JobStatusRequest:
    data = _decode(body, STATUS_FIELDS, "job-status")
    job_id = _text_field(data, "job_id", required=True)
    if "status" not in data or data["status"] is None:
        raise _refuse(data, "status", "missing field 'status'")
    status = data["status"]  # 2.0 is refused: the status is a code, not a quantity
    if isinstance(status, bool) or not isinstance(status, int) or status not in REPORTABLE_JOB_STATUSES:
        raise _refuse(data, "status", f"field 'status' must be 2 (dispatched) or 3 (executing), "
                                    f"got {str(status)[:40]}")
    event_id = _event_id(data)
    return JobStatusRequest(job_id, status, event_id, dict(data), sequence=_sequence(data), **data.unknown_kw())
