"""A WSGI application whose import is interrupted by Ctrl-C at the worst place, for
tests/ops/test_clean_stop.py: inside a class body's __set_name__, where Python 3.11 turns an exception
raised by a signal handler (gunicorn's SystemExit) into a RuntimeError, which gunicorn took for a
failed boot."""

import os
import signal
import time


class _Interrupted:
    def __set_name__(self, owner, name):
        os.killpg(os.getpgrp(), signal.SIGINT)  # Ctrl-C: the master and this worker
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # the handlers run here, in the middle of the class body
            time.sleep(0.01)


class _Loading:
    attribute = _Interrupted()


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"loaded"]
