"""How long Ctrl-C takes to stop `scripts/run`, over several tries.

Each try starts `scripts/run` (web server, qcluster, demo WCS simulator on the embedded
database) in a process group of its own, as a terminal runs it, waits until it serves, opens a
few kept-alive HTTP connections (a browser's) and one request that is still being sent, then
sends SIGINT to the group (what Ctrl-C does) and measures until the launcher has exited. It also
looks for a SIGKILL line in the output.

    .venv/bin/python bench/console_stop.py --tries 5 --port 8731 [--signal TERM]

Measured this way, not by timed assertions in the suite (the machine is shared and noisy).
"""

import argparse
import http.client
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _serving(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/health/live")
        return conn.getresponse().status == 200
    except OSError:
        return False


def one_try(port: int, warm_seconds: float, signum: int = signal.SIGINT,
            unfinished: bool = True) -> tuple[float, bool, str]:
    log = tempfile.NamedTemporaryFile(prefix="tidy-stop-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(["scripts/run", "--port", str(port)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 180
    while not _serving(port):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(f"the console did not start; see {log.name}")
        time.sleep(0.5)
    time.sleep(warm_seconds)  # let the qcluster start its runner and the simulator send traffic
    kept = []
    for _ in range(3):  # idle kept-alive connections, as a browser leaves them
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/health/live")
        conn.getresponse().read()
        kept.append(conn)
    partial = socket.create_connection(("127.0.0.1", port))  # a request still being sent
    if unfinished:
        partial.sendall(b"GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    started = time.monotonic()
    os.killpg(proc.pid, signum)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    took = time.monotonic() - started
    for conn in kept:
        conn.close()
    partial.close()
    output = Path(log.name).read_text(errors="replace")
    return took, "SIGKILL" in output or "did not stop" in output, log.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--warm-seconds", type=float, default=8.0)
    parser.add_argument("--signal", choices=("INT", "TERM"), default="INT",
                        help="INT: Ctrl-C in a terminal; TERM: systemd's stop")
    parser.add_argument("--no-unfinished-request", action="store_true",
                        help="leave out the client that never finishes its request (it costs the worker's 4.5 s)")
    args = parser.parse_args()
    times = []
    for n in range(args.tries):
        # Different phases of the recovery schedule.
        took, killed, log = one_try(args.port, args.warm_seconds + n * 3.3, getattr(signal, f"SIG{args.signal}"),
                                    unfinished=not args.no_unfinished_request)
        times.append(took)
        print(f"try {n + 1}: stopped in {took:.1f} s{'  SIGKILL line!' if killed else ''}  ({log})", flush=True)
    print(f"median {statistics.median(times):.1f} s, max {max(times):.1f} s over {len(times)} tries")
    sys.exit(0)


if __name__ == "__main__":
    main()
