"""gunicorn settings of the console's web server: one file for production (systemd), `manage.py
run_console` and the replay. Each value may be overridden on the command line (--bind, --workers).

    gunicorn -c deploy/gunicorn.conf.py

Environment: GUNICORN_BIND (default 127.0.0.1:8000; put a TLS proxy in front), WEB_CONCURRENCY
(worker processes, default 2), GUNICORN_THREADS (threads per worker, default 4), GUNICORN_TIMEOUT,
FORWARDED_ALLOW_IPS (the proxy's address, trusted for X-Forwarded-*), LOG_FORMAT and LOG_LEVEL
(the same as the console's: gunicorn's own lines use the console's formatter).
"""

import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from recovery.logcontext import log_format_from_environ, logging_config  # noqa: E402

wsgi_app = "console.wsgi:application"
chdir = str(ROOT)
bind = [os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")]
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# Longer than the slowest request (a batch re-check of 500 workflows); the health probes and
# callbacks answer in milliseconds.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
# A clean stop (Ctrl-C, `systemctl stop`) within a few seconds and without a SIGKILL
# (docs/architecture.md, "A clean stop"): a stopping worker answers the requests in flight for up to
# WORKER_STOP_SECONDS, closes its idle kept-alive connections (a browser's; gunicorn keeps them
# at most 2 s more on a graceful stop), then ends by itself even if a thread still waits on a
# client that never finishes sending, before the master's graceful_timeout would SIGKILL it
# and log "Perhaps out of memory?".
graceful_timeout = 6
WORKER_STOP_SECONDS = 4.5
keepalive = 2
# A worker is replaced after this many requests (plus jitter), bounding any slow leak.
max_requests = 5000
max_requests_jitter = 500
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# Access and error lines go through the console's logging (JSON when DEBUG is off), on stderr.
accesslog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
logconfig_dict = logging_config(log_format=log_format_from_environ(), level=os.environ.get("LOG_LEVEL", "INFO").upper(),
                                gunicorn=True)
# gunicorn's runtime control socket is not used; several servers on one host would share its
# default path.
control_socket_disable = True


# Requests this worker is answering (between gunicorn's pre_request and post_request hooks); a
# thread still waiting for a client to send its request is not one.
_in_flight = [0]
_in_flight_lock = threading.Lock()


def pre_request(worker, req):
    with _in_flight_lock:
        _in_flight[0] += 1


def post_request(worker, req, environ, resp):
    with _in_flight_lock:
        _in_flight[0] -= 1


def _end_by_deadline(worker, *, linger: float) -> None:
    """From the first stop signal on, the worker ends as soon as it answers no request (after
    `linger` s at least), and after WORKER_STOP_SECONDS at the latest: gunicorn's own stop answers
    what is in flight and returns, but the interpreter then waits for every request thread, and
    one blocked on a client that connected and never sent (a browser's speculative connection) or
    never finished sending would keep the worker alive until the master's SIGKILL. Lines still
    queued are flushed (bounded) first."""
    if getattr(worker, "_tidy_stopping", False):
        return
    worker._tidy_stopping = True

    # Below the master's graceful timeout also when a command line sets another one (the replay's 3 s).
    limit = min(WORKER_STOP_SECONDS, max(0.5, float(worker.cfg.graceful_timeout) - 1.0))

    def end() -> None:
        started = time.monotonic()
        time.sleep(min(linger, limit))
        while _in_flight[0] > 0 and time.monotonic() - started < limit:
            time.sleep(0.05)
        for handler in logging.getLogger().handlers + logging.getLogger("gunicorn.error").handlers:
            flush = getattr(handler, "flush", None)
            if flush is not None:
                flush()
        os._exit(0)

    threading.Thread(target=end, name="stop-deadline", daemon=True).start()


def worker_int(worker):
    """SIGINT or SIGQUIT (Ctrl-C in a terminal, a quick stop): gunicorn ends the worker at once;
    the requests in flight still get their bounded time."""
    _end_by_deadline(worker, linger=0.3)


def post_fork(server, worker):
    """Until the worker sets its own signal handlers, a stop signal lands in the master's handler,
    copied into the child, which only queues it: keep that queue, so post_worker_init sees a stop
    that came while the worker was booting (Ctrl-C right after a start) instead of the worker
    serving on until the master's SIGKILL."""
    worker._tidy_boot_signals = server.SIG_QUEUE


def post_worker_init(worker):
    """SIGTERM (systemd's stop, the graceful one) has no gunicorn hook: wrap its handler."""
    graceful = worker.handle_exit

    def handle_exit(sig, frame):
        # A graceful stop keeps kept-alive connections 2 s for a request already on its way.
        _end_by_deadline(worker, linger=2.0)
        graceful(sig, frame)

    signal.signal(signal.SIGTERM, handle_exit)
    signal.siginterrupt(signal.SIGTERM, False)  # as gunicorn set it: a stop does not disturb a request

    # Ctrl-C sends SIGINT to every process of the terminal's group, and the master, stopping,
    # sends the workers SIGQUIT: two quick-stop signals at once. gunicorn's handler shuts the
    # thread pool down under a lock that is not reentrant, so the second handler, run inside the
    # first, waited for that lock for ever (the worker then served on until the master's SIGKILL).
    # The second one is ignored: the stop is already under way.
    quick = worker.handle_quit

    def handle_quit(sig, frame):
        if getattr(worker, "_tidy_quitting", False):
            return
        worker._tidy_quitting = True
        _end_by_deadline(worker, linger=0.3)
        quick(sig, frame)

    signal.signal(signal.SIGINT, handle_quit)
    signal.signal(signal.SIGQUIT, handle_quit)
    booting = getattr(worker, "_tidy_boot_signals", None)
    while booting is not None and not booting.empty():
        if booting.get_nowait() in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
            worker.alive = False  # asked to stop while it booted: it serves nothing
            _end_by_deadline(worker, linger=0.3)
