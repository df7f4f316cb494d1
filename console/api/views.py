"""The WCS machine client's endpoints (thin: authenticate, parse, call one service, answer JSON).

POST /api/wcs/job-finish  {"job_id": "TDY-<w>-<s>", "stage": "MOVE_FINISHED" | "OUTBOUND_FINISHED",
                           "event_id": "...", "tray_code": "...", "location": "...", "sequence": n (optional)}
POST /api/wcs/job-status  {"job_id": "TDY-<w>-<s>", "status": 2 | 3, "event_id": "...", "sequence": n (optional)}

Other top-level fields are ignored and counted (console/api/parsing.py, the tolerant reader).

Both need `Authorization: Bearer <WCS_CALLBACK_TOKEN>`. Answers: 200 (applied, or a duplicate
that moved nothing) with the workflow's resulting state; 409 refused (paused workflow, evidence
that does not allow it, a backwards status; REPORT_MISMATCH: another tray or place than the
step's); 200 STALE_REPORT for a status whose sequence is not newer than the job's highest;
404 unknown job; 400 malformed (names the field); 401 bad or missing token; 405 other methods;
413 a body over 64 KiB; 415 a body not sent as
application/json; 503 busy or database failure (nothing changed, retry). The published contract
is docs/wcs-api.openapi.json (served at /api/wcs/openapi.json). Every authenticated request is
recorded as a CallbackReceipt; a 401 is counted in one UNAUTHORIZED receipt per endpoint and minute.
"""

import hmac
import time

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from console.api.parsing import BadCallback, parse_job_finish, parse_job_status
from console.input_checks import MAX_JSON_BODY_BYTES, printable_excerpt
from recovery.engine import callback_refusals
from recovery.engine.callbacks import bad_request_record, job_finish_process, job_status_process
from recovery.models import CallbackReceipt


def _authorized(request) -> bool:
    expected = settings.WCS_CALLBACK_TOKEN
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if not expected or scheme.lower() != "bearer" or not token.strip():
        return False
    return hmac.compare_digest(token.strip().encode(), expected.encode())


def _json_body(request) -> bytes:
    """The body, refused before it is read when it is not JSON (415) or larger than the limit (413)."""
    if request.content_type != "application/json":
        raise BadCallback("Content-Type", f"the body must be sent as application/json, not "
                                          f"{printable_excerpt(request.content_type or 'nothing', 80)}", status=415)
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_JSON_BODY_BYTES:
        raise BadCallback(None, f"the body is larger than {MAX_JSON_BODY_BYTES} bytes", status=413)
    try:
        return request.body
    except RequestDataTooBig:
        raise BadCallback(None, f"the body is larger than {MAX_JSON_BODY_BYTES} bytes", status=413) from None


def _callback(request, *, endpoint: str, parse, process) -> JsonResponse:
    if request.method != "POST":
        response = JsonResponse(
            {"error": "method_not_allowed", "message": f"{request.method} is not allowed; use POST"}, status=405)
        response["Allow"] = "POST"
        return response
    if not _authorized(request):
        callback_refusals.unauthorized_callback_record(endpoint=endpoint, remote_addr=request.META.get("REMOTE_ADDR"))
        response = JsonResponse({"error": "unauthorized",
                                 "message": "a valid 'Authorization: Bearer <WCS_CALLBACK_TOKEN>' header is required"},
                                status=401)
        response["WWW-Authenticate"] = 'Bearer realm="wcs"'
        return response
    started = time.perf_counter()
    try:
        parsed = parse(_json_body(request))
    except BadCallback as exc:
        bad_request_record(endpoint=endpoint, field_name=exc.field, message=exc.message, payload=exc.payload,
                           started=started, http_status=exc.status, **exc.receipt_kw())
        error = {400: "bad_request", 413: "payload_too_large", 415: "unsupported_media_type"}[exc.status]
        return JsonResponse({"error": error, "field": exc.field, "message": exc.message}, status=exc.status)
    result = process(request=parsed)
    response = JsonResponse(result.body(), status=result.http_status)
    if result.http_status == 503:
        response["Retry-After"] = "1"
    return response


@csrf_exempt
def job_finish(request):
    return _callback(request, endpoint=CallbackReceipt.Endpoint.JOB_FINISH, parse=parse_job_finish,
                     process=job_finish_process)


@csrf_exempt
def job_status(request):
    return _callback(request, endpoint=CallbackReceipt.Endpoint.JOB_STATUS, parse=parse_job_status,
                     process=job_status_process)
