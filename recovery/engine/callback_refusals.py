"""Callbacks refused before they are read: counted so operations see them (every
refused callback is visible), without trusting or storing anything the sender wrote."""

import ipaddress
import logging

from django.db import DatabaseError, connection

from recovery.engine import wms_sql

log = logging.getLogger("recovery.callback_refusals")  # the logger's name as log readers know it

UNAUTHORIZED_MESSAGE = "refused: missing or wrong bearer token (requests in this minute: request_count)"


def _ip_or_none(remote_addr: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address((remote_addr or "").strip()))
    except ValueError:  # a unix socket, or a proxy that passes something else
        return None


def unauthorized_callback_record(*, endpoint: str, remote_addr: str | None) -> None:
    """Count one 401 for `endpoint` in the current minute's UNAUTHORIZED receipt. A database
    failure is logged and swallowed: the sender gets its 401 whatever the journal can do."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(wms_sql.COUNT_UNAUTHORIZED_CALLBACK, {
                "endpoint": endpoint, "remote_addr": _ip_or_none(remote_addr), "message": UNAUTHORIZED_MESSAGE})
    except DatabaseError:
        log.exception("could not count an unauthorized %s callback", endpoint)
