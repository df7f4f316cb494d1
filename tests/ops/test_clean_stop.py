"""A clean stop of the web server (docs/architecture.md, "A clean stop"): Ctrl-C (SIGINT to the
process group) and systemd's stop (SIGTERM to every process of the unit) end gunicorn with idle
kept-alive connections and a client that never finishes its request, and no worker is SIGKILLed
(gunicorn would log that as "Perhaps out of memory?"). How long it takes is measured by
bench/console_stop.py, not here."""

import http.client
import os
import signal
import socket
import sys
import threading
import time

import pytest

from tests.ops.test_production_config import ROOT, _environment, start_gunicorn


def _gunicorn_conf() -> dict:
    path = ROOT / "deploy" / "gunicorn.conf.py"
    values: dict = {"__file__": str(path)}
    exec(path.read_text(), values)  # noqa: S102 - our own settings file
    return values


def test_a_stopping_worker_ends_by_itself_before_the_master_would_kill_it():
    conf = _gunicorn_conf()
    assert conf["WORKER_STOP_SECONDS"] < conf["graceful_timeout"] <= 8
    assert conf["keepalive"] <= conf["WORKER_STOP_SECONDS"]
    assert callable(conf["worker_int"]) and callable(conf["post_worker_init"])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "systemd-stop"])
def test_the_web_server_stops_without_a_sigkill_with_idle_and_unfinished_connections(django_db_setup, tmp_path,
                                                                                      signum):
    env = {**_environment(tmp_path / "static"), "STATIC_MANIFEST": "false", "LOG_FORMAT": "text"}
    proc, port, log_path = start_gunicorn(tmp_path, env)
    opened = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/health/live")
                assert conn.getresponse().read()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.2)
        opened.append(conn)  # kept alive, idle: a browser's
        for _ in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/health/live")
            conn.getresponse().read()
            opened.append(conn)
        partial = socket.create_connection(("127.0.0.1", port))  # a client that never finishes its request
        partial.sendall(b"GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        opened.append(partial)
        time.sleep(0.5)  # the worker thread is reading it
        started = time.monotonic()
        os.killpg(proc.pid, signum)
        returncode = proc.wait(timeout=60)
        print(f"gunicorn stopped {time.monotonic() - started:.1f} s after {signal.Signals(signum).name}")
    finally:
        for conn in opened:
            conn.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = log_path.read_text()
    assert returncode == 0, output
    assert "SIGKILL" not in output and "Perhaps out of memory" not in output, output
    assert "Shutting down: Master" in output


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "systemd-stop"])
def test_a_request_in_flight_is_answered_in_full_before_the_worker_ends(tmp_path, signum):
    env = {**_environment(tmp_path / "static"), "STATIC_MANIFEST": "false", "LOG_FORMAT": "text",
           "PYTHONPATH": str(ROOT)}
    proc, port, log_path = start_gunicorn(tmp_path, env, "--workers", "1", "tests.slow_wsgi:application")
    answers = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.2)

        def ask():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            conn.request("GET", "/slow")
            response = conn.getresponse()
            answers.append((response.status, response.read()))

        asking = threading.Thread(target=ask)
        asking.start()
        time.sleep(0.5)  # the request is being answered
        os.killpg(proc.pid, signum)
        asking.join(30)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert answers == [(200, b"answered in full")], log_path.read_text()
    assert "SIGKILL" not in log_path.read_text()


def _stop_during_boot(tmp_path, *, delay: float, app: list[str], env: dict) -> tuple[int, str]:
    proc, _, log_path = start_gunicorn(tmp_path, env, *app)
    try:
        deadline = time.monotonic() + 60
        while "Booting worker" not in log_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.02)
        if delay is not None:
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGINT)
        returncode = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return returncode, log_path.read_text()


@pytest.mark.parametrize("delay", [0.0, 0.15, 0.4])
def test_a_stop_while_the_workers_boot_is_clean_too(django_db_setup, tmp_path, delay):
    # Ctrl-C right after a start: the workers are still loading the application (Django's setup
    # and the console's imports take about a second; each delay lands at another place of it).
    env = {**_environment(tmp_path / "static"), "STATIC_MANIFEST": "false", "LOG_FORMAT": "text"}
    returncode, output = _stop_during_boot(tmp_path, delay=delay, app=[], env=env)
    assert returncode == 0, output
    assert "SIGKILL" not in output and "Worker failed to boot" not in output, output


def test_a_ctrl_c_inside_a_class_body_being_imported_is_a_clean_stop(tmp_path):
    # The import this Ctrl-C interrupts (tests/interrupted_wsgi.py) is where gunicorn's handler
    # turned a stop into "Worker failed to boot" and exit code 3.
    env = {**_environment(tmp_path / "static"), "STATIC_MANIFEST": "false", "LOG_FORMAT": "text",
           "PYTHONPATH": str(ROOT)}
    returncode, output = _stop_during_boot(tmp_path, delay=None, env=env,
                                           app=["--workers", "1", "tests.interrupted_wsgi:application"])
    assert returncode == 0, output
    assert "Worker failed to boot" not in output and "Exception in worker process" not in output, output
    assert "Shutting down: Master" in output


@pytest.fixture
def hooks():
    """The settings file's hooks, with the stop itself recorded instead of run (each linger asked
    for goes to `hooks["ended"]`), and the test process's signal handlers restored afterwards."""
    conf = _gunicorn_conf()
    conf["ended"] = ended = []
    conf["_end_by_deadline"] = lambda worker, *, linger: ended.append(linger)
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)}
    yield conf
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def test_a_stop_signal_while_the_application_loads_only_asks_the_stop_thread(hooks):
    conf, ended = hooks, hooks["ended"]
    initialised = []

    class Worker:
        alive = True
        booted = False

        def init_signals(self):
            initialised.append(True)
            signal.signal(signal.SIGINT, lambda sig, frame: sys.exit(0))  # gunicorn's quick stop

    class Master:
        SIG_QUEUE = None

    worker = Worker()
    conf["post_fork"](Master(), worker)
    worker.init_signals()
    assert initialised == [True]  # gunicorn's own set-up still runs
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
        signal.getsignal(sig)(sig, None)  # no SystemExit in the middle of an import
    assert not worker.alive and ended == [0, 0, 0]


def test_a_stop_signal_that_came_while_the_worker_booted_stops_it_once_booted(hooks):
    # Before the worker sets its own handlers a signal lands in the master's handler (copied into
    # the child), which only queues it: the worker must still stop instead of serving on until
    # the master SIGKILLs it.
    import queue

    conf, ended = hooks, hooks["ended"]

    class Worker:
        alive = True

        def init_signals(self):
            pass

        def handle_exit(self, sig, frame):
            pass

        def handle_quit(self, sig, frame):
            pass

    class Master:
        SIG_QUEUE = queue.SimpleQueue()

    booted = Worker()
    conf["post_fork"](Master(), booted)
    conf["post_worker_init"](booted)
    assert booted.alive and ended == []  # nothing came: it serves
    stopped = Worker()
    master = Master()
    master.SIG_QUEUE = queue.SimpleQueue()
    conf["post_fork"](master, stopped)
    master.SIG_QUEUE.put_nowait(signal.SIGINT)  # Ctrl-C while it booted
    conf["post_worker_init"](stopped)
    assert not stopped.alive and ended == [0.3]


def test_a_second_quick_stop_signal_inside_the_first_is_ignored(hooks):
    # Ctrl-C reaches the worker (SIGINT to the terminal's group) and the stopping master sends it
    # SIGQUIT: gunicorn's handler, run again inside itself, waited for ever on its own lock.
    conf, ended = hooks, hooks["ended"]
    quits = []

    class Worker:
        alive = True

        def handle_exit(self, sig, frame):
            pass

        def handle_quit(self, sig, frame):
            quits.append(sig)
            signal.getsignal(signal.SIGQUIT)(signal.SIGQUIT, None)  # the master's SIGQUIT lands meanwhile

    conf["post_worker_init"](Worker())
    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
    assert quits == [signal.SIGINT] and ended == [0.3]
