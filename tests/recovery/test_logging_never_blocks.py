"""Logging never blocks (docs/architecture.md, "Logging never blocks"): every process logs
through a bounded queue written out by a thread of its own, so a log output that does not keep
up delays no transaction; a full queue drops lines and counts them, and /metrics shows the count
of every process (`tidy_log_records_dropped_total`)."""

import fcntl
import logging
import os
import subprocess
import sys
import threading
import time

import pytest
from django.test import Client

from console.replay.processes import database_url
from recovery.demo.warehouse import BulkSeeder
from recovery.logs import logcontext
from recovery.logs.logcontext import NonBlockingHandler, dropped_log_records
from recovery.logs.logdrops import record_log_drops
from recovery.models import LogDrops, RecoveryCycle, RecoveryDecision
from tests.recovery.test_shards import ROOT, _wait_for

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

F_SETPIPE_SZ = 1031  # Linux: the smallest pipe (one page) fills after a dozen JSON lines
NOT_READ_SECONDS = 30


def _written_out(handler: NonBlockingHandler) -> None:
    """After the reader is gone: the listener has given up on every queued line (so it will not
    write to a file descriptor number the next test reuses)."""
    _wait_for("the listener to give up on its queue", lambda: handler.queue.unfinished_tasks == 0, 10)


def _workflow_locks_of(application_name: str) -> list:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT a.state, l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                       "WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                       "AND a.application_name = %s AND l.relation = 'alg.tidy_workflow'::regclass",
                       [application_name])
        return cursor.fetchall()


def test_a_process_whose_log_output_is_not_read_still_decides_commits_and_releases_its_locks(wms):
    BulkSeeder().seed("missing", 120)  # each needs a decision (a pause) and logs a line for it
    env = {**os.environ, "DATABASE_URL": database_url("tidy-test-unread-log"),
           "DJANGO_SETTINGS_MODULE": "tests.settings",
           "SECRET_KEY": "test-only", "LOG_FORMAT": "json", "LOG_LEVEL": "INFO"}
    env.pop("EMBEDDED_DATABASE_URL", None)
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([sys.executable, "manage.py", "recover", "--once"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=write_end)
    os.close(write_end)
    try:
        # Nobody reads the log output; the cycle still ends and commits every decision.
        _wait_for("every decision committed while the log output is not read",
                  lambda: RecoveryDecision.objects.count() == 120
                  and RecoveryCycle.objects.filter(finished_at__isnull=False).exists(), NOT_READ_SECONDS)
        assert RecoveryCycle.objects.get().outcome == RecoveryCycle.Outcome.SUCCEEDED
        # ... and holds no workflow row lock, nor sits idle in a transaction.
        assert _workflow_locks_of("tidy-test-unread-log") == []
        # The output is stuck for real: more lines waited than the pipe holds.
        assert os.read(read_end, 1) == b"{"
        # It even ends while its output is still not read: the flush at exit is bounded.
        assert proc.wait(timeout=NOT_READ_SECONDS) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(read_end)
    # The lines it could not write before it ended were counted, and reported for /metrics.
    dropped = LogDrops.objects.get()
    assert dropped.dropped > 0 and dropped.process.split(":")[1] == str(proc.pid)


def test_a_full_queue_drops_lines_counts_them_and_never_waits(transactional_db):
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    stuck = os.fdopen(write_end, "w")
    handler = NonBlockingHandler(stream=stuck, lines=5)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("tests.stuck_output")
    log.addHandler(handler)
    log.propagate = False
    before = dropped_log_records()
    try:
        logging_thread = threading.Thread(target=lambda: [log.warning("line %d %s", i, "x" * 200) for i in range(500)])
        logging_thread.start()
        logging_thread.join(NOT_READ_SECONDS)
        assert not logging_thread.is_alive(), "a log call waited for the stuck output"
        # The pipe holds about 20 of these lines and the queue 5: the rest were dropped, and counted.
        assert dropped_log_records() - before >= 400
        logcontext.drops.report()  # what the reporting thread does every few seconds
        assert LogDrops.objects.get(process=logcontext.drops.process).dropped == dropped_log_records()
        body = Client().get("/metrics").content.decode()
        assert f"tidy_log_records_dropped_total {float(dropped_log_records())}" in body
    finally:
        log.removeHandler(handler)
        os.close(read_end)  # the listener's write fails now: the rest is dropped
        _written_out(handler)
        handler.close()
        stuck.close()


def test_dropped_lines_of_every_process_add_up_on_metrics(transactional_db):
    record_log_drops("host-a:11:1", 3)
    record_log_drops("host-b:12:1", 4)
    record_log_drops("host-a:11:1", 5)  # a running total: the newest replaces the older
    assert dict(LogDrops.objects.filter(process__startswith="host-").values_list("process", "dropped")) == {
        "host-a:11:1": 5, "host-b:12:1": 4}
    body = Client().get("/metrics").content.decode()
    assert "# TYPE tidy_log_records_dropped_total counter" in body
    # This test process's own row, if its reporting thread wrote one meanwhile, counts too.
    total = sum(LogDrops.objects.values_list("dropped", flat=True))
    assert total >= 9 and f"tidy_log_records_dropped_total {float(total)}" in body


def test_lines_reach_the_output_in_order_and_a_flush_waits_for_them():
    read_end, write_end = os.pipe()
    out = os.fdopen(write_end, "w")
    handler = NonBlockingHandler(stream=out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log = logging.getLogger("tests.ordered_output")
    log.addHandler(handler)
    log.propagate = False
    try:
        for i in range(50):
            log.info("line %d", i)
        assert handler.flush()
        written = os.read(read_end, 65536).decode().splitlines()
        assert written == [f"INFO line {i}" for i in range(50)]
    finally:
        log.removeHandler(handler)
        handler.close()
        out.close()
        os.close(read_end)


def test_a_forked_child_logs_through_a_queue_of_its_own():
    # gunicorn's and the qcluster's workers are forked after logging was configured: the parent's
    # writer thread does not exist in them.
    read_end, write_end = os.pipe()
    out = os.fdopen(write_end, "w")
    handler = NonBlockingHandler(stream=out)
    handler.setFormatter(logging.Formatter("%(process)d %(message)s"))
    log = logging.getLogger("tests.forked_output")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.info("from the parent")
        assert handler.flush()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                log.info("from the child")
                handler.flush()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        written = os.read(read_end, 65536).decode().splitlines()
        assert written == [f"{os.getpid()} from the parent", f"{pid} from the child"]
    finally:
        log.removeHandler(handler)
        handler.close()
        out.close()
        os.close(read_end)


def test_every_process_is_configured_with_the_non_blocking_handler():
    from django.conf import settings

    assert settings.LOGGING["handlers"]["console"]["class"] == "recovery.logs.logcontext.NonBlockingHandler"
    gunicorn_conf = (ROOT / "deploy" / "gunicorn.conf.py").read_text()
    assert "logconfig_dict = logging_config(" in gunicorn_conf
    assert any(isinstance(h, NonBlockingHandler) for h in logging.getLogger().handlers)


def test_a_stopping_process_waits_for_its_lines_only_so_long():
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    stuck = os.fdopen(write_end, "w")
    handler = NonBlockingHandler(stream=stuck, lines=100)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for i in range(100):
        handler.handle(logging.makeLogRecord({"msg": f"line {i} " + "x" * 200}))
    closing = threading.Thread(target=handler.close)
    started = time.monotonic()
    closing.start()
    closing.join(NOT_READ_SECONDS)
    try:
        assert not closing.is_alive()
        assert time.monotonic() - started < NOT_READ_SECONDS
    finally:
        os.close(read_end)
        _written_out(handler)
        stuck.close()


def test_a_non_blocking_output_still_gets_every_line():
    # Someone set the shared output non-blocking (a terminal another tool changed): a full pipe
    # answers EAGAIN instead of waiting, and the writer waits for room instead of losing lines.
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
    os.set_blocking(write_end, False)
    out = os.fdopen(write_end, "w")
    handler = NonBlockingHandler(stream=out)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("tests.non_blocking_output")
    log.addHandler(handler)
    log.propagate = False
    received = bytearray()
    try:
        for i in range(100):
            log.info("line %03d %s", i, "y" * 100)
        while len(received) < 100 * 110:
            received += os.read(read_end, 65536)
        assert handler.flush()
        assert received.decode().splitlines() == [f"line {i:03d} {'y' * 100}" for i in range(100)]
    finally:
        log.removeHandler(handler)
        handler.close()
        out.close()
        os.close(read_end)
