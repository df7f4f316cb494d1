"""A clean stop of the web server (docs/architecture.md, "A clean stop"): Ctrl-C (SIGINT to the
process group) and systemd's stop (SIGTERM to every process of the unit) end gunicorn with idle
kept-alive connections and a client that never finishes its request, and no worker is SIGKILLed
(gunicorn would log that as "Perhaps out of memory?"). How long it takes is measured by
bench/console_stop.py, not here."""

import http.client
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from console.replay.processes import free_port
from tests.test_production_config import ROOT, _environment


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
    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"),
                                 "--bind", f"127.0.0.1:{port}"], cwd=tmp_path, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
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
