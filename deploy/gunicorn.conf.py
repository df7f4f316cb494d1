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

from recovery.logs.logcontext import log_format_from_environ, logging_config  # noqa: E402

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


STOP_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)


def _end_by_deadline(worker, *, linger: float) -> None:
    """From the first stop signal on, the worker ends as soon as it answers no request (after
    `linger` s at least), and after WORKER_STOP_SECONDS at the latest: gunicorn's own stop answers
    what is in flight and returns, but the interpreter then waits for every request thread, and
    one blocked on a client that connected and never sent (a browser's speculative connection) or
    never finished sending would keep the worker alive until the master's SIGKILL. Lines still
    queued are flushed (bounded) first. Called from signal handlers: it only sets a flag and wakes
    the worker's stop thread (started in post_fork), so a handler never starts a thread (whose
    start takes a lock the interrupted code may hold) and a second signal inside the first
    returns at the flag."""
    if getattr(worker, "_tidy_stopping", False):
        return
    worker._tidy_stopping = True
    worker._tidy_linger = linger
    worker._tidy_stop.set()


def _stop_when_asked(worker) -> None:
    worker._tidy_stop.wait()
    # Below the master's graceful timeout also when a command line sets another one (the replay's 3 s).
    limit = min(WORKER_STOP_SECONDS, max(0.5, float(worker.cfg.graceful_timeout) - 1.0))
    started = time.monotonic()
    time.sleep(min(worker._tidy_linger, limit))
    while _in_flight[0] > 0 and time.monotonic() - started < limit:
        time.sleep(0.05)
    _flush_log_lines()
    os._exit(0)


def _flush_log_lines() -> None:
    for handler in logging.getLogger().handlers + logging.getLogger("gunicorn.error").handlers:
        flush = getattr(handler, "flush", None)
        if flush is not None:
            flush()


def worker_int(worker):
    """SIGINT or SIGQUIT (Ctrl-C in a terminal, a quick stop): gunicorn ends the worker at once;
    the requests in flight still get their bounded time."""
    _end_by_deadline(worker, linger=0.3)


def post_fork(server, worker):
    """A stop signal while the worker boots (Ctrl-C right after a start) must end it cleanly.
    - Until gunicorn sets the worker's handlers, a stop signal lands in the master's handler,
      copied into the child, which only queues it: keep that queue, so post_worker_init sees it.
    - From gunicorn's handlers until post_worker_init, the application is being imported.
      gunicorn's quick-stop handler would raise SystemExit in the middle of whatever import
      runs, and Python turns it into another error in some places (a class body's
      __set_name__ raises RuntimeError): gunicorn then reports "Worker failed to boot" and the
      master exits with 3. Meanwhile a stop signal only asks the stop thread to end the worker.
    docs/architecture.md, "A clean stop"."""
    worker._tidy_boot_signals = server.SIG_QUEUE
    worker._tidy_stop = threading.Event()
    threading.Thread(target=_stop_when_asked, args=(worker,), name="stop-deadline", daemon=True).start()
    gunicorn_init_signals = worker.init_signals

    def init_signals():
        gunicorn_init_signals()

        def stop_while_booting(sig, frame):
            worker.alive = False
            _end_by_deadline(worker, linger=0)

        for sig in STOP_SIGNALS:
            signal.signal(sig, stop_while_booting)
        signal.siginterrupt(signal.SIGTERM, False)  # as gunicorn set it

    worker.init_signals = init_signals


def worker_exit(server, worker):
    """The last word on a worker asked to stop before it booted: whatever its interrupted boot
    raised, the stop is what was asked, so it ends with 0 (gunicorn has logged the error) and the
    master does not take it for a boot failure (exit 3, the whole server halted)."""
    if getattr(worker, "_tidy_stopping", False) and not getattr(worker, "booted", True):
        _flush_log_lines()
        os._exit(0)


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
        if booting.get_nowait() in STOP_SIGNALS:
            worker.alive = False  # asked to stop while it booted: it serves nothing
            _end_by_deadline(worker, linger=0.3)
