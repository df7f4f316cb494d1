"""Helpers for the WCS callback tests: authenticated posts, table reads, a local HTTP server."""

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.conf import settings
from django.db import connection

from recovery.engine.creation import TidyMove, create_tidy_workflow

TOKEN = settings.WCS_CALLBACK_TOKEN


def post(client, endpoint: str, body, *, token: str | None = TOKEN, **headers):
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client.post(f"/api/wcs/{endpoint}", data=data, content_type="application/json", **headers)


def finish(client, job_id: str, stage: str = "MOVE_FINISHED", **extra):
    return post(client, "job-finish", {"job_id": job_id, "stage": stage, **extra})


def status(client, job_id: str, value: int, **extra):
    return post(client, "job-status", {"job_id": job_id, "status": value, **extra})


# Where a tray's stock is booked; which tray a space holds; how many spaces a workflow locks.
STOCK_LOCATIONS = "SELECT cargo_space_id FROM bas_stock WHERE tray_code = %s"
SPACE_TRAY = "SELECT tray_code FROM bas_cargo_space WHERE cargo_space_id = %s"
LOCK_COUNT = "SELECT count(*) FROM alg.tidy_space_lock WHERE workflow_id = %s"


def rows(sql: str, params=None) -> list[tuple] | int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else cursor.rowcount


def create(wms, n_moves: int = 3, origin: str = "AUTOMATIC", **kw):
    moves = [wms.move() for _ in range(n_moves)]
    created = create_tidy_workflow(origin=origin, moves=[TidyMove(m.tray_code, m.source, m.target) for m in moves],
                                   **kw)
    return created, moves


def stock_locations(tray: str) -> set:
    return {r[0] for r in rows(STOCK_LOCATIONS, [tray])}


def space_tray(space: str):
    found = rows(SPACE_TRAY, [space])
    return found[0][0] if found else "(no such space)"


def lock_count(workflow_id: int) -> int:
    return rows(LOCK_COUNT, [workflow_id])[0][0]


@contextmanager
def local_http_server(handler_for_path: dict):
    """A real HTTP server on 127.0.0.1 (random port). `handler_for_path` maps a path to a
    callable(handler) that writes the answer. Yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            fn = handler_for_path.get(self.path)
            if fn is None:
                self.send_error(404)
                return
            fn(self)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def answer(status: int, body, content_type: str = "application/json"):
    def write(h):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    return write
