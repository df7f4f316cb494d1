"""Every request has an id: the caller's `X-Request-ID` when it is safe to keep, else a new one.

It is returned on the response and bound to the log context (recovery.logs.logcontext), so every log
line of the request carries it and a proxy's or WCS's id can be followed into our logs.
"""

import re
import uuid

from django.core.signals import request_finished
from django.dispatch import receiver

from recovery.logs.logcontext import request_id_var

HEADER = "X-Request-ID"
# Bounded and plain: an id is copied into logs and headers, so nothing that could forge a log
# line or a header (newlines, quotes, spaces) is kept.
SAFE_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")


def request_id_from(value: str | None) -> str:
    if value and SAFE_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = request_id_from(request.headers.get(HEADER))
        request.request_id = request_id
        # Not reset when this returns: Django logs a 4xx/5xx (django.request) and gunicorn its
        # access line after the middleware, in the same thread, and they carry the id too. It is
        # cleared when the response is closed (request_finished, below).
        request_id_var.set(request_id)
        response = self.get_response(request)
        response[HEADER] = request_id
        return response


@receiver(request_finished)
def forget_request_id(sender, **kwargs):
    request_id_var.set(None)
