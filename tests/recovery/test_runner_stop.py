"""A signalled recovery runner finishes the cycle in hand and returns at once, instead of living
out its minute while the qcluster that asked it to stop waits (docs/architecture.md §7)."""

import os
import signal
import time

import pytest

from recovery.demo.warehouse import BulkSeeder
from recovery.models import RecoveryCycle
from recovery.runtime.tasks import StopRequest
from tests.recovery.test_shards import _start_runner, _wait_for

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

LIFE = 120.0  # far longer than the test waits: a runner that ignored the signal would time it out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_runner_ends_its_cycle_and_returns(wms, tmp_path, signum):
    BulkSeeder().seed("healthy", 300)
    runner = _start_runner(tmp_path, 0, LIFE, shards=1)
    try:
        _wait_for("a first cycle", lambda: RecoveryCycle.objects.filter(finished_at__isnull=False).exists(), 60)
        runner.send_signal(signum)
        returncode = runner.wait(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
    output = (tmp_path / "runner-0.log").read_text()
    assert returncode == 0, output
    assert "'stopped': True" in output and "'skipped': False" in output, output
    # Every cycle it started it also finished and recorded: none is left running.
    assert not RecoveryCycle.objects.filter(outcome=RecoveryCycle.Outcome.RUNNING).exists()
    assert "Traceback" not in output


def test_a_second_signal_gets_the_process_s_own_handling_at_once():
    # In this process (the main thread, as in a qcluster worker): the first SIGTERM only asks the
    # runner to stop; the second goes to whatever handled SIGTERM before the runner watched.
    received = []
    original = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        with StopRequest().watching() as stop:
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop.requested and received == []
            os.kill(os.getpid(), signal.SIGTERM)
            assert received == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is not stop._handle
        os.kill(os.getpid(), signal.SIGTERM)
        assert received == [signal.SIGTERM, signal.SIGTERM]  # the process's handler is back
    finally:
        signal.signal(signal.SIGTERM, original)


def test_the_stop_request_wakes_a_sleeping_runner():
    stop = StopRequest()
    stop.requested = True
    started = time.monotonic()
    stop.sleep(30)
    assert time.monotonic() - started < 5
