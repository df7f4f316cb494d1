"""A WSGI application whose answer takes 1.5 s, for tests/ops/test_clean_stop.py: a request in flight
while gunicorn is told to stop."""

import time


def application(environ, start_response):
    time.sleep(1.5)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"answered in full"]
